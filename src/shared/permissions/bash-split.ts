/**
 * Split a Bash command line into the simple commands it runs, so a permission rule is checked
 * against each of them: `safe && rm x` is two commands, `echo $(rm x)` is two, `(rm x)` is one.
 * Pure and conservative: what it cannot analyse is marked (`problem` / `opaque`), and the rule
 * evaluator treats that as "cannot tell" — never allowed by a Bash(...) rule, caught by deny rules.
 */
import { commandStart, FD_PREFIX, innerScript, REDIRECTIONS, Unanalysable, type BashWord } from './bash-words';
import { readHeredocBodies, readHeredocOperator, type Heredoc } from './bash-heredoc';

interface BashPart {
  /** Source text of one simple command, leading keywords (`if`, `then`, `do`, `!`, `{`…) removed. */
  text: string;
  words: BashWord[];
  /** Why we cannot tell what this part runs (e.g. its command name is computed at run time). */
  opaque?: string;
}

export interface BashSplit {
  parts: BashPart[];
  /** Set when the line as a whole could not be analysed; `parts` then holds what was found before. */
  problem?: string;
}

const MAX_DEPTH = 12;
/** Reserved words that may precede a command; the command after them is what runs. */
const LEADING_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'fi', 'done', 'esac', '}']);
/** Constructs whose structure we do not parse; a part starting with one is opaque. */
const OPAQUE_KEYWORDS = new Set(['case', 'function', 'select', 'coproc']);

interface Builder {
  words: BashWord[];
  word: { value: string; start: number; dynamic: boolean; plain: boolean } | null;
  /** The part is a subshell `( … )`: its own text runs nothing, the parts inside do. */
  subshell: boolean;
}

interface Ctx {
  src: string;
  out: BashPart[];
  depth: number;
}

export function splitBashCommand(command: string): BashSplit {
  return splitAt(command, 0);
}

function splitAt(command: string, depth: number): BashSplit {
  const out: BashPart[] = [];
  try {
    if (depth > MAX_DEPTH) throw new Unanalysable('nested too deeply');
    scanList({ src: command, out, depth }, 0, '');
    return { parts: out };
  } catch (e) {
    if (e instanceof Unanalysable) return { parts: out, problem: e.message };
    throw e;
  }
}

function nested(ctx: Ctx): Ctx {
  if (ctx.depth >= MAX_DEPTH) throw new Unanalysable('nested too deeply');
  return { ...ctx, depth: ctx.depth + 1 };
}

function newBuilder(): Builder {
  return { words: [], word: null, subshell: false };
}

function add(b: Builder, at: number, chars: string, opts: { dynamic?: boolean; quoted?: boolean } = {}): void {
  b.word ??= { value: '', start: at, dynamic: false, plain: true };
  b.word.value += chars;
  if (opts.dynamic) b.word.dynamic = true;
  if (opts.quoted) b.word.plain = false;
}

function isFdPrefix(b: Builder): boolean {
  return b.word !== null && b.word.plain && FD_PREFIX.test(b.word.value);
}

function endWord(b: Builder, at: number): void {
  if (b.word) b.words.push({ ...b.word, end: at });
  b.word = null;
}

/** Scan a command list until `close` (`)` or a backtick) or the end; returns the index after it. */
function scanList(ctx: Ctx, start: number, close: ')' | '`' | ''): number {
  const s = ctx.src;
  let b = newBuilder();
  const heredocs: Heredoc[] = [];
  const flush = (at: number) => {
    endWord(b, at);
    emit(ctx, b);
    b = newBuilder();
  };
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === close) {
      flush(i);
      return i + 1;
    }
    if (c === '\\') {
      if (s[i + 1] === '\n')
        i += 2; // line continuation
      else {
        if (close === '`' && s[i + 1] === '`') throw new Unanalysable('nested backticks');
        add(b, i, s[i + 1] ?? '\\', { quoted: true }); // a trailing backslash is kept
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Unanalysable('unterminated single quote');
      add(b, i, s.slice(i + 1, end), { quoted: true });
      i = end + 1;
      continue;
    }
    if (c === '"') {
      i = scanDoubleQuoted(ctx, b, i);
      continue;
    }
    const expansionEnd = scanExpansion(ctx, i);
    if (expansionEnd > i) {
      add(b, i, s.slice(i, expansionEnd), { dynamic: true });
      i = expansionEnd;
      continue;
    }
    if (c === '$') {
      add(b, i, c, { dynamic: true }); // $VAR, $1, …
      i++;
      continue;
    }
    if (c === '(') {
      const atCommandStart = b.word === null && b.words.every((w) => w.plain && LEADING_KEYWORDS.has(w.value));
      if (!atCommandStart) {
        throw new Unanalysable("'(' after a word (a function definition, array or arithmetic loop) is not analysed");
      }
      i = scanList(nested(ctx), i + 1, ')');
      b.subshell = true;
      continue;
    }
    if (c === ')') throw new Unanalysable("unbalanced ')' (case statements are not analysed)");
    if (c === '#' && b.word === null) {
      while (i < s.length && s[i] !== '\n') i++;
      continue;
    }
    if (c === '\n') {
      flush(i);
      i = readHeredocBodies(s, heredocs.splice(0), i + 1, (at) => scanExpansion(ctx, at));
      continue;
    }
    if (c === ';' || c === '|') {
      flush(i);
      i += s[i + 1] === c || (c === '|' && s[i + 1] === '&') || (c === ';' && s[i + 1] === '&') ? 2 : 1;
      continue;
    }
    if (c === '&' && s[i + 1] !== '>') {
      flush(i);
      i += s[i + 1] === '&' ? 2 : 1;
      continue;
    }
    if (c === '<' && s[i + 1] === '<' && s[i + 2] !== '<') {
      const op = readHeredocOperator(s, i);
      if (!isFdPrefix(b)) endWord(b, i);
      add(b, i, s.slice(i, op.end));
      endWord(b, op.end);
      heredocs.push(op.heredoc);
      i = op.end;
      continue;
    }
    const redirection = REDIRECTIONS.find((r) => s.startsWith(r, i));
    if (redirection !== undefined) {
      // An unquoted `<`, `>` or `&>` ends the word before it, as in bash: `rm>log -rf x` runs
      // `rm -rf x`. Only a file descriptor (`2>`, `{fd}>`) stays with its operator. The target
      // follows in the same word (`>log`) or the next (`> log`). A here-string (`<<<word`) is
      // one of these: no body follows it on later lines.
      if (redirection[0] === '&' || !isFdPrefix(b)) endWord(b, i);
      add(b, i, redirection);
      i += redirection.length;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      endWord(b, i);
      i++;
      continue;
    }
    add(b, i, c);
    i++;
  }
  if (close) throw new Unanalysable(close === ')' ? "unclosed '('" : 'unclosed backtick');
  flush(s.length);
  return s.length;
}

