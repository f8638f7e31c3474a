/**
 * Every simple command a Bash command line would run, read from a real parse
 * (ARCHITECTURE.md#bash-rules-on-a-real-parse). tree-sitter-bash parses; this walks the tree:
 * each `command` node anywhere in it (lists, pipelines, subshells, substitutions, function
 * bodies, loops, here-document pipelines), past the wrappers in wrappers.ts, into the scripts
 * that shells (`sh -c`, a here-string fed to `bash`), `eval`, `trap`, `alias`, `su -c`, `watch`,
 * `ssh`, `mapfile -C` … run. What cannot be resolved statically becomes an `unknown` command:
 * a computed command name, a script read from a pipe, a construct this walker does not know,
 * a parse error. Fail closed: the decision treats unknown as matching every deny and ask rule.
 */
import type { Node, Parser } from 'web-tree-sitter';
import type { BashAnalysis, BashCommand } from '../../shared/permissions/bash-analysis';
import { staticValue, wordOf, type Word } from './bash-words';
import { BASH_LIKE_SHELLS, INERT, OTHER_SHELLS, runsItsValue, WRAPPERS, type WrapperSpec } from './wrappers';

/** Scripts inside scripts (`bash -c "eval 'sh -c …'"`) deeper than this are not followed. */
const MAX_DEPTH = 8;
/** A line longer than this is not analysed (it is one unknown command). */
const MAX_ANALYSED_CHARS = 100_000;

/** Named node types this walker understands; any other makes its command unknown. */
const KNOWN = new Set([
  'program',
  'list',
  'pipeline',
  'command',
  'command_name',
  'redirected_statement',
  'subshell',
  'compound_statement',
  'do_group',
  'negated_command',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'case_item',
  'function_definition',
  'test_command',
  'declaration_command',
  'unset_command',
  'variable_assignment',
  'variable_assignments',
  'variable_name',
  'word',
  'number',
  'string',
  'string_content',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'concatenation',
  'simple_expansion',
  'expansion',
  'special_variable_name',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'binary_expression',
  'unary_expression',
  'ternary_expression',
  'postfix_expression',
  'parenthesized_expression',
  'subscript',
  'array',
  'brace_expression',
  'file_redirect',
  'file_descriptor',
  'heredoc_redirect',
  'heredoc_start',
  'heredoc_body',
  'heredoc_content',
  'heredoc_end',
  'herestring_redirect',
  'test_operator',
  'regex',
  'extglob_pattern',
  'comment',
]);

