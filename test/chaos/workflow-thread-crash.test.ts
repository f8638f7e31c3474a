/**
 * A workflow thread dying the way temporalio/sdk-typescript#939 describes ("async hook stack has
 * become corrupted", docs/ARCHITECTURE.md#workflow-thread-crash), in a real `durable-agent worker`
 * process with sessions running on it: the SDK's watchdog ends a promise callback in the thread.
 * test/helpers/workflow-thread-probe.js, preloaded into the worker's threads, makes that happen
 * at a moment the test chooses, and reports the watchdog the threads really run with.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { WORKFLOW_ACTIVATION_TIMEOUT } from '../../src/worker/worker';
import { useCluster } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(240_000);

const PROBE = path.join(__dirname, '..', 'helpers', 'workflow-thread-probe.js');
const SESSIONS = 3;
const TURNS = 4;

const c = useCluster({ slots: 2, sharedModel: true });

afterEach(async () => {
  await Promise.all(c.slots.map((s) => s.worker?.kill()));
});

/** A worker with the probe in its threads, and `SESSIONS` sessions running on it (each has made its first model call). */
async function workerWithSessions(name: string, probe: NodeJS.ProcessEnv) {
  const ws = path.join(c.dir, `ws-${name}`);
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\n');
  const read = turn.tool('Read', { file_path: path.join(ws, 'notes.txt') }, { delay_ms: 300 });
  c.addScenario({ name, turns: [...Array.from({ length: TURNS - 1 }, () => read), turn.text(`${name} done`)] });
  const worker = await c.spawn(0, undefined, { NODE_OPTIONS: `--require ${PROBE}`, ...probe });
  const handles = await Promise.all(
    Array.from({ length: SESSIONS }, (_, i) =>
      c.client.start({
        sessionId: `${name}-${i}`,
        prompt: `${scenarioTag(name)} Read the notes.`,
        cwd: ws,
        permissionMode: 'bypassPermissions',
      }),
    ),
  );
  const model = c.slots[0]!.model;
  await waitFor('every session to make its first model call', () => model.requests.filter((r) => r.scenario === name).length >= SESSIONS);
  return { worker, handles };
}

test('the worker exits on a corrupted async-hook stack in a workflow thread; its sessions finish on the next worker', async () => {
  const timeouts = path.join(c.dir, 'probe-timeouts');
  const trigger = path.join(c.dir, 'probe-crash');
  const { worker: a, handles } = await workerWithSessions('thread-crash', { PROBE_TIMEOUTS_FILE: timeouts, PROBE_CRASH_TRIGGER: trigger });

  // The watchdog the workflow threads run with is ours, not the SDK's 5 s.
  const seen = readFileSync(timeouts, 'utf8').trim().split('\n').map(Number);
  expect(seen).toEqual([Number.parseInt(WORKFLOW_ACTIVATION_TIMEOUT, 10) * 1000]);

  // The thread's next activation ends in a promise callback cut by the watchdog.
  writeFileSync(trigger, '');
  const exit = await a.exited;
  // The whole process ends (exit 1, or a segfault while other threads still run), not just the thread:
  // nothing is left polling with a dead workflow thread, and a supervisor sees it go.
  expect(exit.code === 1 || exit.signal === 'SIGSEGV').toBe(true);
  expect(a.output()).toMatch(/async hook stack has become corrupted/);
  expect(c.crashes.map((x) => x.pid)).toEqual([a.pid]);
  const statuses = await Promise.all(handles.map(async (h) => (await h.workflow.describe()).status.name));
  expect(statuses).toContain('RUNNING');

  // What a supervisor does: start a worker again. Every session finishes, each with all its turns.
  await c.spawn(1);
  for (const h of handles) {
    expect(await h.result()).toMatchObject({ subtype: 'success', result: 'thread-crash done', num_turns: TURNS });
  }
});

test('a workflow thread that ends alone takes its worker process down with it; its sessions finish on the next worker', async () => {
  const exitFile = path.join(c.dir, 'probe-thread-exit');
  const { worker: a, handles } = await workerWithSessions('thread-exit', { PROBE_THREAD_EXIT: exitFile });
  writeFileSync(exitFile, '');
  // Not a worker left polling its queues with no thread to run workflows: the process exits, with an error.
  const exit = await a.exited;
  expect(exit.code).not.toBe(0);
  expect(exit.code).not.toBeNull();
  expect(a.output()).toMatch(/Workflow Worker Thread exited|worker thread exited/i);
  await c.spawn(1);
  for (const h of handles) {
    expect(await h.result()).toMatchObject({ subtype: 'success', result: 'thread-exit done', num_turns: TURNS });
  }
});
