/**
 * Provider faults meeting worker crashes (the plain retry cases are in test/session/
 * model-errors.test.ts): 429 with retry-after, 500, 503, 529 and a dropped stream while the
 * worker process retrying them is SIGKILLed; a response that hangs past the heartbeat timeout;
 * a provider that hangs for good; errors that must not be retried; and the model call's own
 * heartbeat against short heartbeat timeouts.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { turn, type ScenarioInput } from '../../src/testing/scripted-model';
import type { SessionHandle } from '../../src/client/client';
import type { SessionOptions } from '../../src/shared/config';
import type { ApiRetryMessage, ResultMessage, SessionEvent } from '../../src/shared/events';
import { startStack } from '../../src/testing/stack';
import { useCluster } from '../helpers/chaos';
import { waitFor } from '../helpers/wait';
import { collect, requestsOf as requestsOfModel, scenarioTag, workflowBundle } from '../helpers/harness';

jest.setTimeout(180_000);

// One scripted model for every worker: a fault applies to the n-th request for a turn,
// whichever process makes it.
const c = useCluster({ slots: 2, sharedModel: true });

const model = () => c.slots[0]!.model;
const requestsOf = (scenario: string) => requestsOfModel(model(), scenario);
let n = 0;

async function start(scenario: ScenarioInput, opts: Partial<SessionOptions> = {}): Promise<SessionHandle> {
  c.addScenario(scenario);
  const cwd = path.join(c.dir, `ws-${scenario.name}-${n++}`);
  mkdirSync(cwd);
  return c.client.start({
    sessionId: `${scenario.name}-${n}`,
    prompt: `${scenarioTag(scenario.name)} Go.`,
    cwd,
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 4_000,
    retry: { maxAttempts: 10, initialIntervalMs: 500, maximumIntervalMs: 2_000 },
    ...opts,
  });
}

async function collectRun(handle: SessionHandle): Promise<{ messages: SessionEvent[]; result: ResultMessage }> {
  const messages = await collect(handle);
  const result = messages.find((m): m is ResultMessage => m.type === 'result');
  if (!result) throw new Error(`${handle.sessionId}: no result message`);
  return { messages, result };
}

const retryNotices = (messages: SessionEvent[]) =>
  messages.filter((m): m is ApiRetryMessage => m.type === 'system' && m.subtype === 'api_retry');
/** Retries of this session's own failed calls: without the `reason` of a rate-limiter hold, which another
 *  session's 429 on the same endpoint causes (ARCHITECTURE.md#rate-limits). */
const retries = (messages: SessionEvent[]) => retryNotices(messages).filter((m) => m.reason === undefined);

/** A two-turn scenario whose first reply meets `faults` first. */
const faulty = (name: string, faults: NonNullable<ScenarioInput['turns'][number]['faults']>): ScenarioInput => ({
  name,
  turns: [
    turn.tool('Glob', { pattern: '*' }, { text: `Looking around (${name}).`, faults, chunk_delay_ms: 20 }),
    turn.text(`Recovered from ${name}.`),
  ],
});

afterEach(async () => {
  // Each test decides which workers run: none left over from the last. (SIGKILL: a graceful
  // stop waits for whatever attempts the previous test abandoned.)
  await Promise.all(c.slots.map((s) => s.worker?.kill()));
});

/** The last attempt of the last activity in the session's history, and why the one before failed. */
async function lastAttempt(handle: SessionHandle): Promise<{ attempt: number; lastFailure: string | undefined }> {
  const started = (await handle.workflow.fetchHistory()).events!.filter((e) => e.activityTaskStartedEventAttributes);
  const attrs = started.at(-1)!.activityTaskStartedEventAttributes!;
  const f = attrs.lastFailure;
  const why = f?.timeoutFailureInfo ? `timeout:${f.timeoutFailureInfo.timeoutType}` : (f?.applicationFailureInfo?.type ?? undefined);
  return { attempt: attrs.attempt ?? 1, lastFailure: why ?? undefined };
}