const ARITHMETIC_TEST = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** Builtins that assign to the variables they name (their values come from input). */
const READS_INTO = new Set(['read', 'mapfile', 'readarray', 'getopts', 'printf', 'wait']);
/** A static string that, used as a variable name or in arithmetic, runs a command: `a[$(cmd)]`. */
const CODE_IN_SUBSCRIPT = /\[[^\]]*(\$\(|`|\$\{|<\(|>\()/;

/**
 * Builtins that take variable names, and which of their words are names: a name computed at run
 * time can be `a[$(cmd)]`, whose subscript the builtin evaluates (`printf -v "$n" x` runs `cmd`).
 */
const NAME_ARGUMENTS: Record<string, 'all' | 'after -v'> = {
  printf: 'after -v',
  test: 'after -v',
  '[': 'after -v',
  read: 'all',
  mapfile: 'all',
  readarray: 'all',
  getopts: 'all',
  wait: 'all',
  unset: 'all',
  export: 'all',
  declare: 'all',
  local: 'all',
  typeset: 'all',
  readonly: 'all',
};
const COMPUTED_NAME = 'a variable name computed at run time can hold an array subscript that runs a command';

function basename(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** Where a command's standard input comes from, when it is text known before the command runs. */
type Stdin = { text: string } | { unknown: string } | undefined;

export class BashAnalyser {
  private readonly commands: BashCommand[] = [];
  /** Variables whose value is not fixed in the script (read from input, computed): arithmetic on them can run code. */
  private readonly tainted = new Set<string>(['@', '*', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);

  constructor(private readonly parser: Parser) {}

  analyse(command: string): BashAnalysis {
    if (command.length > MAX_ANALYSED_CHARS) return { commands: [], problem: `it is longer than ${MAX_ANALYSED_CHARS} characters` };
    const problem = this.script(command, 0);
    if (problem) return { commands: [], problem };
    return { commands: this.commands };
  }

  /** Adds the commands of one script; returns why it does not parse, if it does not. */
  private script(text: string, depth: number): string | undefined {
    if (depth > MAX_DEPTH) return `scripts are nested more than ${MAX_DEPTH} deep`;
    const tree = this.parser.parse(text);
    if (!tree) return 'the parser gave no tree';
    try {
      const root = tree.rootNode;
      if (root.hasError) return `it does not parse as Bash${errorPlace(root)}`;
      this.collectTaint(root);
      this.visit(root, depth);
      return undefined;
    } finally {
      tree.delete();
    }
  }

  /** Adds a command that cannot be checked, and why (CommandReader adds them too). */
  unknown(text: string, why: string): void {
    this.commands.push({ text: oneLine(text), unknown: why, allowForms: [], denyForms: [] });
  }

  private collectTaint(root: Node): void {
    for (const n of root.descendantsOfType(['variable_assignment', 'for_statement', 'command'])) {
      if (n.type === 'variable_assignment') {
        const name = n.childForFieldName('name');
        const value = n.childForFieldName('value');
        if (name && (!value || staticValue(value) === null)) this.tainted.add(baseName(name.text));
      } else if (n.type === 'for_statement') {
        const v = n.childForFieldName('variable');
        const values = n.childrenForFieldName('value');
        if (v && (n.child(0)?.type === 'select' || values.length === 0 || values.some((w) => staticValue(w) === null)))
          this.tainted.add(v.text);
      } else {
        const name = commandWord(n);
        if (name && READS_INTO.has(name)) {
          for (const a of n.childrenForFieldName('argument')) {
            const v = staticValue(a);
            if (v !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) this.tainted.add(v);
          }
        }
      }
    }
  }

  private visit(node: Node, depth: number): void {
    if (!node.isNamed) return;
    if (!KNOWN.has(node.type)) {
      this.unknown(node.text, `the construct '${node.type}' is not analysed`);
      return;
    }
    switch (node.type) {
      case 'command':
        this.command(node, depth);
        break;
      case 'declaration_command':
        this.declaration(node);
        break;
      case 'unset_command':
        this.builtinWithNames(node, 'unset');
        break;
      case 'variable_assignment':
        this.assignment(node);
        break;
      case 'expansion':
        this.expansion(node);
        break;
      case 'arithmetic_expansion':
      case 'c_style_for_statement':
        this.arithmetic(node);
        break;
      case 'compound_statement':
        if (node.child(0)?.type === '((') this.arithmetic(node);
        break;
      case 'subscript': {
        const index = node.childForFieldName('index');
        if (index) this.arithmetic(index);
        break;
      }
      case 'binary_expression': {
        const op = node.childForFieldName('operator');
        if (op && ARITHMETIC_TEST.has(op.text) && node.parent?.type === 'test_command') this.arithmetic(node);
        break;
      }
      case 'unary_expression': {
        const op = node.child(0);
        const operand = node.namedChildren.at(-1);
        if (op?.text === '-v' && operand && (staticValue(operand) === null || CODE_IN_SUBSCRIPT.test(operand.text)))
          this.unknown(node.text, '`-v` evaluates an array subscript, which can run a command');
        break;
      }
    }
    for (const child of node.namedChildren) this.visit(child, depth);
  }

  /** Arithmetic evaluates the values of the variables it names as expressions, subscripts and all. */
  private arithmetic(node: Node): void {
    const names = [...node.descendantsOfType(['variable_name', 'special_variable_name']), ...(node.type === 'variable_name' ? [node] : [])];
    const bare = node.descendantsOfType('word').filter((w) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(w.text));
    const hit = [...names, ...bare].find((n) => this.tainted.has(n.text));
    if (hit) this.unknown(node.text, `arithmetic evaluates the value of \`${hit.text}\` as an expression, which can run a command`);
  }

  private expansion(node: Node): void {
    const text = node.text;
    if (/^\$\{!/.test(text)) this.unknown(text, 'an indirect expansion `${!…}` takes a variable name from a value');
    else if (node.children.some((c) => c.type === 'P'))
      this.unknown(text, 'the `@P` transformation expands a value as a prompt, which can run a command');
  }

  private assignment(node: Node): void {
    const name = node.childForFieldName('name');
    if (!name) return;
    if (runsItsValue(baseName(name.text))) {
      this.unknown(node.text, `assigning ${baseName(name.text)} makes the shell run its value`);
      return;
    }
    if (name.type === 'subscript' || CODE_IN_SUBSCRIPT.test(name.text)) {
      const index = name.childForFieldName?.('index');
      if (index && staticValue(index) === null && !/^[0-9]+$/.test(index.text)) this.arithmetic(index);
    }
    const value = node.childForFieldName('value');
    if (value && CODE_IN_SUBSCRIPT.test(staticValue(value) ?? ''))
      this.unknown(node.text, 'the value holds an array subscript with a command in it');
  }

  private declaration(node: Node): void {
    const keyword = node.child(0)?.text ?? 'declare';
    const words = node.namedChildren.filter((c) => c.type !== 'variable_assignment' && c.type !== 'variable_name');
    const opts = words.map((w) => staticValue(w));
    if (opts.some((o) => o === null)) {
      this.unknown(node.text, `a computed word in \`${keyword}\` may be an option or a name`);
      return;
    }
    if (opts.some((o) => o!.startsWith('-') && /[ni]/.test(o!.slice(1))))
      this.unknown(node.text, `\`${keyword} -n\` and \`-i\` evaluate values later as names or arithmetic`);
    else this.builtinWithNames(node, keyword);
  }

  /** `unset`, `declare`, `export`, …: a command rules see by name; names with code in a subscript are unknown. */
  private builtinWithNames(node: Node, name: string): void {
    const args = node.namedChildren.slice(node.child(0)?.isNamed ? 1 : 0);
    if (args.some((a) => CODE_IN_SUBSCRIPT.test(a.text))) {
      this.unknown(node.text, 'an array subscript in a variable name can run a command');
      return;
    }
    if (args.some((a) => a.type !== 'variable_assignment' && a.type !== 'variable_name' && staticValue(a) === null)) {
      this.unknown(node.text, COMPUTED_NAME);
      return;
    }
    const text = [name, ...args.map((a) => a.text)].join(' ');
    this.commands.push({ text: oneLine(node.text), allowForms: [text], denyForms: [] });
  }

  private command(node: Node, depth: number): void {
    const nameNode = node.childForFieldName('name');
    const assigns = node.namedChildren.filter((c) => c.type === 'variable_assignment');
    if (!nameNode) return; // assignments only: visited as variable_assignment
    const nameInner = nameNode.namedChildCount === 1 ? nameNode.namedChild(0)! : nameNode;
    const words: Word[] = [wordOf(nameInner), ...node.childrenForFieldName('argument').map(wordOf)];
    if (words.some((w) => w.value !== null && CODE_IN_SUBSCRIPT.test(w.value) && /\$\(|`/.test(w.value))) {
      this.unknown(node.text, 'a word holds an array subscript with a command in it, which builtins that take variable names run');
      return;
    }
    const takes = NAME_ARGUMENTS[basename(words[0]!.value ?? '')];
    if (takes && words.slice(1).some((w, k) => w.value === null && (takes === 'all' || words[k]!.value === '-v'))) {
      this.unknown(node.text, COMPUTED_NAME);
      return;
    }
    const redirects = redirectsOf(node);
    new CommandReader(
      this,
      node.text,
      assigns.map((a) => a.text),
      words,
      stdinOf(redirects),
      depth,
      redirects.map((r) => r.text),
    ).read();
  }

  /** For CommandReader: a command it read. */
  add(cmd: BashCommand): void {
    this.commands.push(cmd);
  }
  isTainted(name: string): boolean {
    return this.tainted.has(name);
  }
  runScript(text: string, script: string, depth: number, what: string): void {
    const problem = this.script(script, depth + 1);
    if (problem) this.unknown(text, `the script ${what} runs cannot be analysed: ${problem}`);
  }
}

/** Reads one simple command: its wrappers, the program it runs, the scripts it hands to a shell. */
class CommandReader {
  private documentedEnd = 0;
  private onlyDocumented = true;

  constructor(
    private readonly out: BashAnalyser,
    private readonly text: string,
    private readonly assigns: string[],
    private readonly words: Word[],
    private readonly stdin: Stdin,
    private readonly depth: number,
    /** Its redirections as written: part of what allow rules see (`Bash(echo ok)` does not allow `echo ok > ~/.bashrc`). */
    private readonly redirects: string[] = [],
    /** A command a wrapper runs per input (`find -exec`): deny and ask rules only, so no allow forms. */
    private readonly isInner = false,
  ) {}

  read(): void {
    for (const a of this.assigns) {
      const name = a.slice(0, a.indexOf('='));
      if (runsItsValue(baseName(name))) return this.out.unknown(this.text, `assigning ${baseName(name)} makes the shell run its value`);
    }
    let i = 0;
    for (let hops = 0; hops < 32; hops++) {
      const w = this.words[i];
      if (!w) return this.emit(i, { none: true });
      if (w.value === null) return this.out.unknown(this.text, `the command name is computed at run time (\`${w.src}\`)`);
      const name = basename(w.value);
      const step = this.step(name, i);
      if (step.kind === 'program') return this.emit(i, {});
      if (step.kind === 'unknown') return this.out.unknown(this.text, step.why);
      if (step.kind === 'none') return this.emit(i, { none: true });
      if (step.kind === 'scripts') {
        this.emit(i, {});
        for (const s of step.scripts) this.out.runScript(this.text, s, this.depth, `\`${name}\``);
        return;
      }
      if (step.kind === 'inner') {
        this.emit(i, {});
        for (const range of step.commands) this.inner(range);
        return;
      }
      // a wrapper: the command continues at step.next
      if (this.onlyDocumented && step.documented && this.assigns.length === 0) this.documentedEnd = step.next;
      else this.onlyDocumented = false;
      i = step.next;
    }
    this.out.unknown(this.text, 'too many wrappers');
  }

  /** A command a wrapper runs for each input (`find -exec`): checked against deny and ask rules. */
  private inner(words: Word[]): void {
    if (words.length === 0) return;
    if (words[0]!.value === null) return this.out.unknown(this.text, `the command name is computed at run time (\`${words[0]!.src}\`)`);
    new CommandReader(this.out, words.map((w) => w.src).join(' '), [], words, undefined, this.depth, [], true).read();
  }

  /** The entry for the command whose program is words[at]. */
  private emit(at: number, { none }: { none?: boolean }): void {
    const srcAll = [...this.assigns, ...this.words.map((w) => w.src), ...this.redirects].join(' ');
    const allowForms = this.isInner ? [] : [srcAll];
    if (!this.isInner && this.onlyDocumented && this.documentedEnd > 0 && this.documentedEnd === at) {
      allowForms.push([...this.words.slice(this.documentedEnd).map((w) => w.src), ...this.redirects].join(' '));
    }
    const rest = none ? [] : this.words.slice(at);
    const values = rest.map((w) => w.value ?? w.src);
    const denyForms: string[] = [];
    if (rest.length > 0) {
      denyForms.push(values.join(' '), [basename(values[0]!), ...values.slice(1)].join(' '), rest.map((w) => w.src).join(' '));
    }
    const firstComputed = rest.findIndex((w) => w.value === null);
    const cmd: BashCommand = {
      text: oneLine(this.text),
      allowForms: unique(allowForms),
      denyForms: unique(denyForms).filter((f) => !allowForms.includes(f)),
    };
    if (firstComputed > 0) {
      const known = rest.slice(0, firstComputed).map((w) => w.value!);
      cmd.computedAfter = unique([known.join(' '), [basename(known[0]!), ...known.slice(1)].join(' ')]);
    }
    if (this.isInner) cmd.inner = true;
    if (at === 0 && this.words.length === 1 && this.assigns.length === 0 && INERT.has(this.words[0]!.value ?? '')) cmd.inert = true;
    this.out.add(cmd);
  }

  private step(name: string, i: number): Step {
    const w = this.words;
    if (BASH_LIKE_SHELLS.has(name)) return this.shell(i);
    if (OTHER_SHELLS.has(name)) {
      return w.slice(i + 1).some((x) => x.value === null || /^-[A-Za-z]*c/.test(x.value ?? ''))
        ? { kind: 'unknown', why: `what ${name} runs from a string cannot be read with the Bash grammar` }
        : { kind: 'program' };
    }
    switch (name) {
      case 'env':
        return this.env(i);
      case 'xargs':
        return this.xargs(i);
      case 'find':
        return this.find(i);
      case 'parallel':
        return this.parallel(i);
      case 'watch':
        return this.watch(i);
      case 'ssh':
        return this.ssh(i);
      case 'busybox':
      case 'toybox': {
        const next = w[i + 1];
        if (!next) return { kind: 'none' };
        if (next.value === null) return { kind: 'unknown', why: `the ${name} applet is computed at run time` };
        if (next.value.startsWith('-')) return { kind: 'program' };
        return { kind: 'wrap', next: i + 1, documented: false };
      }
      case 'eval':
        return this.joinedScript(i + 1, 'eval');
      case 'trap':
        return this.trap(i);
      case 'alias':
        return this.alias(i);
      case 'mapfile':
      case 'readarray':
        return this.mapfile(i);
      case 'source':
      case '.':
        return this.source(i);
      case 'fc':
        return { kind: 'unknown', why: '`fc` runs commands from the history, which cannot be checked' };
      case 'hash':
        return w.slice(i + 1).some((x) => x.value === null || /^-[a-z]*p/.test(x.value ?? ''))
          ? { kind: 'unknown', why: '`hash -p` makes a name run another program' }
          : { kind: 'program' };
      case 'enable':
        return w.slice(i + 1).some((x) => x.value === null || /^-[a-z]*f/.test(x.value ?? ''))
          ? { kind: 'unknown', why: '`enable -f` loads a builtin from a shared object' }
          : { kind: 'program' };
      case 'let':
        for (const x of w.slice(i + 1)) {
          if (x.value === null) return { kind: 'unknown', why: '`let` evaluates a computed expression' };
          const id = (x.value.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).find((n) => this.out.isTainted(n));
          if (id) return { kind: 'unknown', why: `arithmetic evaluates the value of \`${id}\` as an expression, which can run a command` };
        }
        return { kind: 'program' };
      case 'command':
        if (w[i + 1]?.value && /^-[pvV]*[vV]/.test(w[i + 1]!.value!)) return { kind: 'program' };
        break;
      case 'exec':
        if (!w[i + 1]) return { kind: 'none' };
        break;
    }
    const spec = WRAPPERS.get(name);
    if (spec) return this.wrapper(name, spec, i);
    return { kind: 'program' };
  }

  /** Options of a table wrapper, then its positional words, then the command. */
  private wrapper(name: string, spec: WrapperSpec, i: number): Step {
    const w = this.words;
    const scripts: string[] = [];
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: `a computed word where \`${name}\` takes options or its command` };
      if (v === '--') {
        j++;
        break;
      }
      if (v.startsWith('--')) {
        const r = longOption(name, spec.longValue ?? [], spec.longFlags ?? [], v, w[j + 1]);
        if ('why' in r) return { kind: 'unknown', why: r.why };
        if (r.value !== undefined && spec.scriptOptions?.includes(r.name)) {
          if (r.value === null) return { kind: 'unknown', why: `the script of \`${name} --${r.name}\` is computed at run time` };
          scripts.push(r.value);
        }
        j += r.words;
        continue;
      }
      if (v.startsWith('-') && v.length > 1) {
        if (spec.numericShort && /^-[0-9]+$/.test(v)) {
          j++;
          continue;
        }
        const r = shortOptions(name, spec.valueShort, spec.flagShort, v, w[j + 1]);
        if ('why' in r) return { kind: 'unknown', why: r.why };
        for (const [opt, value] of r.values) {
          if (!spec.scriptOptions?.includes(opt)) continue;
          if (value === null) return { kind: 'unknown', why: `the script of \`${name} -${opt}\` is computed at run time` };
          scripts.push(value);
        }
        j += r.words;
        continue;
      }
      break;
    }
    // `flock FILE -c CMD`: flock reads -c after its lock file too.
    if (name === 'flock' && /^(-c|--command)$/.test(w[j + 1]?.value ?? '')) {
      const script = w[j + 2];
      if (!script || script.value === null) return { kind: 'unknown', why: 'the script of `flock -c` is computed at run time' };
      scripts.push(script.value);
    }
    if (scripts.length > 0) return { kind: 'scripts', scripts };
    for (let p = 0; p < (spec.positional ?? 0); p++, j++) {
      if (j >= w.length) return { kind: 'none' };
      if (w[j]!.value === null && w[j]!.src.startsWith('$') && !/^"/.test(w[j]!.src))
        return { kind: 'unknown', why: `a computed word before the command \`${name}\` runs may split into several` };
    }
    if (j >= w.length) return { kind: 'none' };
    return { kind: 'wrap', next: j, documented: !!spec.documented };
  }

  private shell(i: number): Step {
    const w = this.words;
    const name = basename(w[i]!.value!);
    let c = false;
    let s = false;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: `a computed word where \`${name}\` takes options or its script` };
      if (v === '--' || v === '-') {
        j++;
        break;
      }
      if (v.startsWith('--')) {
        if (/^--(rcfile|init-file)$/.test(v)) j += 2;
        else if (
          /^--(norc|noprofile|posix|login|verbose|restricted|noediting|debugger|dump-strings|dump-po-strings|pretty-print|help|version)$/.test(
            v,
          )
        )
          j++;
        else return { kind: 'unknown', why: `\`${name} ${v}\` is an option this check does not know` };
        continue;
      }
      if ((v.startsWith('-') || v.startsWith('+')) && v.length > 1) {
        for (const ch of v.slice(1)) {
          if (ch === 'c') c = true;
          else if (ch === 's') s = true;
          else if (ch === 'o' || ch === 'O') j++;
        }
        j++;
        continue;
      }
      break;
    }
    if (c) {
      const script = w[j];
      if (!script) return { kind: 'unknown', why: `\`${name} -c\` without a script` };
      if (script.value === null) return { kind: 'unknown', why: `the script of \`${name} -c\` is computed at run time` };
      return { kind: 'scripts', scripts: [script.value] };
    }
    const file = w[j];
    if (!s && file && file.value !== null && !STDIN_FILES.has(file.value)) return { kind: 'program' };
    if (!s && file && file.value === null) return { kind: 'unknown', why: `the script file of \`${name}\` is computed at run time` };
    return this.fromStdin(name);
  }

  private fromStdin(name: string): Step {
    if (this.stdin && 'text' in this.stdin) return { kind: 'scripts', scripts: [this.stdin.text] };
    const why = this.stdin && 'unknown' in this.stdin ? this.stdin.unknown : 'its input comes from a pipe, a file or the terminal';
    return { kind: 'unknown', why: `\`${name}\` runs a script read from its standard input, which cannot be checked: ${why}` };
  }

  private source(i: number): Step {
    const f = this.words[i + 1];
    if (!f) return { kind: 'program' };
    if (f.value === null) return { kind: 'unknown', why: 'the file `source` runs is computed at run time' };
    if (STDIN_FILES.has(f.value)) return this.fromStdin('source');
    return { kind: 'program' };
  }

  private joinedScript(from: number, what: string): Step {
    const rest = this.words.slice(from);
    if (rest.length === 0) return { kind: 'none' };
    if (rest.some((x) => x.value === null)) return { kind: 'unknown', why: `what \`${what}\` runs is computed at run time` };
    return { kind: 'scripts', scripts: [rest.map((x) => x.value).join(' ')] };
  }

  private trap(i: number): Step {
    let j = i + 1;
    while (this.words[j]?.value && /^-[lp]+$|^--$/.test(this.words[j]!.value!)) j++;
    const action = this.words[j];
    if (!action || this.words.length === j + 1) return { kind: 'program' }; // `trap SIG`: reset, or print
    if (action.value === null) return { kind: 'unknown', why: 'the command `trap` runs is computed at run time' };
    if (action.value === '-' || action.value === '') return { kind: 'program' };
    return { kind: 'scripts', scripts: [action.value] };
  }

  private alias(i: number): Step {
    const scripts: string[] = [];
    for (const x of this.words.slice(i + 1)) {
      if (x.value === null) return { kind: 'unknown', why: 'an alias is defined from a computed value' };
      const eq = x.value.indexOf('=');
      if (eq > 0) scripts.push(x.value.slice(eq + 1));
    }
    return scripts.length ? { kind: 'scripts', scripts } : { kind: 'program' };
  }

  private mapfile(i: number): Step {
    const w = this.words;
    for (let j = i + 1; j < w.length; j++) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word in `mapfile` may be its callback' };
      const m = /^-([a-zA-Z]*)$/.exec(v);
      if (!m) continue;
      const at = m[1]!.indexOf('C');
      if (at < 0) {
        if (/[dnOsuc]$/.test(m[1]!)) j++;
        continue;
      }
      const cb = m[1]!.slice(at + 1) || w[j + 1]?.value;
      if (cb === null || cb === undefined) return { kind: 'unknown', why: 'the callback of `mapfile -C` is computed at run time' };
      return { kind: 'scripts', scripts: [cb] };
    }
    return { kind: 'program' };
  }

  private env(i: number): Step {
    const w = this.words;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word where `env` takes options, assignments or its command' };
      if (v === '--') {
        j++;
        break;
      }
      if (!v.startsWith('-') && v.includes('=')) {
        const name = v.slice(0, v.indexOf('='));
        if (runsItsValue(name)) return { kind: 'unknown', why: `\`env ${name}=…\` makes the shell run that value` };
        j++;
        continue;
      }
      if (v === '-') {
        j++;
        continue;
      }
      if (v.startsWith('--')) {
        const r = longOption(
          'env',
          ['unset', 'chdir', 'split-string', 'argv0'],
          [
            'ignore-environment',
            'null',
            'debug',
            'block-signal',
            'default-signal',
            'ignore-signal',
            'list-signal-handling',
            'help',
            'version',
          ],
          v,
          w[j + 1],
        );
        if ('why' in r) return { kind: 'unknown', why: r.why };
        if (r.name === 'split-string')
          return r.value === null || r.value === undefined
            ? { kind: 'unknown', why: 'the command line of `env -S` is computed at run time' }
            : { kind: 'scripts', scripts: [r.value] };
        j += r.words;
        continue;
      }
      if (v.startsWith('-')) {
        const r = shortOptions('env', 'uCaS', '0iv', v, w[j + 1]);
        if ('why' in r) return { kind: 'unknown', why: r.why };
        const split = r.values.find(([o]) => o === 'S');
        if (split)
          return split[1] === null
            ? { kind: 'unknown', why: 'the command line of `env -S` is computed at run time' }
            : { kind: 'scripts', scripts: [split[1]] };
        j += r.words;
        continue;
      }
      break;
    }
    if (j >= w.length) return { kind: 'none' };
    return { kind: 'wrap', next: j, documented: false };
  }

  private xargs(i: number): Step {
    const w = this.words;
    let replace: string | undefined;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word where `xargs` takes options or its command' };
      if (v === '--') {
        j++;
        break;
      }
      if (v.startsWith('--')) {
        const r = longOption(
          'xargs',
          ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
          [
            'null',
            'interactive',
            'no-run-if-empty',
            'open-tty',
            'exit',
            'verbose',
            'show-limits',
            'eof',
            'replace',
            'max-lines',
            'help',
            'version',
          ],
          v,
          w[j + 1],
        );
        if ('why' in r) return { kind: 'unknown', why: r.why };
        if (r.name === 'replace') replace = r.value ?? '{}';
        j += r.words;
        continue;
      }
      if (v.startsWith('-') && v.length > 1) {
        // -e, -i and -l take a value only when it is attached.
        const optional = /^-([eil])(.*)$/.exec(v);
        if (optional) {
          if (optional[1] === 'i') replace = optional[2] || '{}';
          j++;
          continue;
        }
        const r = shortOptions('xargs', 'adEILnPs', '0prtxo', v, w[j + 1]);
        if ('why' in r) return { kind: 'unknown', why: r.why };
        const rep = r.values.find(([o]) => o === 'I');
        if (rep) replace = rep[1] ?? undefined;
        if (rep && rep[1] === null) return { kind: 'unknown', why: 'the replace string of `xargs -I` is computed at run time' };
        j += r.words;
        continue;
      }
      break;
    }
    if (j >= w.length) return { kind: 'program' }; // runs echo
    if (replace !== undefined) this.markComputed(j, replace);
    return { kind: 'wrap', next: j, documented: false };
  }

  /** Words holding the replace string are filled in from input at run time. */
  private markComputed(from: number, token: string): void {
    for (let k = from; k < this.words.length; k++) {
      const x = this.words[k]!;
      if (x.value !== null && x.value.includes(token)) this.words[k] = { src: x.src, value: null };
    }
  }

  private find(i: number): Step {
    const w = this.words;
    const commands: Word[][] = [];
    for (let j = i + 1; j < w.length; j++) {
      const v = w[j]!.value;
      if (v === null || !/^-(exec|execdir|ok|okdir)$/.test(v)) continue;
      let end = j + 1;
      while (end < w.length && w[end]!.value !== ';' && !(w[end]!.value === '+' && w[end - 1]!.value === '{}')) end++;
      if (end >= w.length) return { kind: 'unknown', why: `\`find ${v}\` without its terminating ';' or '+'` };
      commands.push(w.slice(j + 1, end).map((x) => (x.value !== null && x.value.includes('{}') ? { src: x.src, value: null } : x)));
      j = end;
    }
    return commands.length ? { kind: 'inner', commands } : { kind: 'program' };
  }

  private parallel(i: number): Step {
    const w = this.words;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word where `parallel` takes options or its command' };
      if (v === ':::' || v === '::::' || v === ':::+' || v === '::::+') break;
      if (
        /^(-[jSadEINnPLlCX]|--(jobs|sshlogin|arg-file|delimiter|eof|max-args|max-replace-args|max-lines|colsep|results|joblog|tmpdir|workdir|halt|timeout|delay|retries|memfree|load|tag-string|replace))$/.test(
          v,
        )
      )
        j += 2;
      else if (v.startsWith('-')) j++;
      else break;
    }
    if (j >= w.length || w[j]!.value!.startsWith(':::'))
      return { kind: 'unknown', why: '`parallel` runs its arguments or its input as commands' };
    let end = j;
    while (end < w.length && !String(w[end]!.value).startsWith('::::') && w[end]!.value !== ':::' && w[end]!.value !== ':::+') end++;
    const cmd = w.slice(j, end).map((x) => (x.value !== null && /\{[^}]*\}/.test(x.value) ? { src: x.src, value: null } : x));
    return { kind: 'inner', commands: [cmd] };
  }

  private watch(i: number): Step {
    const w = this.words;
    let exec = false;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word where `watch` takes options or its command' };
      if (v === '--') {
        j++;
        break;
      }
      if (/^(-n|--interval|-q|--equexit)$/.test(v)) j += 2;
      else if (/^(-x|--exec)$/.test(v)) {
        exec = true;
        j++;
      } else if (v.startsWith('-')) {
        if (/^-[a-zA-Z]*x/.test(v)) exec = true;
        j++;
      } else break;
    }
    if (j >= w.length) return { kind: 'none' };
    return exec ? { kind: 'wrap', next: j, documented: false } : this.joinedScript(j, 'watch');
  }

  private ssh(i: number): Step {
    const w = this.words;
    let j = i + 1;
    while (j < w.length) {
      const v = w[j]!.value;
      if (v === null) return { kind: 'unknown', why: 'a computed word where `ssh` takes options or its destination' };
      if (!v.startsWith('-')) break;
      const r = shortOptions('ssh', 'BbcDEeFIiJLlmOoPpQRSWw', '46AaCfGgKkMNnqsTtVvXxYy', v, w[j + 1]);
      if ('why' in r) return { kind: 'unknown', why: r.why };
      j += r.words;
    }
    if (j + 1 >= w.length) return { kind: 'program' };
    return this.joinedScript(j + 1, 'ssh');
  }
}

