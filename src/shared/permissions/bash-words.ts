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

/** Options that take a value, per wrapper (so the value is not mistaken for the command). */
const WRAPPERS = new Map<string, { valueOpts: string; positional?: number; documented: boolean }>([
  ['timeout', { valueOpts: 'sk', positional: 1, documented: true }],
  ['time', { valueOpts: 'fo', documented: true }],
  ['nice', { valueOpts: 'n', documented: true }],
  ['nohup', { valueOpts: '', documented: true }],
  ['stdbuf', { valueOpts: 'ioe', documented: true }],
  ['env', { valueOpts: 'uCS', documented: false }],
  ['sudo', { valueOpts: 'ugCDhprtU', documented: false }],
  ['doas', { valueOpts: 'uC', documented: false }],
  ['command', { valueOpts: '', documented: false }],
  ['builtin', { valueOpts: '', documented: false }],
  ['exec', { valueOpts: 'a', documented: false }],
  ['xargs', { valueOpts: 'adEeIiLlnPs', documented: false }],
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
/** A redirection word: `>f`, `2>>f`, `<f`, `&>f`, or an operator whose target is the next word. */
const REDIRECT = /^(?:\d*|&)(?:>>?|<<?<?|>&|<&|>\|)(.*)$/s;

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
      // `env -` is `env -i`: the command follows it.
      else if (opt.startsWith('-') && (opt.length > 1 || env)) k += opt.length === 2 && spec.valueOpts.includes(opt[1]!) ? 2 : 1;
      else break;
    }
    k += spec.positional ?? 0;
  }
}