test('429 with retry-after, 500, 503, 529 and a dropped stream recover when the worker retrying them is SIGKILLed', async () => {
  await c.spawn(0);
  const cases = [
    {
      name: 'rate-limited',
      status: 429,
      faults: [
        { status: 429, headers: { 'retry-after': '1' } },
        { status: 429, headers: { 'retry-after': '2' } },
      ],
    },
    { name: 'server-error', status: 500, faults: [{ status: 500 }, { status: 500 }] },
    { name: 'unavailable', status: 503, faults: [{ status: 503 }, { status: 503 }] },
    { name: 'overloaded', status: 529, faults: [{ status: 529 }, { status: 529 }] },
    { name: 'dropped', status: null, faults: [{ drop_after_chunks: 3 }, { drop_after_chunks: 5 }] },
  ];
  const handles = await Promise.all(cases.map((k) => start(faulty(k.name, k.faults))));
  const runs = handles.map(collectRun);
  runs.forEach((r) => r.catch(() => undefined)); // awaited below

  // Every session has met its first fault and reported it: kill the only worker.
  await waitFor('a reported first fault for every session', async () => {
    const reported = await Promise.all(handles.map(async (x) => retries((await x.events()).events).length > 0));
    return reported.every(Boolean);
  });
  await c.kill(0);
  await c.spawn(1);

  for (const [i, k] of cases.entries()) {
    const { messages, result } = await runs[i]!;
    expect({ name: k.name, subtype: result.subtype, result: result.result, turns: result.num_turns }).toEqual({
      name: k.name,
      subtype: 'success',
      result: `Recovered from ${k.name}.`,
      turns: 2,
    });
    // Each fault a worker lived to report is an api_retry event with the provider's status (the
    // first one at least: the kill waited for it).
    const statuses = retries(messages).map((r) => r.error_status);
    expect({ name: k.name, reported: statuses.length > 0, statuses }).toEqual({
      name: k.name,
      reported: true,
      statuses: statuses.map(() => k.status),
    });
    // With no caps set, a hold by the limiter is only ever the endpoint's 429 block, or the
    // concurrency it learned from that 429 (and its gradual release after the block).
    const holds = retryNotices(messages)
      .filter((r) => r.reason !== undefined)
      .map((r) =>
        r.reason === 'max_concurrent' && /learned from the endpoint|leaving a block gradually/.test(r.error_message)
          ? 'learned'
          : [r.reason, r.error_status],
      );
    expect(holds).toEqual(holds.map((h) => (h === 'learned' ? h : ['rate_limited', 429])));
    // Every fault was served (one more request for the success), and nothing doubled in the transcript.
    expect(requestsOf(k.name).filter((r) => r.turnIndex === 0).length).toBeGreaterThanOrEqual(k.faults.length + 1);
    expect((await handles[i]!.transcript()).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  }
  expect(c.crashes).toEqual([]);
});

test('a response that hangs past the heartbeat timeout is not declared dead while its worker lives; killed mid-hang, it moves on', async () => {
  await c.spawn(0);
  const hangMs = 12_000;
  const handle = await start(
    {
      name: 'hang',
      turns: [
        // Headers and two chunks, then silence for three times the heartbeat timeout, and a cut.
        turn.tool('Glob', { pattern: '*' }, { text: 'Looking around first.', faults: [{ hang_ms: hangMs, after_chunks: 2 }] }),
        // Silence from the start; the worker is killed during it.
        turn.text('Recovered from the hang.', { faults: [{ hang_ms: 600_000 }] }),
      ],
    },
    { heartbeatTimeoutMs: 4_000 },
  );
  const run = collectRun(handle);
  run.catch(() => undefined); // awaited below
  await waitFor('the second turn to hang', () => requestsOf('hang').some((r) => r.turnIndex === 1));
  // Turn 0: the provider cut the hung stream, the worker said so and retried — after the cut,
  // not after a heartbeat timeout (which would have started the retry during the silence).
  const turn0 = requestsOf('hang').filter((r) => r.turnIndex === 0);
  expect(turn0).toHaveLength(2);
  expect(turn0[1]!.at - turn0[0]!.at).toBeGreaterThanOrEqual(hangMs);
  expect(retries((await handle.events()).events)).toEqual([expect.objectContaining({ attempt: 1, error_status: null })]);
  await c.kill(0);
  await c.spawn(1);
  const { result } = await run;
  expect(result).toMatchObject({ subtype: 'success', result: 'Recovered from the hang.', num_turns: 2 });
  // Turn 1's hung attempt died with its worker: the heartbeat timeout is how Temporal noticed.
  expect((await lastAttempt(handle)).attempt).toBeGreaterThanOrEqual(2);
});

test('a provider that hangs for good is abandoned after the stream idle timeout and retried', async () => {
  // In-process worker: the idle timeout is a worker option (model.streamIdleTimeoutMs).
  const stack = await startStack({
    address: c.server.address,
    model: { baseURL: model().url, apiKey: 'test-key' },
    worker: { workflowBundle: await workflowBundle(), model: { streamIdleTimeoutMs: 2_000, heartbeatEveryMs: 500 } },
  });
  try {
    const handle = await start(
      {
        name: 'hang-forever',
        turns: [
          turn.text('Answer after two hangs.', {
            // Before any byte, then after two chunks: far past the idle timeout and the heartbeat timeout.
            faults: [{ hang_ms: 600_000 }, { hang_ms: 600_000, after_chunks: 2 }],
          }),
        ],
      },
      { heartbeatTimeoutMs: 4_000 },
    );
    const { messages, result } = await collectRun(handle);
    expect(result).toMatchObject({ subtype: 'success', result: 'Answer after two hangs.' });
    expect(retries(messages).map((r) => r.error_message)).toEqual([
      'the model sent nothing for 2 s; the request was abandoned',
      'the model sent nothing for 2 s; the request was abandoned',
    ]);
    expect(requestsOf('hang-forever')).toHaveLength(3);
  } finally {
    await stack.close();
  }
});

test('errors that cannot succeed end the session with an error result that says what happened', async () => {
  await c.spawn(0);
  const notFound = await start({
    name: 'no-such-model',
    turns: [turn.text('never', { faults: [{ status: 404, body: { error: { message: 'The model `gpt-9` does not exist' } } }] })],
  });
  const tooLong = await start({
    name: 'too-long',
    turns: [
      turn.text('never', {
        faults: [{ status: 400, body: { error: { message: "This model's maximum context length is 128000 tokens" } } }],
      }),
    ],
  });
  const exhausted = await start(
    { name: 'exhausted', turns: [turn.text('never', { faults: [{ status: 500 }, { status: 502 }, { status: 503 }] })] },
    { retry: { maxAttempts: 3, initialIntervalMs: 200, maximumIntervalMs: 200 } },
  );
  const results = await Promise.all([notFound, tooLong, exhausted].map((h) => h.result()));
  for (const r of results) expect(r).toMatchObject({ subtype: 'error_during_execution', is_error: true, exit_reason: 'model_error' });
  expect(results.map((r) => r.errors)).toEqual([
    ['Model request failed (ModelNotFound): 404 The model `gpt-9` does not exist'],
    ["Model request failed (ContextOverflow): 400 This model's maximum context length is 128000 tokens"],
    ['Model request failed (ModelOverloaded): 503 scripted fault: HTTP 503'],
  ]);
  expect([requestsOf('no-such-model').length, requestsOf('too-long').length, requestsOf('exhausted').length]).toEqual([1, 1, 3]);
  for (const name of ['no-such-model', 'too-long', 'exhausted']) model().scenario(name).turns.length = 0; // unused on purpose
});

test('a model call retried after its worker died is not timed out again while it reads its prompt', async () => {
  // The worker that died held the session's workflow too, so the retry's `prompt` query waits
  // for another worker to load the session (after clearing the dead worker's sticky queue,
  // src/activities/sticky.ts: without that, for the sticky timeout as well). The retry must stay
  // alive meanwhile. Without heartbeats a 1 s heartbeat timeout kills it and the next
  // attempts in turn, each still calling the provider once its query returns: four attempts and
  // four provider calls for one turn. One attempt lost to a loaded machine is allowed.
  await c.spawn(0);
  const handle = await start(
    { name: 'retry-reads-prompt', turns: [turn.text('A reply streamed slowly enough to be cut in the middle.', { chunk_delay_ms: 200 })] },
    { heartbeatTimeoutMs: 1_000, retry: { maxAttempts: 10, initialIntervalMs: 500, maximumIntervalMs: 2_000 } },
  );
  await waitFor('the first request', () => requestsOf('retry-reads-prompt').length > 0);
  await c.kill(0);
  await c.spawn(1);
  expect(await handle.result()).toMatchObject({ subtype: 'success' });
  const { attempt } = await lastAttempt(handle);
  const providerCalls = requestsOf('retry-reads-prompt').length;
  for (const n of [attempt, providerCalls]) {
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThanOrEqual(3);
  }
});

test('a provider slower to its first byte than a short heartbeat timeout is waited for, not retried', async () => {
  // heartbeatTimeoutMs may be as low as 1 s; the model call must heartbeat often enough for it
  // while the provider thinks (here 3 s before the first byte). Without heartbeats every attempt
  // times out before the first byte and the session fails after five provider calls; with them
  // the first call normally answers (a loaded machine may lose an attempt or two).
  await c.spawn(0);
  const handle = await start(
    { name: 'slow-first-byte', turns: [turn.text('Worth the wait.', { delay_ms: 3_000 })] },
    { heartbeatTimeoutMs: 1_000, retry: { maxAttempts: 5, initialIntervalMs: 200, maximumIntervalMs: 200 } },
  );
  const result = await handle.result();
  expect({ subtype: result.subtype, errors: result.errors }).toEqual({ subtype: 'success', errors: undefined }); // a success carries no errors field
  expect(requestsOf('slow-first-byte').length).toBeLessThanOrEqual(3);
});
