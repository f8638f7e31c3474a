/** The library API: query() as in the Claude Agent SDK, connecting from profiles/env, list(), streams across runs. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DurableAgentClient, resolveConnectOptions } from '../../src/client/client';
import { query } from '../../src/sdk/query';
import { turn } from '../../src/testing/scripted-model';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import type { QueryMessage, SessionEvent } from '../../src/shared/events';
import { createWorker, type AgentWorker } from '../../src/worker/worker';
import { kinds, scenarioTag, startHarness, useHarness } from '../helpers/harness';
import { scheduledActivities } from '../helpers/history';
import { startShape } from '../helpers/session-start';
import { waitFor } from '../helpers/wait';

const h = useHarness();

const RUN = Date.now().toString(36);

test("query() used as in the Claude Agent SDK's README yields system/init, assistant, user, result in that order", async () => {
  h.model.addScenario({ name: 'readme', turns: [turn.tool('Glob', { pattern: '*' }), turn.text('There are no files.')] });
  const messages: QueryMessage[] = [];
  for await (const message of query({
    prompt: `${scenarioTag('readme')} What files are here?`,
    options: {
      cwd: h.workspace(),
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      connection: { address: h.address, taskQueue: h.taskQueue },
    },
  })) {
    messages.push(message);
  }
  expect(kinds(messages).filter((k) => k !== 'tool_progress')).toEqual(['system/init', 'assistant', 'user', 'assistant', 'result']);
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'There are no files.' });
});

test('query() control methods steer the durable session behind it', async () => {
  // The first turn's Bash waits for a file the test writes once setModel has been applied, and
  // the interrupt waits for the second model call to reach the model: no window to race.
  const g = h.gate();
  h.model.addScenario({ name: 'q-steer', turns: [turn.tool('Bash', { command: g.command }), turn.text('never', { delay_ms: 600_000 })] });
  const q = query({
    prompt: `${scenarioTag('q-steer')} go`,
    options: { cwd: h.workspace(), permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true, client: h.client },
  });
  const seen: QueryMessage[] = [];
  for await (const m of q) {
    seen.push(m);
    if (m.type === 'system' && m.subtype === 'init') {
      await q.setModel('gpt-4.1');
      const session = await h.client.get(await q.sessionId);
      await waitFor('the new model to be set', async () => (await session.state()).model === 'gpt-4.1');
      g.release();
    }
    if (m.type === 'user') {
      await waitFor('the second model call', () => h.requestsOf('q-steer').length === 2);
      await q.interrupt();
    }
  }
  expect(await q.sessionId).toMatch(/^session-/);
  expect(seen.at(-1)).toMatchObject({ type: 'result', exit_reason: 'interrupted' });
  expect(h.requestsOf('q-steer').map((r) => r.body.model)).toEqual(['gpt-4.1-mini', 'gpt-4.1']);
});

test("query() with a streaming prompt runs an interactive session: a message with priority 'later' is a turn of its own, the end of input closes it", async () => {
  h.model.addScenario({ name: 'q-stream', turns: [turn.text('first answer'), turn.text('second answer')] });
  async function* input() {
    yield {
      type: 'user' as const,
      message: { role: 'user' as const, content: `${scenarioTag('q-stream')} first` },
      parent_tool_use_id: null,
    };
    yield {
      type: 'user' as const,
      message: { role: 'user' as const, content: [{ type: 'text', text: 'second' }] },
      parent_tool_use_id: null,
      // Without it, a message that arrives while the first turn runs steers that turn.
      priority: 'later' as const,
    };
  }
  const results: string[] = [];
  for await (const m of query({
    prompt: input(),
    options: { cwd: h.workspace(), permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true, client: h.client },
  })) {
    if (m.type === 'result') results.push(m.result ?? m.subtype);
  }
  expect(results).toEqual(['first answer', 'second answer']);
});

describe('connecting', () => {
  test('a Temporal CLI profile, TEMPORAL_* variables, then explicit options, in rising precedence', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'da-profile-'));
    const file = path.join(dir, 'temporal.toml');
    writeFileSync(
      file,
      `[profile.test]\naddress = "10.0.0.1:7233"\nnamespace = "team"\n\n[profile.cloud]\naddress = "x.tmprl.cloud:7233"\napi_key = "secret"\n`,
    );
    expect(resolveConnectOptions({ configFile: file, profile: 'test', env: {} })).toMatchObject({
      address: '10.0.0.1:7233',
      namespace: 'team',
      taskQueue: 'agent',
    });
    expect(
      resolveConnectOptions({
        configFile: file,
        profile: 'test',
        env: { TEMPORAL_ADDRESS: '10.0.0.2:7233', DURABLE_AGENT_TASK_QUEUE: 'q' },
      }),
    ).toMatchObject({
      address: '10.0.0.2:7233',
      namespace: 'team',
      taskQueue: 'q',
    });
    expect(
      resolveConnectOptions({ configFile: file, profile: 'test', env: { TEMPORAL_ADDRESS: '10.0.0.2:7233' }, address: 'h:1' }).address,
    ).toBe('h:1');
    expect(resolveConnectOptions({ configFile: file, profile: 'cloud', env: {} })).toMatchObject({ apiKey: 'secret', tls: true });
    expect(resolveConnectOptions({ env: { TEMPORAL_CONFIG_FILE: path.join(dir, 'missing.toml') } })).toMatchObject({
      address: 'localhost:7233',
      namespace: 'default',
    });
    expect(() => resolveConnectOptions({ configFile: file, profile: 'nope', env: {} })).toThrow(/Profile 'nope' not found/);
  });

  test('connect() through a profile reaches the server and starts sessions on the configured queue', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'da-profile-'));
    const file = path.join(dir, 'temporal.toml');
    writeFileSync(file, `[profile.test]\naddress = "${h.address}"\n`);
    const client = await DurableAgentClient.connect({ configFile: file, profile: 'test', env: { DURABLE_AGENT_TASK_QUEUE: h.taskQueue } });
    try {
      h.model.addScenario({ name: 'via-profile', turns: [turn.text('connected')] });
      const s = await client.start({ prompt: `${scenarioTag('via-profile')} hi`, cwd: h.workspace() });
      expect(await s.result()).toMatchObject({ result: 'connected' });
    } finally {
      await client.close();
    }
  });
});

test('list() finds sessions by batch id and status through search attributes set at start', async () => {
  const batchId = `list-${RUN}`;
  h.model.addScenario({ name: 'listed-a', turns: [turn.text('a')] });
  h.model.addScenario({ name: 'listed-b', turns: [turn.text('b', { delay_ms: 60_000 })] });
  const done = await h.client.start({ prompt: `${scenarioTag('listed-a')} a`, cwd: h.workspace(), batchId, sessionId: `${batchId}-a` });
  await done.result();
  const slow = await h.client.start({
    prompt: `${scenarioTag('listed-b')} b`,
    cwd: h.workspace(),
    batchId,
    sessionId: `${batchId}-b`,
    model: 'gpt-4.1',
  });
  const ids = async (f: Parameters<DurableAgentClient['list']>[0]) => {
    const out: string[] = [];
    for await (const s of h.client.list(f)) out.push(s.sessionId);
    return out.sort();
  };
  await waitFor('both sessions listed', async () => (await ids({ batchId })).length === 2);
  expect(await ids({ batchId, status: 'running' })).toEqual([`${batchId}-b`]);
  expect(await ids({ batchId, model: 'gpt-4.1' })).toEqual([`${batchId}-b`]);
  await waitFor('the finished session listed as completed', async () => (await ids({ batchId, status: 'completed' })).length === 1);
  expect(await ids({ batchId, status: 'completed' })).toEqual([`${batchId}-a`]);
  const [row] = await (async () => {
    const out = [];
    for await (const s of h.client.list({ batchId, status: 'completed' })) out.push(s);
    return out;
  })();
  expect(row).toMatchObject({ status: 'completed', executionStatus: 'COMPLETED', model: 'gpt-4.1-mini', turns: 1, batchId });
  await slow.cancel();
});

test('a session writes its search attributes only when they change: its first reply writes nothing (the start set them), a model switch and the end do', async () => {
  const upserts = async (handle: { workflow: { fetchHistory(): Promise<{ events?: unknown[] | null }> } }) => {
    const { events } = await handle.workflow.fetchHistory();
    return (events ?? []).flatMap((e) => {
      const attrs = (e as { upsertWorkflowSearchAttributesEventAttributes?: { searchAttributes?: { indexedFields?: object } } })
        .upsertWorkflowSearchAttributesEventAttributes;
      // TemporalChangeVersion alone is the SDK's record of a patch, not ours.
      const fields = Object.keys(attrs?.searchAttributes?.indexedFields ?? {}).filter((k) => k !== 'TemporalChangeVersion');
      return fields.length > 0 ? [fields.sort().join(',')] : [];
    });
  };
  const plain = await h.start({ name: 'sa-plain', turns: [turn.tool('Glob', { pattern: '*' }), turn.text('done')] }, {});
  await plain.result();
  // One write, at the end (status completed); two replies wrote nothing.
  expect(await upserts(plain)).toEqual(['AgentCostUsd,AgentModel,AgentStatus,AgentTurns']);

  const g = h.gate();
  const switched = await h.start({ name: 'sa-switch', turns: [turn.tool('Bash', { command: g.command }), turn.text('done')] }, {});
  await waitFor('the first reply', () => h.requestsOf('sa-switch').length === 1);
  await switched.setModel('gpt-4.1');
  await waitFor('the new model to be set', async () => (await switched.state()).model === 'gpt-4.1');
  g.release();
  await switched.result();
  // The second reply came from another model: written then, and at the end.
  expect(await upserts(switched)).toHaveLength(2);

  const unindexed = await h.start({ name: 'sa-off', turns: [turn.text('done')] }, { searchAttributes: false });
  await unindexed.result();
  expect(await upserts(unindexed)).toEqual([]);
});

test('a session started by the client sets itself up with one activity and no patch marker; configs of earlier clients keep their start', async () => {
  const fresh = await h.start({ name: 'setup-once', turns: [turn.text('done')] }, {});
  expect(await fresh.result()).toMatchObject({ subtype: 'success', result: 'done' });
  expect(await startShape(fresh.workflow)).toEqual({ setup: ['prepareSession'], setupTasks: 1, markers: 0, changeVersions: 0 });
  // No heartbeat timeout, so the server keeps no heartbeat timer for it; a one-minute start-to-close instead.
  const [prepare] = await scheduledActivities(fresh.workflow, 'prepareSession');
  expect(Number(prepare!.heartbeatTimeout?.seconds ?? 0) + (prepare!.heartbeatTimeout?.nanos ?? 0)).toBe(0);
  expect(Number(prepare!.startToCloseTimeout?.seconds)).toBe(60);

  // The config as earlier clients sent it, started with a raw Temporal client: the previous
  // client's `setupAtOnce` (two activities in one task), and the first clients' (two tasks
  // behind the patch), as recorded histories have them.
  const raw = async (name: string, reply: string, extra: Record<string, unknown>) => {
    h.model.addScenario({ name, turns: [turn.text(reply)] });
    const wf = await h.client.client.workflow.start(WORKFLOW_TYPE, {
      taskQueue: h.taskQueue,
      workflowId: `${name}-${Date.now()}`,
      args: [{ prompt: `${scenarioTag(name)} go`, cwd: tmpdir(), model: 'gpt-4.1-mini', permissionMode: 'bypassPermissions', ...extra }],
    });
    expect(await wf.result()).toMatchObject({ subtype: 'success', result: reply });
    return startShape(wf);
  };
  expect(await raw('setup-together', 'together', { setupAtOnce: true })).toEqual({
    setup: ['listTools', 'loadSettings'],
    setupTasks: 1,
    markers: 0,
    changeVersions: 0,
  });
  expect(await raw('setup-twice', 'done too', {})).toEqual({
    setup: ['listTools', 'loadSettings'],
    setupTasks: 2,
    markers: 1,
    changeVersions: 1,
  });
});

test('messages() reads a long session from the start across continue-as-new, past what the latest run kept', async () => {
  // Three 100 kB replies, then continue-as-new: the new run keeps only the newest 256 kB of events.
  const big = (i: number) => ({ text: `${i}`.repeat(100_000), tool_calls: [{ name: 'Glob', arguments: { pattern: '*' } }] });
  const handle = await h.start(
    { name: 'long-can', turns: [big(1), big(2), big(3), turn.text('finished')] },
    { continueAsNewEveryTurns: 3 },
  );
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', num_turns: 4, result: 'finished' });
  const kept = await handle.events({});
  expect(kept.events[0]!.seq).toBeGreaterThan(0); // the first events live only in the first run
  const all: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) all.push(m);
  expect(all.map((m) => m.seq)).toEqual(all.map((_, i) => i));
  expect(kinds(all)[0]).toBe('system/init');
  expect(all.filter((m) => m.type === 'assistant')).toHaveLength(4);
  expect(all.at(-1)).toMatchObject({ type: 'result', result: 'finished' });
  // Resuming from a sequence number inside the first run works too.
  const tail: SessionEvent[] = [];
  for await (const m of handle.messages({ after: 2, pollMs: 50 })) tail.push(m);
  expect(tail.map((m) => m.seq)).toEqual(all.slice(3).map((m) => m.seq));
});

test('result(): a started handle answers for its own runs, so resuming the id later does not change it; get() follows the latest run', async () => {
  const sessionId = `result-by-run-${RUN}`;
  const cwd = mkdtempSync(path.join(tmpdir(), 'result-by-run-'));
  const first = await h.start(
    { name: 'result-by-run', turns: [turn.text('first answer'), turn.text('second answer')] },
    { sessionId, cwd },
  );
  expect(await first.result()).toMatchObject({ subtype: 'success', result: 'first answer' });
  const resumed = await h.client.start({ resume: sessionId, prompt: 'And again.', cwd, permissionMode: 'bypassPermissions' });
  expect(resumed.workflow.firstExecutionRunId).not.toBe(first.workflow.firstExecutionRunId);
  expect(await resumed.result()).toMatchObject({ subtype: 'success', result: 'second answer' });
  // The first handle still reports the run it started; one found by id reports the latest.
  expect(await first.result()).toMatchObject({ result: 'first answer' });
  expect(await (await h.client.get(sessionId)).result()).toMatchObject({ result: 'second answer' });
});

test('the worker option maxModelCallsPerSecond caps model calls on its queue', async () => {
  // Six model calls wait on the queue while no model worker polls it; then one limited to two
  // calls a second starts. Unlimited, it takes all six at once.
  const limited = await startHarness({ roles: ['workflow', 'tools'] });
  let modelWorker: AgentWorker | undefined;
  let polling: Promise<void> | undefined;
  try {
    const names = Array.from({ length: 6 }, (_, i) => `rate-${i}`);
    const handles = await Promise.all(names.map((name) => limited.start({ name, turns: [turn.text('ok')] }, {})));
    await waitFor('six model calls waiting on the queue', async () => {
      const pending = await Promise.all(handles.map(async (x) => (await x.workflow.describe()).raw.pendingActivities ?? []));
      return pending.every((p) => p.some((a) => a.activityType?.name === 'callModel'));
    });
    expect(limited.model.requests).toHaveLength(0);
    modelWorker = await createWorker({
      address: limited.address,
      taskQueue: limited.taskQueue,
      roles: ['model'],
      maxModelCallsPerSecond: 2,
      model: { baseURL: limited.model.url, apiKey: 'test-key' },
      log: () => undefined,
    });
    polling = modelWorker.run();
    await Promise.all(handles.map((x) => x.result()));
    const at = limited.model.requests.map((r) => r.at).sort((x, y) => x - y);
    expect(at).toHaveLength(6);
    // Two a second: at least two seconds from the first to the sixth (one if the first pair is a burst).
    expect(at[5]! - at[0]!).toBeGreaterThanOrEqual(1_000);
  } finally {
    modelWorker?.shutdown();
    await polling;
    await modelWorker?.connection.close();
    await limited.close();
  }
});
