/**
 * Side effects reported as unknown (docs/ARCHITECTURE.md#side-effects-reported-as-unknown) at
 * its sharpest: a worker SIGKILLed while its Bash commands run. Each command journals its own
 * start (a file the test waits for) before it sleeps, so the kill lands mid-command in every run;
 * a retried attempt must say the first attempt's effects are unknown, never run it again.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionHandle } from '../../src/client/client';
import { isUnknownOutcome, resultThroughRestarts, useCluster, toolResultsById } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';
import { startHoldingProxy } from '../helpers/tcp-hold';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

const c = useCluster({ slots: 2 });

afterEach(async () => {
  // Each test chooses its workers' roles: none left over.
  await Promise.all(c.slots.map((s) => s.worker?.kill()));
  c.endOrphans();
});

/** Appends to ran.log, journals its start, then outlives any test: only a kill ends it. */
const COMMAND = 'echo once >> ran.log && touch started && sleep 30 && touch finished';

async function startSession(name: string, id: string): Promise<{ ws: string; handle: SessionHandle }> {
  const ws = path.join(c.dir, `ws-${id}`);
  mkdirSync(ws);
  const handle = await c.client.start({
    sessionId: id,
    prompt: `${scenarioTag(name)} Run it.`,
    cwd: ws,
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 3_000,
  });
  return { ws, handle };
}

const runs = (ws: string) =>
  existsSync(path.join(ws, 'ran.log')) ? readFileSync(path.join(ws, 'ran.log'), 'utf8').split('\n').filter(Boolean).length : 0;

async function outcome(ws: string, handle: SessionHandle): Promise<string> {
  expect(await resultThroughRestarts(handle, 120_000)).toMatchObject({ subtype: 'success' });
  const result = toolResultsById(await handle.transcript()).get('call_0_0')!;
  const said = isUnknownOutcome(result) ? 'unknown-outcome' : JSON.stringify(result.content);
  return `${handle.sessionId}: ran ${runs(ws)}×, finished ${existsSync(path.join(ws, 'finished'))}, result ${said}`;
}

test('Bash commands whose worker is SIGKILLed mid-command are reported as unknown, never run twice', async () => {
  const SESSIONS = 12;
  c.addScenario({ name: 'bash-once', turns: [turn.tool('Bash', { command: COMMAND }), turn.text('done')] });
  await c.spawn(0);
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => startSession('bash-once', `bash-once-${i}`)));
  // Every command has started and none can have finished: the kill is mid-Bash for all of them.
  await c.killAtMarkers(
    0,
    sessions.map((s) => path.join(s.ws, 'started')),
    'mid-bash',
    120_000,
  );
  expect(sessions.filter((s) => existsSync(path.join(s.ws, 'finished'))).map((s) => s.handle.sessionId)).toEqual([]);
  c.endOrphans(); // a machine that went down takes its commands with it
  await c.spawn(1);

  const report = await Promise.all(sessions.map((s) => outcome(s.ws, s.handle)));
  expect(report).toEqual(sessions.map((s) => `${s.handle.sessionId}: ran 1×, finished false, result unknown-outcome`));
  expect(c.kills.map((k) => k.point)).toEqual(['mid-bash']);
  // The retried call ran on the other worker and cleared the session's stickiness first
  // (src/activities/sticky.ts): the workflow task that records its result goes to the shared
  // queue, not to the dead worker's sticky queue to wait out the sticky timeout there.
  const queues = await Promise.all(sessions.map((s) => queueAfterRetriedTool(s.handle)));
  expect(queues).toEqual(sessions.map((s) => `${s.handle.sessionId}: normal`));
});

/** The kind of queue of the workflow task scheduled right after the session's retried `runTool` completed. */
async function queueAfterRetriedTool(handle: SessionHandle): Promise<string> {
  const events = (await handle.workflow.fetchHistory()).events ?? [];
  const retried = events.findIndex((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
  const done = events.findIndex((e, i) => i > retried && e.activityTaskCompletedEventAttributes);
  const next = events.slice(done + 1).find((e) => e.workflowTaskScheduledEventAttributes);
  const kind = next?.workflowTaskScheduledEventAttributes?.taskQueue?.kind;
  const name = kind === 1 ? 'normal' : kind === 2 ? 'sticky' : `none (retried at ${retried}, completed at ${done})`;
  return `${handle.sessionId}: ${retried < 0 ? 'no retried attempt' : name}`;
}

test('the attempt journal alone stops a rerun when the "started" heartbeat never reached the server', async () => {
  c.addScenario({ name: 'bash-journal', turns: [turn.tool('Bash', { command: COMMAND }), turn.text('done')] });
  // Tools on a worker whose traffic to the server the test can hold; workflow and model elsewhere.
  const proxy = await startHoldingProxy(c.server.address);
  try {
    await Promise.all([c.spawn(0, ['tools'], { TEMPORAL_ADDRESS: proxy.address }), c.spawn(1, ['workflow', 'model'])]);
    const { ws, handle } = await startSession('bash-journal', 'bash-journal');
    // The model call is under way, so the tools worker's poll is already at the server: hold
    // what it sends from here on, and the Bash attempt's heartbeats never arrive.
    await waitFor('the model request', () => c.slots[1]!.model.requests.some((r) => r.scenario === 'bash-journal'), { everyMs: 5 });
    proxy.hold();
    await c.killAtMarkers(0, [path.join(ws, 'started')], 'mid-bash');
    expect(existsSync(path.join(ws, 'finished'))).toBe(false);
    c.endOrphans();
    // The server knows the attempt only as started: no heartbeat details said "started".
    const pending = (await handle.workflow.describe()).raw.pendingActivities ?? [];
    expect(
      pending.map((p) => ({ type: p.activityType?.name, attempt: p.attempt, details: p.heartbeatDetails?.payloads?.length ?? 0 })),
    ).toEqual([{ type: 'runTool', attempt: 1, details: 0 }]);
    await proxy.close();
    await c.spawn(0, ['tools'], {});
    expect(await outcome(ws, handle)).toBe('bash-journal: ran 1×, finished false, result unknown-outcome');
  } finally {
    await proxy.close();
  }
});
