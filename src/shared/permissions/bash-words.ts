/**
 * What a simple command runs: the word that names the command past wrappers (`timeout 5`,
 * `nice`, `sudo`, `VAR=x`, redirections), and the script inside `sh -c '…'` or `eval …`.
 */

/** One word of a simple command, as `splitBashCommand` reads it. */
export interface BashWord {
  /** The word with quotes and escapes removed (expansions kept as written). */
  value: string;
  /** Offsets in the part's `text`. */
  start: number;
  end: number;
  /** Contains an expansion whose value is known only at run time (`$X`, `$(…)`, backticks). */
  dynamic: boolean;
  /** Written without any quoting or escaping (only such a word can be a shell keyword). */
  plain: boolean;
}

/** Thrown while scanning a construct we do not analyse; the message says which. */
export class Unanalysable extends Error {}

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh']);

export function basename(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** The script run by `eval …` or `sh -c '…'`, if this command is one of those. */
export function innerScript(words: BashWord[], cmd: number): string | undefined {
  const name = basename(words[cmd]!.value);
  if (name === 'eval')
    return words
      .slice(cmd + 1)
      .map((w) => w.value)
      .join(' ');
  if (!SHELLS.has(name)) return undefined;
  for (let j = cmd + 1; j < words.length; j++) {
    const w = words[j]!.value;
    if (!/^[-+]/.test(w) || w === '-' || w === '--') return undefined;
    if (w === '-o' || w === '+o' || w === '-O' || w === '+O')
      j++; // shell option name follows
    else if (!w.startsWith('--') && w.startsWith('-') && w.includes('c')) return words[j + 1]?.value ?? '';
  }
  return undefined;
}

/**
 * Per wrapper: its short options that take a value (so the value is not mistaken for the
 * command), its long options (`value`: the next word is the value unless written `--opt=value`;
 * `flags`: no value, or one only after `=`), and how many positional words precede the command.
 * A long option that is neither, or an abbreviation that fits several (getopt accepts a unique
 * prefix), makes the command unanalysable rather than guessed at: a wrong guess either way can
 * put the real command where a rule does not look.
 */
interface Wrapper {
  valueOpts: string;
  long?: { value: string[]; flags: string[] };
  positional?: number;
  documented: boolean;
}
const HELP = ['help', 'version'];
const WRAPPERS = new Map<string, Wrapper>([
  [
    'timeout',
    {
      valueOpts: 'sk',
      long: { value: ['signal', 'kill-after'], flags: ['foreground', 'preserve-status', 'verbose', ...HELP] },
      positional: 1,
      documented: true,
    },
  ],
  [
    'time',
    {
      valueOpts: 'fo',
      long: { value: ['format', 'output'], flags: ['append', 'verbose', 'portability', 'quiet', ...HELP] },
      documented: true,
    },
  ],
  ['nice', { valueOpts: 'n', long: { value: ['adjustment'], flags: HELP }, documented: true }],
  ['nohup', { valueOpts: '', long: { value: [], flags: HELP }, documented: true }],
  ['stdbuf', { valueOpts: 'ioe', long: { value: ['input', 'output', 'error'], flags: HELP }, documented: true }],
  [
    'env',
    {
      valueOpts: 'uCSa',
      long: {
        value: ['unset', 'chdir', 'split-string', 'argv0'],
        flags: ['ignore-environment', 'null', 'debug', 'block-signal', 'default-signal', 'ignore-signal', 'list-signal-handling', ...HELP],
      },
      documented: false,
    },
  ],
  [
    'sudo',
    {
      valueOpts: 'ugCDhprtUTRac',
      long: {
        value: [
          'user',
          'group',
          'close-from',
          'chdir',
          'host',
          'prompt',
          'role',
          'type',
          'other-user',
          'command-timeout',
          'chroot',
          'auth-type',
          'login-class',
        ],
        flags: [
          'askpass',
          'background',
          'bell',
          'edit',
          'login',
          'list',
          'non-interactive',
          'preserve-groups',
          'preserve-env',
          'remove-timestamp',
          'reset-timestamp',
          'shell',
          'stdin',
          'validate',
          'set-home',
          ...HELP,
        ],
      },
      documented: false,
    },
  ],
  ['doas', { valueOpts: 'uC', documented: false }],
  ['command', { valueOpts: '', documented: false }],
  ['builtin', { valueOpts: '', documented: false }],
  ['exec', { valueOpts: 'a', documented: false }],
  [
    'xargs',
    {
      valueOpts: 'adEeIiLlnPs',
      long: {
        value: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
        flags: [
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
          ...HELP,
        ],
      },
      documented: false,
    },
  ],
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
/**
 * Redirection operators but here-documents (`<<`, `<<-`), longest first: the splitter ends a word
 * at each (bash-split.ts), and `REDIRECT` below recognises the words they start.
 */
export const REDIRECTIONS = ['&>>', '&>', '<<<', '>>', '>&', '>|', '<&', '<>', '>', '<'];
/** A file descriptor named by a variable: `{fd}>log`. */
const FD_VARIABLE = /\{[A-Za-z_][A-Za-z0-9_]*\}/.source;
/** The file descriptor a redirection may start with, as a whole word: `2`, `{fd}` (unquoted). */
export const FD_PREFIX = new RegExp(`^(?:\\d+|${FD_VARIABLE})$`);
/**
 * A redirection word: `>f`, `2>>f`, `<f`, `&>f`, `{fd}>f`, or an operator whose target is the
 * next word (`>& f`, `<> f`: the longer operators are tried first, so `&` or `>` is not taken for
 * the target). `&>` takes no file descriptor; the others, and a here-document's `<<`, may.
 */
const REDIRECT = new RegExp(
  `^(?:&>>?|(?:\\d*|${FD_VARIABLE})(?:${[...REDIRECTIONS.filter((r) => r[0] !== '&'), '<<']
    .sort((a, b) => b.length - a.length)
    .map((r) => r.replace('|', '\\|'))
    .join('|')}))(.*)$`,
  's',
);

/**
 * Index of the word that names the command actually run, past wrappers such as `timeout 5`,
 * `nice -n 10`, `nohup`. `documented` strips only the wrappers Claude Code strips before matching
 * allow rules; `all` also strips `VAR=value` prefixes, `env`, `sudo`, `xargs`, … (used for deny
 * and ask rules, so `sudo rm -rf x` still meets `Bash(rm:*)`).
 */
export function commandStart(words: readonly BashWord[], which: 'documented' | 'all'): number {
  let k = 0;
  for (;;) {
    while (which === 'all' && k < words.length) {
      const v = words[k]!.value;
      const redirect = REDIRECT.exec(v);
      if (words[k]!.plain && ASSIGNMENT.test(v)) k++;
      else if (redirect) k += redirect[1] ? 1 : 2;
      else break;
    }
    const w = words[k];
    const spec = w ? WRAPPERS.get(basename(w.value)) : undefined;
    if (!w || !spec || (which === 'documented' && !spec.documented)) return k;
    k++;
    while (k < words.length) {
      const opt = words[k]!.value;
      if (opt === '--') {
        k++;
        break;
      }
      const env = basename(w.value) === 'env';
      if (env && ASSIGNMENT.test(opt)) k++;
      else if (opt.startsWith('--')) k += longOptionWords(basename(w.value), spec, opt);
      // `env -` is `env -i`: the command follows it.
      else if (opt.startsWith('-') && (opt.length > 1 || env)) k += shortOptionWords(basename(w.value), spec, opt);
      else break;
    }
    k += spec.positional ?? 0;
  }
}

/** Words a cluster of short options takes: `-iu root` is `-i -u root`, `-uroot` carries its value. */
function shortOptionWords(wrapper: string, spec: Wrapper, opt: string): number {
  for (let i = 1; i < opt.length; i++) {
    if (wrapper === 'env' && opt[i] === 'S') throw new Unanalysable(SPLIT_STRING);
    if (spec.valueOpts.includes(opt[i]!)) return i === opt.length - 1 ? 2 : 1;
  }
  return 1;
}

/** Words a long option takes (1 or 2); throws Unanalysable for one the wrapper does not have. */
function longOptionWords(wrapper: string, spec: Wrapper, opt: string): number {
  const eq = opt.indexOf('=');
  const name = opt.slice(2, eq < 0 ? undefined : eq);
  const known = [...(spec.long?.value ?? []), ...(spec.long?.flags ?? [])];
  const fits = known.includes(name) ? [name] : known.filter((o) => o.startsWith(name));
  if (name === '' || fits.length !== 1) {
    throw new Unanalysable(`'${wrapper} ${opt}' is ${fits.length > 1 ? 'an ambiguous' : 'an unknown'} option`);
  }
  if (wrapper === 'env' && fits[0] === 'split-string') throw new Unanalysable(SPLIT_STRING);
  return eq < 0 && spec.long!.value.includes(fits[0]!) ? 2 : 1;
}

/** `env -S 'cmd args'` runs a command line held in one word; it is not split here. */
const SPLIT_STRING = "'env -S' (a command line in one argument) is not analysed";
