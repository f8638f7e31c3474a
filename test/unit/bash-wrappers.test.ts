/**
 * Wrapper options and deny rules (src/shared/permissions/bash-words.ts): the command a wrapper
 * runs is found past its options however they are written — long options with their value in the
 * next word, `--opt=value`, unique abbreviations, short options run together — and an option the
 * wrapper does not have makes the command unanalysable instead of guessed at.
 */
import { evaluatePermission, parseRules, type PermissionDecision } from '../../src/shared/permissions';
import { splitBashCommand } from '../../src/shared/permissions/bash-split';
import { commandStart } from '../../src/shared/permissions/bash-words';

function bash(command: string, rules: { allow?: string[]; deny?: string[] }): PermissionDecision {
  return evaluatePermission({
    toolName: 'Bash',
    input: { command },
    readOnly: false,
    mode: 'default',
    rules: parseRules(rules),
    workspace: { cwd: '/proj', homeDir: '/home/u', additionalDirectories: [] },
  });
}

/** The words from the command's start on, as the deny rules see them. */
function command(text: string): string {
  const split = splitBashCommand(text);
  expect(split.problem).toBeUndefined();
  const words = split.parts[0]!.words;
  return words
    .slice(commandStart(words, 'all'))
    .map((w) => w.value)
    .join(' ');
}

describe('the command past a wrapper’s options', () => {
  it.each([
    ['a long option whose value is the next word', 'timeout --signal KILL 5 rm -rf x'],
    ['the same with =', 'timeout --signal=KILL 5 rm -rf x'],
    ['a unique abbreviation of it', 'timeout --sig KILL 5 rm -rf x'],
    ['two long options with values', 'timeout --signal KILL --kill-after 2 5 rm -rf x'],
    ['a long flag', 'timeout --foreground 5 rm -rf x'],
    ['sudo --user', 'sudo --user root rm -rf x'],
    ['sudo --chdir', 'sudo --chdir /tmp rm -rf x'],
    ['nice --adjustment', 'nice --adjustment 5 rm -rf x'],
    ['xargs --max-args', 'xargs --max-args 1 rm -rf x'],
    ['xargs --replace= takes its value only after =', 'xargs --replace={} rm -rf x'],
    ['stdbuf --output', 'stdbuf --output L rm -rf x'],
    ['env --unset', 'env --unset HOME rm -rf x'],
    ['short options run together, the last taking a value', 'sudo -iu root rm -rf x'],
    ['a short option carrying its value', 'sudo -uroot rm -rf x'],
    ['timeout -k5: the value attached', 'timeout -k5 5 rm -rf x'],
    ['nested wrappers', 'sudo --user root nice --adjustment 5 timeout --signal KILL 5 rm -rf x'],
  ])('%s', (_name, text) => {
    expect(command(text)).toBe('rm -rf x');
    const d = bash(text, { allow: ['Bash'], deny: ['Bash(rm:*)'] });
    expect(d).toMatchObject({ behavior: 'deny', reason: 'rule' });
    expect(d.matched[0]).toMatchObject({ rule: 'Bash(rm:*)' });
    expect(d.matched[0]!.unchecked).toBeUndefined();
  });

  it('a long flag takes no value: the allow rule sees the command after it', () => {
    expect(bash('timeout --foreground 5 npm test', { allow: ['Bash(npm test)'] }).behavior).toBe('allow');
    expect(bash('timeout --preserve-status --signal TERM 5 npm test', { allow: ['Bash(npm test)'] }).behavior).toBe('allow');
    expect(bash('timeout --foreground 5 npm publish', { allow: ['Bash(npm test)'] }).behavior).toBe('ask');
  });
});

describe('options that make the command unanalysable', () => {
  it.each([
    ['env -S: the command line is one argument', "env -S 'rm -rf x'", /'env -S'/],
    ['env --split-string', "env --split-string 'rm -rf x'", /'env -S'/],
    ['env -S among other short options', "env -iS 'rm -rf x'", /'env -S'/],
    ['an option the wrapper does not have', 'sudo --frobnicate rm -rf x', /'sudo --frobnicate' is an unknown option/],
    ['an abbreviation that fits several', 'sudo --pre rm -rf x', /'sudo --pre' is an ambiguous option/],
    ['a long option for a wrapper that has none', 'doas --user root rm -rf x', /'doas --user' is an unknown option/],
  ])('%s', (_name, text, why) => {
    expect(splitBashCommand(text).problem).toMatch(why);
    const d = bash(text, { allow: ['Bash'], deny: ['Bash(rm:*)'] });
    expect(d.behavior).toBe('deny');
    expect(d.matched[0]!.unchecked).toEqual(expect.any(String));
    // Without a deny rule, the bare tool still allows it; a Bash(…) rule does not.
    expect(bash(text, { allow: ['Bash'] }).behavior).toBe('allow');
    expect(bash(text, { allow: ['Bash(sudo *)', 'Bash(env *)', 'Bash(doas *)'] }).behavior).toBe('ask');
  });
});
