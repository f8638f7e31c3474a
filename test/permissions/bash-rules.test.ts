/**
 * Bash rules on a real parse (ARCHITECTURE.md#bash-rules-on-a-real-parse): the decision over the
 * tools worker's analysis, with the real tree-sitter parser. The corpus runs through the real
 * worker with the sandbox on in bypass-e2e.test.ts; here every entry is decided, and the
 * generated compositions are also run by real bash to prove each one is an attack that works.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { analyseBash } from '../../src/activities/permissions';
import { evaluatePermission, parseRules, type PermissionDecision } from '../../src/shared/permissions';
import type { PermissionMode } from '../../src/shared/permission-mode';
import { DENY_CORPUS, SMUGGLE_CORPUS } from './bypass-corpus';

async function decide(
  command: string,
  mode: PermissionMode,
  lists: { allow?: string[]; deny?: string[]; ask?: string[] },
): Promise<PermissionDecision> {
  return evaluatePermission({
    toolName: 'Bash',
    input: { command },
    readOnly: false,
    mode,
    rules: parseRules(lists),
    workspace: { cwd: '/w' },
    bash: await analyseBash(command),
  });
}

jest.setTimeout(120_000);

const denyRm = (c: string) => decide(c, 'bypassPermissions', { deny: ['Bash(rm:*)'] });
const echoLs = (c: string) => decide(c, 'dontAsk', { allow: ['Bash(echo:*)', 'Bash(ls:*)'] });

describe('the bypass corpus, decided', () => {
  test('has at least 60 ways to run rm and 25 smuggles, each distinct', () => {
    expect(new Set(DENY_CORPUS).size).toBe(DENY_CORPUS.length);
    expect(DENY_CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(SMUGGLE_CORPUS).size).toBe(SMUGGLE_CORPUS.length);
    expect(SMUGGLE_CORPUS.length).toBeGreaterThanOrEqual(25);
  });

  test.each(DENY_CORPUS.map((c, i) => [i, c.replaceAll('{V}', `v${i}`)]))('Bash(rm:*) denies #%i: %s', async (_i, command) => {
    const d = await denyRm(command);
    expect(d.behavior).toBe('deny');
  });

  test.each(SMUGGLE_CORPUS.map((c, i) => [i, c.replaceAll('{V}', `x${i}`)]))('echo/ls allow list refuses #%i: %s', async (_i, command) => {
    const d = await echoLs(command);
    expect(d.behavior).toBe('deny');
  });
});

describe('the bypass corpus is real', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'da-bash-corpus-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Without rules, bash deletes every victim: each entry is an attack that works, not a string that merely looks like one.
  test.each([
    ['deny', DENY_CORPUS],
    ['smuggle', SMUGGLE_CORPUS],
  ] as const)('every %s entry deletes its victim when bash runs it without rules', async (_kind, corpus) => {
    const kept: string[] = [];
    for (const [i, template] of corpus.entries()) {
      const victim = path.join(dir, `victim${i}`);
      writeFileSync(victim, 'x');
      spawnSync('bash', ['-c', template.replaceAll('{V}', `victim${i}`)], { cwd: dir, stdio: 'ignore', timeout: 10_000 });
      // A process substitution may still be running when bash exits: give it a moment to act.
      for (let t = 0; t < 50 && existsSync(victim); t++) await new Promise((r) => setTimeout(r, 100));
      if (existsSync(victim)) kept.push(template);
    }
    expect(kept).toEqual([]);
  });
});

describe('what rules still allow', () => {
  test.each([
    ['git status && npm test', ['Bash(git status)', 'Bash(npm test:*)']],
    ['timeout 60 npm test -- --watch=false', ['Bash(npm test:*)']],
    ['nice -n 5 npm run build', ['Bash(npm run build)']],
    ['ls -la | grep x > out.txt', ['Bash(ls:*)', 'Bash(grep:*)']],
    ['echo "a; rm x" && ls', ['Bash(echo:*)', 'Bash(ls:*)']],
    ["echo 'rm -f v' # not run", ['Bash(echo:*)']],
    ['true && echo $HOME', ['Bash(echo:*)']],
    ['for f in a b; do echo "$f"; done', ['Bash(echo:*)']],
  ])('%s', async (command, allow) => {
    expect((await decide(command, 'dontAsk', { allow })).behavior).toBe('allow');
  });

  test.each(['git status', 'npm test -- --grep rm', 'echo rm -f v', 'ls -la $HOME', 'cat <<EOF\nrm -f v\nEOF'])(
    'Bash(rm:*) does not deny %s',
    async (command) => {
      expect((await denyRm(command)).behavior).toBe('allow');
    },
  );

  test('a deny rule for a subcommand sees through a computed argument, and says so', async () => {
    const d = await decide('git push --for$(echo ce) origin', 'bypassPermissions', { deny: ['Bash(git push --force:*)'] });
    expect(d.behavior).toBe('deny');
    const status = await decide('git status $HOME', 'bypassPermissions', { deny: ['Bash(git push:*)'] });
    expect(status.behavior).toBe('allow');
  });

  test('an unknown command names the reason and the rule', async () => {
    const d = await denyRm('x=rm; $x -f v');
    expect(d.behavior).toBe('deny');
    if (d.behavior !== 'deny') return;
    expect(d.message).toContain('command name is computed at run time');
    expect(d.message).toContain('Bash(rm:*)');
  });

  test('a parse error is unknown: denied under a deny rule, asked about otherwise', async () => {
    expect((await denyRm('echo (')).behavior).toBe('deny');
    const d = await decide('echo (', 'default', { allow: ['Bash(echo:*)'] });
    expect(d.behavior).toBe('ask');
  });
});

/** Random compositions of the constructs above around `rm -f V`; each is run by bash to prove it works. */
describe('generated compositions', () => {
  const names = ['rm', '\\rm', "'rm'", '"rm"', 'r""m', "$'\\x72m'", '/bin/rm', '/usr/bin/rm', '{rm,-f}'];
  const wrappers = ['', 'timeout 5 ', 'nice -n 1 ', 'env ', 'command ', 'setsid -w ', 'stdbuf -o0 ', 'time ', 'env FOO=1 ', 'nice '];
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const containers: ((c: string) => string)[] = [
    (c) => `bash -c ${q(c)}`,
    (c) => `bash -c -- ${q(c)}`,
    (c) => `eval ${q(c)}`,
    (c) => `( ${c} )`,
    (c) => `{ ${c}; }`,
    (c) => `if true; then ${c}; fi`,
    (c) => `true && ${c}`,
    (c) => `false || ${c}`,
    (c) => `echo $(${c})`,
    (c) => `g() { ${c}; }; g`,
    (c) => `bash <<< ${q(c)}`,
    (c) => `trap ${q(c)} EXIT`,
    (c) => `: | { ${c}; }`,
    (c) => `for i in 1; do ${c}; done`,
  ];
  // A deterministic generator: the same compositions on every run, so a failure can be reproduced.
  let seed = 0x2545f491;
  const rand = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return Math.abs(seed) % n;
  };
  const generated: string[] = [];
  for (let i = 0; i < 200; i++) {
    const name = names[rand(names.length)]!;
    let cmd = name === '{rm,-f}' ? `{rm,-f,V}` : `${wrappers[rand(wrappers.length)]}${name} -f V`;
    for (let depth = rand(4); depth > 0; depth--) cmd = containers[rand(containers.length)]!(cmd);
    generated.push(cmd);
  }

  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'da-bash-gen-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('every composition deletes its victim when bash runs it without rules, and Bash(rm:*) denies it', async () => {
    const failures: string[] = [];
    for (const [i, template] of generated.entries()) {
      const victim = `g${i}`;
      const command = template.replaceAll('V', victim);
      writeFileSync(path.join(dir, victim), 'x');
      spawnSync('bash', ['-c', command], { cwd: dir, stdio: 'ignore', timeout: 10_000 });
      if (existsSync(path.join(dir, victim))) failures.push(`not an attack (bash left the victim): ${command}`);
      const d = await denyRm(command);
      if (d.behavior !== 'deny') failures.push(`allowed: ${command}`);
    }
    expect(failures).toEqual([]);
  });
});