/** `"…"`: quotes group, but `$(…)`, `${…}` and backticks inside still run. */
function scanDoubleQuoted(ctx: Ctx, b: Builder, open: number): number {
  const s = ctx.src;
  add(b, open, '', { quoted: true });
  let i = open + 1;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') return i + 1;
    if (c === '\\' && '$`"\\\n'.includes(s[i + 1] ?? '')) {
      if (s[i + 1] !== '\n') add(b, i, s[i + 1]!);
      i += 2;
      continue;
    }
    const end = c === '$' || c === '`' ? scanExpansion(ctx, i) : i; // `<(` is literal inside quotes
    if (end > i) {
      add(b, i, s.slice(i, end), { dynamic: true });
      i = end;
      continue;
    }
    add(b, i, c, { dynamic: c === '$' });
    i++;
  }
  throw new Unanalysable('unterminated double quote');
}

/**
 * If an expansion that can run commands starts at `i` (`$(…)`, `$((…))`, `${…}`, backticks,
 * `<(…)`, `>(…)`), scan it — collecting the commands inside — and return the index after it.
 */
function scanExpansion(ctx: Ctx, i: number): number {
  const s = ctx.src;
  const c = s[i];
  const next = s[i + 1];
  if (c === '`') return scanList(nested(ctx), i + 1, '`');
  if ((c === '<' || c === '>') && next === '(') return scanList(nested(ctx), i + 2, ')');
  if (c !== '$') return i;
  if (next === '(' && s[i + 2] === '(') return scanBracketed(nested(ctx), i + 3, '(', ')', 2);
  if (next === '(') return scanList(nested(ctx), i + 2, ')');
  if (next === '{') return scanBracketed(nested(ctx), i + 2, '{', '}', 1);
  return i;
}

/** Arithmetic `$((…))` and parameter expansion `${…}`: not commands, but may contain some. */
function scanBracketed(ctx: Ctx, start: number, open: string, close: string, closers: number): number {
  const s = ctx.src;
  let depth = 0;
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === "'" && open === '{') {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Unanalysable('unterminated single quote');
      i = end + 1;
      continue;
    }
    const end = scanExpansion(ctx, i);
    if (end > i) {
      i = end;
      continue;
    }
    if (c === open) depth++;
    else if (c === close && depth > 0) depth--;
    else if (c === close) {
      if (closers === 2 && s[i + 1] !== close) throw new Unanalysable("unclosed '$(('");
      return i + closers;
    }
    i++;
  }
  throw new Unanalysable(`unclosed '${open === '{' ? '${' : '$(('}'`);
}

/** Record one simple command: strip leading keywords, flag what we cannot analyse, look inside `sh -c`/`eval`. */
function emit(ctx: Ctx, b: Builder): void {
  let k = 0;
  while (k < b.words.length && b.words[k]!.plain && LEADING_KEYWORDS.has(b.words[k]!.value)) k++;
  const words = b.words.slice(k);
  if (words.length === 0 || b.subshell) return;
  const first = words[0]!;
  if (first.plain && first.value === 'for') return; // a loop header runs nothing but its expansions, already scanned
  const last = words[words.length - 1]!;
  const text = ctx.src.slice(first.start, last.end);
  const part: BashPart = {
    text,
    words: words.map((w) => ({ ...w, start: w.start - first.start, end: w.end - first.start })),
  };
  if (first.plain && OPAQUE_KEYWORDS.has(first.value)) part.opaque = `'${first.value}' constructs are not analysed`;
  ctx.out.push(part);
  if (part.opaque) return;
  const cmd = commandStart(part.words, 'all');
  const name = part.words[cmd];
  if (!name) return;
  if (name.dynamic) {
    part.opaque = 'the command name is computed at run time';
    return;
  }
  const inner = innerScript(part.words, cmd);
  if (inner === undefined) return;
  const split = splitAt(inner, ctx.depth + 1);
  ctx.out.push(...split.parts);
  if (split.problem) part.opaque = `the script it runs cannot be analysed: ${split.problem}`;
}