type Step =
  | { kind: 'program' }
  | { kind: 'none' }
  | { kind: 'unknown'; why: string }
  | { kind: 'wrap'; next: number; documented: boolean }
  | { kind: 'scripts'; scripts: string[] }
  | { kind: 'inner'; commands: Word[][] };

const STDIN_FILES = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0', '-']);

type LongResult = { name: string; words: number; value?: string | null } | { why: string };

function longOption(wrapper: string, valued: readonly string[], flags: readonly string[], opt: string, next: Word | undefined): LongResult {
  const eq = opt.indexOf('=');
  const given = opt.slice(2, eq < 0 ? undefined : eq);
  const known = [...valued, ...flags];
  const fits = known.includes(given) ? [given] : known.filter((o) => o.startsWith(given));
  if (given === '' || fits.length !== 1)
    return { why: `\`${wrapper} ${opt}\` is ${fits.length > 1 ? 'an ambiguous' : 'an unknown'} option` };
  const name = fits[0]!;
  if (eq >= 0) return { name, words: 1, value: opt.slice(eq + 1) };
  if (valued.includes(name)) return { name, words: 2, value: next ? next.value : undefined };
  return { name, words: 1 };
}

type ShortResult = { words: number; values: [string, string | null][] } | { why: string };

/** A cluster of short options: `-iu root` is `-i -u root`, `-uroot` carries its value. */
function shortOptions(wrapper: string, valued: string, flags: string, opt: string, next: Word | undefined): ShortResult {
  const values: [string, string | null][] = [];
  for (let k = 1; k < opt.length; k++) {
    const ch = opt[k]!;
    if (valued.includes(ch)) {
      if (k < opt.length - 1) {
        values.push([ch, opt.slice(k + 1)]);
        return { words: 1, values };
      }
      values.push([ch, next ? next.value : null]);
      return { words: 2, values };
    }
    if (!flags.includes(ch)) return { why: `\`${wrapper} -${ch}\` is an option this check does not know` };
  }
  return { words: 1, values };
}

