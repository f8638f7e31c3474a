/**
 * Worker processes coming and going the way an operator does it (docs/OPERATIONS.md): SIGTERM
 * lets in-flight work finish, and tools pinned to a host's queue wait while that host's worker
 * is down (docs/ARCHITECTURE.md#tools-pinned-to-their-host). Gated Bash commands journal their
 * start and wait for a file the test writes, so nothing races a clock.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionHandle } from '../../src/client/client';
import { toolResultsById, useCluster } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

const c = useCluster({ slots: 2 });

afterEach(async () => {
  await Promise.all(c.slots.map((s) => s.worker?.kill()));
  c.endOrphans();
});

/** Journals its start, waits for `release`, then records that it ran to the end. */
const GATED = 'touch started && while [ ! -e release ]; do sleep 0.05; done && echo ran >> ran.log && echo finished-ok';

async function start(name: string, extra: { toolsTaskQueue?: string } = {}): Promise<{ ws: string; handle: SessionHandle }> {
  c.addScenario({ name, turns: [turn.tool('Bash', { command: GATED }), turn.text(`${name} done`)] });
  const ws = path.join(c.dir, `ws-${name}`);
  mkdirSync(ws);
  const handle = await c.client.start({
    sessionId: name,
    prompt: `${scenarioTag(name)} Go.`,
    cwd: ws,
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 3_000,
    ...extra,
  });
  return { ws, handle };
}

const bashResult = async (handle: SessionHandle) => toolResultsById(await handle.transcript()).get('call_0_0');

test('SIGTERM lets a running Bash command finish before the worker exits; the session then completes', async () => {
  const w = await c.spawn(0);
  const { ws, handle } = await start('sigterm-drain');
  await waitFor('the command to start', () => existsSync(path.join(ws, 'started')));
  const stopped = w.stop(); // SIGTERM
  await waitFor('the worker to begin its shutdown', () => w.output().includes('shutting down: finishing in-flight tasks'));
  // Draining, not gone: the command is still running under it.
  expect(w.alive).toBe(true);
  writeFileSync(path.join(ws, 'release'), '');
  await stopped;
  expect(await w.exited).toEqual({ code: 0, signal: null });
  // The command ran to its end on the draining worker: its real output is in the transcript.
  expect(readFileSync(path.join(ws, 'ran.log'), 'utf8')).toBe('ran\n');
  await c.spawn(1);
  expect(await handle.result()).toMatchObject({ subtype: 'success', result: 'sigterm-drain done' });
  expect(await bashResult(handle)).toMatchObject({ content: 'finished-ok' });
  expect(c.crashes).toEqual([]);
});

test('tools pinned to a host queue wait while that host is down and continue when it returns', async () => {
  const queue = 'agent-tools@host-b';
  // Slot 0: workflow and model anywhere. Slot 1 ("host-b") is not running yet.
  await c.spawn(0, ['workflow', 'model']);
  const { ws, handle } = await start('pinned', { toolsTaskQueue: queue });
  // With host-b down, the session's first call to its tools (listing them at start, or Bash)
  // is scheduled on the pinned queue and nobody takes it.
  await waitFor('a tools call scheduled on the pinned queue', async () => {
    const pending = (await handle.workflow.describe()).raw.pendingActivities ?? [];
    return pending.some(
      (p) => ['prepareSession', 'listTools', 'runTool'].includes(p.activityType?.name ?? '') && p.state === 1 /* SCHEDULED */,
    );
  });
  expect(existsSync(path.join(ws, 'started'))).toBe(false);
  writeFileSync(path.join(ws, 'release'), '');
  // host-b comes (back) up: the call runs there, and the session finishes.
  await c.spawn(1, ['tools'], { DURABLE_AGENT_TOOLS_TASK_QUEUE: queue });
  expect(await handle.result()).toMatchObject({ subtype: 'success', result: 'pinned done' });
  expect(await bashResult(handle)).toMatchObject({ content: 'finished-ok' });
  expect(readFileSync(path.join(ws, 'ran.log'), 'utf8')).toBe('ran\n');
});
