import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { BASH_INTERRUPTED_MESSAGE, createToolOps, lastCommandName } from '../../src/activities/tools';
import { call, processesNamed, removeTempDirs, tempDir } from './helpers';
import { parseSandboxOption } from '../../src/shared/sandbox';
import { createAttemptJournal } from '../../src/activities/tools/attempts';
import { readIfExists } from '../helpers/exists';
import { waitFor } from '../helpers/wait';

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const bash = (input: Record<string, unknown>, opts = {}) => call(cwd, 'Bash', input, opts);

describe('Bash output', () => {
  test('stdout and stderr combined, in the working directory', async () => {
    const out = await bash({ command: 'echo out; echo err >&2; pwd' });
    expect(out).toMatchObject({ content: `out\nerr\n${cwd}`, isError: false });
  });

  test('no output', async () => {
    expect((await bash({ command: 'true' })).content).toBe('(Bash completed with no output)');
  });

  test('a non-zero exit is an error with an Exit code line', async () => {
    const out = await bash({ command: 'echo failing; exit 3' });
    expect(out).toMatchObject({ content: 'failing\nExit code 3', isError: true });
  });

  test('exit 1 from grep, diff, test and [ is an answer, not an error', async () => {
    await fs.writeFile(path.join(cwd, 'a'), 'x\n');
    await fs.writeFile(path.join(cwd, 'b'), 'y\n');
    expect(await bash({ command: 'grep nothing a' })).toMatchObject({ content: 'Exit code 1', isError: false });
    expect(await bash({ command: 'cat a | grep "no|thing" 2>&1' })).toMatchObject({ content: 'Exit code 1', isError: false });
    expect(await bash({ command: 'diff a b' })).toMatchObject({
      content: '1c1\n< x\n---\n> y\nExit code 1',
      isError: false,
    });
    expect(await bash({ command: 'test -f missing' })).toMatchObject({ content: 'Exit code 1', isError: false });
    expect(await bash({ command: '[ 1 = 2 ]' })).toMatchObject({ content: 'Exit code 1', isError: false });
    // grep's exit 2 (trouble) is an error, and so is exit 1 from anything else
    expect(await bash({ command: 'grep x missing-file' })).toMatchObject({
      content: 'grep: missing-file: No such file or directory\nExit code 2',
      isError: true,
    });
    expect(await bash({ command: 'false' })).toMatchObject({ content: 'Exit code 1', isError: true });
  });

  test('lastCommandName finds the command whose status is the exit code', () => {
    expect(lastCommandName('cd x && FOO=1 /usr/bin/grep -r "a|b" . 2>&1')).toBe('grep');
    expect(lastCommandName("echo 'x; y' | rg z")).toBe('rg');
    expect(lastCommandName('grep a b; make')).toBe('make');
  });

  test('output beyond 30000 characters is cut with a note of what was cut', async () => {
    const out = await bash({ command: 'for i in $(seq 1 10000); do echo "line $i"; done' });
    // "line 1".."line 10000" + newlines = 88894 characters
    const full = Array.from({ length: 10000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const head = full.slice(0, 30000).replace(/\n+$/, '');
    const cut = full.length - 30000;
    const cutLines = full.slice(30000).split('\n').length - 1 + (full.slice(30000).endsWith('\n') ? 0 : 1);
    expect(out.isError).toBe(false);
    expect(out.content).toBe(
      `${head}\n\n... [${cutLines} lines (${cut} characters) truncated] ...\n` +
        '(Output is limited to 30000 characters. Redirect it to a file in the workspace and inspect that ' +
        'with Read (offset/limit) or Grep, or pipe it through head/tail.)',
    );
  });

  test('timeout kills the process group and says so', async () => {
    const started = Date.now();
    const out = await bash({ command: 'echo before; sleep 20 & sleep 20; echo never', timeout: 500 });
    expect(out).toMatchObject({ content: 'before\nCommand timed out after 0.5s', isError: true });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('timeout above the maximum is invalid input', async () => {
    expect((await bash({ command: 'true', timeout: 600_001 })).content).toBe(
      'InputValidationError: Bash failed due to the following issue:\n' +
        'The parameter `timeout` is invalid: Too big: expected number to be <=600000',
    );
  });

  test('heartbeats {started: true} before spawning', async () => {
    const heartbeats: unknown[] = [];
    await bash({ command: 'true' }, { heartbeats });
    expect(heartbeats[0]).toEqual({ started: true });
  });
});

describe('Bash environment (ARCHITECTURE.md#secrets-stay-on-workers)', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  test("the child sees none of the worker's secrets, and the session env is passed through", async () => {
    process.env.OPENAI_API_KEY = 'sk-worker';
    process.env.TEMPORAL_ADDRESS = 'localhost:7233';
    process.env.GITHUB_TOKEN = 'ghp-worker';
    process.env.MY_DB_SECRET_PASSWORD = 'pw';
    process.env.CUSTOM_PRIVATE = 'custom';
    process.env.DURABLE_AGENT_SCRUB_ENV = 'CUSTOM_PRIVATE';
    process.env.HARMLESS_SETTING = 'kept';
    const out = await bash({ command: 'env | sort' }, { ctx: { env: { SESSION_VAR: 'from-session' } }, ops: createToolOps() });
    const names = out.content.split('\n').map((l) => l.split('=')[0]);
    for (const secret of [
      'OPENAI_API_KEY',
      'TEMPORAL_ADDRESS',
      'GITHUB_TOKEN',
      'MY_DB_SECRET_PASSWORD',
      'CUSTOM_PRIVATE',
      'DURABLE_AGENT_SCRUB_ENV',
    ]) {
      expect(names).not.toContain(secret);
    }
    // By allowlist (ARCHITECTURE.md#secrets-stay-on-workers): a harmless-looking name of the worker's is not passed either.
    expect(names).not.toContain('HARMLESS_SETTING');
    expect(out.content).toContain(`PATH=${process.env.PATH}`);
    expect(out.content).toContain('SESSION_VAR=from-session');
    expect(out.content).not.toMatch(/sk-worker|ghp-worker|localhost:7233/);
  });

  test('the scrub list can also be passed in the ops, and wins over DURABLE_AGENT_PASS_ENV', async () => {
    process.env.ANOTHER_PRIVATE = 'x';
    process.env.DURABLE_AGENT_PASS_ENV = 'ANOTHER_PRIVATE';
    try {
      const echo = { command: 'echo "[${ANOTHER_PRIVATE:-unset}]"' };
      expect((await bash(echo, { opsOptions: {} })).content).toBe('[x]');
      expect((await bash(echo, { opsOptions: { scrubEnvNames: ['ANOTHER_*'] } })).content).toBe('[unset]');
    } finally {
      delete process.env.DURABLE_AGENT_PASS_ENV;
    }
  });
});

describe('Bash cancellation and retries', () => {
  // Sandboxed, bwrap's PID namespace hides the children's numbers: find them by name instead.
  test.each(['off', 'auto'] as const)('abort kills everything the command started (sandbox %s)', async (mode) => {
    const name = `da-abort-${mode}-${process.pid}-${Date.now()}`;
    const started = path.join(cwd, 'started');
    const ac = new AbortController();
    const running = bash(
      { command: `(exec -a ${name} sleep 30) & (exec -a ${name} sleep 30) & echo yes > ${started}; wait` },
      { signal: ac.signal, ctx: { sandbox: parseSandboxOption(mode) } },
    );
    await waitFor('both sleeps and the started file', () => processesNamed(name).length === 2 && readIfExists(started) !== undefined);
    ac.abort();
    const out = await running;
    expect(out).toMatchObject({
      content: 'Command was aborted before completion',
      isError: true,
      structured: { sandboxed: mode === 'auto' },
    });
    await waitFor('everything the command started to end', () => processesNamed(name).length === 0);
    expect(processesNamed(name)).toEqual([]);
  });

  test('attempt 2 after a started attempt does not run the command again (ARCHITECTURE.md#side-effects-reported-as-unknown)', async () => {
    const log = path.join(cwd, 'log');
    const command = `echo ran >> ${log}`;
    const out = await bash({ command }, { attempt: 2, previousHeartbeat: { started: true, elapsedMs: 3000 } });
    expect(out).toMatchObject({ content: BASH_INTERRUPTED_MESSAGE, isError: true });
    expect(out.content).toBe(
      'The previous attempt of this command was interrupted (worker lost) and its effects are unknown. ' +
        'Inspect the workspace before retrying it.',
    );
    await expect(fs.readFile(log, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  test('attempt 2 finds the durable journal entry even when the heartbeat never reached the server', async () => {
    const log = path.join(cwd, 'log');
    const ops = createToolOps({ attempts: createAttemptJournal(await tempDir('da-journal-')) });
    const command = `echo ran >> ${log}`;
    const first = await call(cwd, 'Bash', { command }, { ops, attempt: 1, attemptKey: 'wf/run/7' });
    expect(first.isError).toBe(false);
    // The worker "died" before its heartbeat landed: no previousHeartbeat on the retry.
    const retry = await call(cwd, 'Bash', { command }, { ops, attempt: 2, attemptKey: 'wf/run/7' });
    expect(retry).toMatchObject({ content: BASH_INTERRUPTED_MESSAGE, isError: true });
    expect(await fs.readFile(log, 'utf8')).toBe('ran\n');
    // Another activity (another key) is unaffected.
    const other = await call(cwd, 'Bash', { command }, { ops, attempt: 2, attemptKey: 'wf/run/8' });
    expect(other.isError).toBe(false);
  });

  test('attempt 2 whose predecessor never started runs normally', async () => {
    const log = path.join(cwd, 'log');
    const out = await bash({ command: `echo ran >> ${log}; cat ${log}` }, { attempt: 2 });
    expect(out).toMatchObject({ content: 'ran', isError: false });
  });
});