/** A command's own redirections, and those of the redirected statement it is the body of. */
function redirectsOf(node: Node): Node[] {
  const redirects = [...node.childrenForFieldName('redirect')];
  const parent = node.parent;
  if (parent?.type === 'redirected_statement' && parent.childForFieldName('body')?.id === node.id)
    redirects.push(...parent.childrenForFieldName('redirect'));
  return redirects;
}

/** The command's standard input when it is a here-string or here-document of its own. */
function stdinOf(redirects: Node[]): Stdin {
  const toStdin = redirects.filter((r) => {
    const fd = r.childForFieldName('descriptor')?.text;
    if (r.type === 'file_redirect')
      return (fd === undefined || fd === '0') && /^<|^<>/.test(r.children.find((c) => !c.isNamed)?.text ?? '');
    return fd === undefined || fd === '0';
  });
  if (toStdin.length === 0) return undefined;
  if (toStdin.length > 1) return { unknown: 'it has more than one input redirection' };
  const r = toStdin[0]!;
  if (r.type === 'herestring_redirect') {
    const word = r.namedChildren.find((c) => c.type !== 'file_descriptor');
    const v = word ? staticValue(word) : null;
    return v === null ? { unknown: 'the here-string is computed at run time' } : { text: v };
  }
  if (r.type === 'heredoc_redirect') {
    const body = r.namedChildren.find((c) => c.type === 'heredoc_body');
    const start = r.namedChildren.find((c) => c.type === 'heredoc_start')?.text ?? '';
    if (!body) return { text: '' };
    if (/['"\\]/.test(start)) return { text: body.text };
    if (body.namedChildren.some((c) => c.type !== 'heredoc_content')) return { unknown: 'the here-document has expansions' };
    return { text: body.text.replace(/\\([$`\\\n])/g, (_, c: string) => (c === '\n' ? '' : c)) };
  }
  return { unknown: 'it reads a file' };
}

function commandWord(node: Node): string | undefined {
  const name = node.childForFieldName('name');
  const inner = name?.namedChildCount === 1 ? name.namedChild(0) : name;
  const v = inner ? staticValue(inner) : null;
  return v === null ? undefined : basename(v);
}

function baseName(variable: string): string {
  const at = variable.indexOf('[');
  return at < 0 ? variable : variable.slice(0, at);
}

function errorPlace(root: Node): string {
  const bad = root.descendantsOfType('ERROR')[0] ?? findMissing(root);
  if (!bad) return '';
  return ` (at line ${bad.startPosition.row + 1}, column ${bad.startPosition.column + 1}: \`${oneLine(bad.text).slice(0, 40)}\`)`;
}

function findMissing(node: Node): Node | undefined {
  if (node.isMissing) return node;
  for (const c of node.children) {
    const m = findMissing(c);
    if (m) return m;
  }
  return undefined;
}

function oneLine(text: string): string {
  const t = text.trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs.filter((x) => x.trim() !== ''))];
}
