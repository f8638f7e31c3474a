/**
 * Losing the tools host (ARCHITECTURE.md#checkpoints): two tools workers act as two hosts on one
 * machine — each in its own mount and UTS namespace, with its own folder bound at the same
 * workspaces root and its own host name. The session's folder is made on the first; the first is
 * SIGKILLed mid-command and its folder deleted; the session goes on on the second from its last
 * checkpoint, with the system note in its transcript. Without a checkpoint in a remote (none set, or
 * one that cannot be reached) it ends with a clear error instead of waiting.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { checkpointsQuery, transcriptQuery } from '../../src/shared/api';
import type { SessionEvent } from '../../src/shared/events';
import { spawnToolsHost, type WorkerProcess } from '../helpers/chaos';
import { startHarness, type Harness } from '../helpers/harness';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import { cli } from '../cli/helpers';

jest.setTimeout(420_000);

let h: Harness;
const workers: WorkerProcess[] = [];
const base = varTmpDir('da-hostloss-');
/** The workspaces root: the same path on both hosts, a different folder behind it on each. */
const ROOT = path.join(base, 'root');

beforeAll(async () => {
  h = await startHarness({ roles: ['workflow', 'model'] });
  mkdirSync(ROOT, { recursive: true });
}, 180_000);

// Each test's hosts are its own: a host left polling the shared tools queue would serve the next test.
afterEach(async () => {
  for (const w of workers.splice(0)) await w.kill().catch(() => undefined);
});

afterAll(async () => {
  await h?.close();
  removeVarTmpDirs();
});

/** A tools worker as host `name`: its own /var/tmp folder bound at ROOT, its own host name. */
async function host(name: string, env: Record<string, string>): Promise<WorkerProcess & { dir: string }> {
  const dir = path.join(base, name);
  mkdirSync(dir, { recursive: true });
  const w = spawnToolsHost({ address: h.address, modelUrl: h.model.url, taskQueue: h.taskQueue, name, dir, root: ROOT, env });
  workers.push(w);
  await w.ready;
  return Object.assign(w, { dir });
}

