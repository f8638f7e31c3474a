/** runVerify: the command runs in the workspace like Bash, sandbox included (docs/ARCHITECTURE.md#workspaces). */
import * as fs from 'node:fs';
import path from 'node:path';
import { parseSandboxOption } from '../../src/shared/sandbox';
import type { RunVerifyInput, WorkspaceActivities } from '../../src/shared/workspace';
import { mirrorPaths } from '../../src/activities/workspace/layout';
import { VERIFY_TAIL_BYTES } from '../../src/activities/workspace/verify';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import { activities, git, makeOrigin, type Origin } from './helpers';

jest.setTimeout(60_000);

// Outside /tmp: the sandbox gives each session a private /tmp.
let dir: string;
let root: string;
let origin: Origin;
let acts: WorkspaceActivities;
let ws: { path: string; base: string };
beforeAll(async () => {
  dir = varTmpDir('da-wsv-');
  root = path.join(dir, 'root');
  origin = makeOrigin(dir);
  acts = activities(root);
  ws = await acts.provisionWorkspace({ sessionId: 'v', workspace: { git: origin.url, ref: 'main' } });
});
afterAll(() => removeVarTmpDirs());

const input = (command: string, extra: Partial<RunVerifyInput> = {}): RunVerifyInput => ({
  sessionId: 'v',
  path: ws.path,
  command,
  timeoutMs: 20_000,
  env: {},
  sandbox: parseSandboxOption('required'),
  additionalDirectories: [],
  ...extra,
});

test('exit 0: pass, with the output', async () => {
  const r = await acts.runVerify(input('cat a.txt; echo to-stderr >&2'));
  expect(r).toMatchObject({ verdict: 'pass', exitCode: 0, outputTail: 'two\nto-stderr\n' });
  expect(r.error).toBeUndefined();
  expect(r.durationMs).toBeGreaterThanOrEqual(0);
});

test('non-zero: fail, with its exit code', async () => {
  expect(await acts.runVerify(input('echo failing; exit 3'))).toMatchObject({ verdict: 'fail', exitCode: 3, outputTail: 'failing\n' });
});

test('hangs: stopped at its timeout, verdict error', async () => {
  const started = Date.now();
  const r = await acts.runVerify(input('echo started; sleep 30', { timeoutMs: 1_000 }));
  expect(r).toMatchObject({ verdict: 'error', exitCode: null, outputTail: 'started\n' });
  expect(r.error).toMatch(/timed out after 1000 ms/);
  expect(Date.now() - started).toBeLessThan(15_000);
});

test('could not run: error', async () => {
  const missing = await acts.runVerify(input('true', { path: path.join(dir, 'gone') }));
  expect(missing).toMatchObject({ verdict: 'error', exitCode: null });
  expect(missing.error).toMatch(/^could not run: the workspace .*gone is not a directory/);
  // A session that requires the sandbox, on a worker without one: refused, never run.
  const noSandbox = activities(root, undefined, { bwrapPath: null });
  const marker = path.join(ws.path, 'ran');
  const refused = await noSandbox.runVerify(input(`touch ${marker}`));
  expect(refused).toMatchObject({ verdict: 'error', exitCode: null });
  expect(refused.error).toMatch(/^could not run: .*requires a sandbox/);
  expect(fs.existsSync(marker)).toBe(false);
});

test('the output tail is the last 4 KiB', async () => {
  const r = await acts.runVerify(input(`for i in $(seq 1 2000); do echo "line $i é"; done; echo END`));
  expect(Buffer.byteLength(r.outputTail)).toBeLessThanOrEqual(VERIFY_TAIL_BYTES);
  expect(Buffer.byteLength(r.outputTail)).toBeGreaterThan(VERIFY_TAIL_BYTES - 8);
  expect(r.outputTail.endsWith('line 2000 é\nEND\n')).toBe(true);
});

test("sandboxed like Bash: the session's env, the worker's secrets out, the folder writable, the mirror read-only", async () => {
  const mirror = mirrorPaths(root, origin.url).dir;
  process.env.DA_TEST_WORKER_SECRET_TOKEN = 'worker-secret';
  try {
    const r = await acts.runVerify(
      input(
        [
          'echo "env=$FROM_SESSION secret=${DA_TEST_WORKER_SECRET_TOKEN:-none}"',
          'echo made > made.txt && echo wrote-folder',
          `touch ${mirror}/evil 2>/dev/null && echo wrote-mirror || echo mirror-read-only`,
          'git log --format=%s -1',
        ].join('; '),
        { env: { FROM_SESSION: 'yes' }, additionalDirectories: [root] },
      ),
    );
    expect(r).toMatchObject({ verdict: 'pass' });
    expect(r.outputTail).toBe('env=yes secret=none\nwrote-folder\nmirror-read-only\ntwo\n');
    expect(fs.existsSync(path.join(mirror, 'evil'))).toBe(false);
    expect(fs.readFileSync(path.join(ws.path, 'made.txt'), 'utf8')).toBe('made\n');
    expect(git(ws.path, 'rev-parse', 'HEAD')).toBe(origin.main);
  } finally {
    delete process.env.DA_TEST_WORKER_SECRET_TOKEN;
  }
});