function template(): string {
  const dir = path.join(base, `template-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'README'), 'a project\n');
  return dir;
}

const events = (ms: SessionEvent[], subtype: string) => ms.filter((m) => m.type === 'system' && m.subtype === subtype) as never[];

async function waitFor(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the host is SIGKILLed mid-command and its folder deleted: the session finishes on the second host from its last checkpoint', async () => {
  const remote = path.join(base, 'checkpoints-remote.git');
  execFileSync('git', ['init', '--quiet', '--bare', remote]);
  const env = { DURABLE_AGENT_CHECKPOINT_REMOTE: remote };
  const a = await host('host-a', env);
  const started = path.join(base, 'started');
  const gate = h.gate();
  const handle = await h.start(
    {
      name: 'host-loss',
      turns: [
        turn.tool('Bash', { command: 'echo one > a.txt' }),
        // Runs on host A until the test kills it; run again on host B after the restore.
        turn.tool('Bash', { command: `echo two > b.txt && touch ${started} && ${gate.command} && echo three > c.txt` }),
        turn.text('done'),
      ],
    },
    { workspace: { copy: template() }, workspaceHostTimeoutMs: 3_000, heartbeatTimeoutMs: 5_000 },
  );
  const messages: SessionEvent[] = [];
  const reading = (async () => {
    for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  })();
  let checkpointCount = 0;
  const polling = setInterval(() => {
    handle.workflow.query(checkpointsQuery).then(
      (v) => (checkpointCount = v.checkpoints.length),
      () => undefined,
    );
  }, 200);
  // Host B joins once the folder is made on A (only A served the provisioning).
  await waitFor(() => checkpointCount > 0, 'checkpoint 0');
  clearInterval(polling);
  const b = await host('host-b', env);
  await waitFor(() => existsSync(started), 'the second command to start on host A');
  await a.kill();
  rmSync(path.join(a.dir, 'sessions'), { recursive: true, force: true });
  gate.release();
  await reading;
  const result = messages[messages.length - 1]!;
  expect(result).toMatchObject({ type: 'result', subtype: 'success' });

  const [restored] = events(messages, 'workspace_restored') as { lost_host: string; host: string; turn: number; path: string }[];
  expect(restored).toMatchObject({ lost_host: 'host-a', host: 'host-b', turn: 1 });
  // The same absolute path, now on host B: turn 1's file from the checkpoint, the command run again there.
  const folder = restored!.path;
  expect(folder.startsWith(ROOT + path.sep)).toBe(true);
  const onB = (f: string) => path.join(b.dir, path.relative(ROOT, folder), f);
  expect(readFileSync(onB('README'), 'utf8')).toBe('a project\n');
  expect(readFileSync(onB('a.txt'), 'utf8')).toBe('one\n');
  expect(readFileSync(onB('b.txt'), 'utf8')).toBe('two\n');
  expect(readFileSync(onB('c.txt'), 'utf8')).toBe('three\n');
  expect(existsSync(path.join(a.dir, path.relative(ROOT, folder)))).toBe(false);

  // The model was told, in its transcript.
  const transcript = JSON.stringify(await handle.workflow.query(transcriptQuery, {}));
  expect(transcript).toContain('host-a) was lost');
  expect(transcript).toContain('as it was at the end of turn 1');
  // The result's workspace is on host B, and its patch is the agent's whole change against the copy.
  const ws = (result as { workspace?: { host: string; diffStat?: { filesChanged: number } } }).workspace;
  expect(ws?.host).toBe('host-b');
  expect(ws?.diffStat?.filesChanged).toBe(3);
  const view = await handle.workflow.query(checkpointsQuery);
  expect(view.checkpoints.map((c) => [c.turn, c.pushed])).toEqual([
    [0, 'remote'],
    [1, 'remote'],
    [2, 'remote'],
  ]);
});

test('a checkpoint remote that cannot be reached: the turns go on, checkpointing is reported failing, and a lost host then ends the session clearly', async () => {
  const a = await host('host-c', { DURABLE_AGENT_CHECKPOINT_REMOTE: path.join(base, 'no-such-remote.git') });
  const started = path.join(base, 'started-2');
  const gate = h.gate();
  const handle = await h.start(
    {
      name: 'host-loss-no-remote',
      turns: [
        turn.tool('Bash', { command: 'echo one > a.txt' }),
        turn.tool('Bash', { command: `touch ${started} && ${gate.command}` }),
        turn.text('done'),
      ],
    },
    { workspace: { copy: template() }, workspaceHostTimeoutMs: 3_000, heartbeatTimeoutMs: 5_000 },
  );
  const messages: SessionEvent[] = [];
  const reading = (async () => {
    for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  })();
  await waitFor(() => existsSync(started), 'the second command to start on host C');
  // Checkpoints 0 and 1 were made and kept on the host, not pushed; said once, and in the view.
  const view = await handle.workflow.query(checkpointsQuery);
  expect(view.checkpoints.map((c) => [c.turn, c.pushed])).toEqual([
    [0, 'failed'],
    [1, 'failed'],
  ]);
  expect(view.failing).toMatch(/^the checkpoint of turn 1 was kept on the tools host but not pushed: /);
  const shown = await cli(['show', handle.sessionId], { env: h.env });
  expect(shown.stdout).toContain('checkpointing is failing: the checkpoint of turn 1');
  await a.kill();
  gate.release();
  await reading;
  const warnings = (events(messages, 'warning') as { message: string }[]).filter((w) => w.message.startsWith('Checkpointing is failing'));
  expect(warnings).toHaveLength(1);
  const result = messages[messages.length - 1] as { subtype: string; is_error: boolean; errors: string[] };
  expect(result.subtype).toBe('error_during_execution');
  expect(result.is_error).toBe(true);
  const errors = result.errors.join('\n');
  expect(errors).toContain('host-c');
  expect(errors).toContain('no checkpoint in a checkpoint remote');
  expect(errors).toContain('DURABLE_AGENT_CHECKPOINT_REMOTE');
});
