/**
 * A model call attempt that the server timed out and retried while it still ran
 * (ARCHITECTURE.md#abandoned-attempts): on a worker whose first attempts send no heartbeat (as if
 * its process had stalled; test/helpers/silent-heartbeat-worker.ts), the server retries the call
 * after the 3 s heartbeat timeout while attempt 1 streams on. Either attempt 1 is cancelled on
 * its worker (the SDK's own timer, once no heartbeat was answered) and its request aborted at the
 * provider, or it finishes first and the server refuses its reply. Both times the provider billed
 * it: its tokens and cost are reported on their own, `modelUsage[model].abandonedCalls`, and
 * counted in `total_cost_usd`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { lookupPrice, costOf } from '../../src/shared/pricing';
import type { ResultMessage } from '../../src/shared/events';
import { REPO_ROOT, spawnWorker, useCluster, writeWorkflowBundle, type WorkerProcess } from '../helpers/chaos';
import { requestsOf, scenarioTag } from '../helpers/harness';

jest.setTimeout(180_000);

const c = useCluster({ slots: 1 });
const MODEL = 'gpt-4.1-mini';
/** What the provider says each attempt used (the scripted usage). */
const USAGE = { prompt_tokens: 12_000, completion_tokens: 400 };
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  worker = spawnWorker({
    address: c.server.address,
    modelUrl: c.slots[0]!.model.url,
    bundlePath: await writeWorkflowBundle(c.dir),
    name: 'silent-heartbeats',
    script: path.join(REPO_ROOT, 'test', 'helpers', 'silent-heartbeat-worker.ts'),
  });
  await worker.ready;
});

afterAll(async () => {
  await worker?.kill();
});

/** One turn streamed over `streamMs`, the reply's text `words` long. */
async function run(name: string, streamMs: number): Promise<ResultMessage> {
  const words = streamMs / 100;
  c.addScenario({
    name,
    turns: [turn.text(Array.from({ length: words }, (_, i) => `w${i}`).join(' '), { chunk_delay_ms: 100, usage: USAGE })],
  });
  const cwd = path.join(c.dir, name);
  mkdirSync(cwd);
  const handle = await c.client.start({
    sessionId: name,
    prompt: `${scenarioTag(name)} Say it slowly.`,
    cwd,
    model: MODEL,
    permissionMode: 'bypassPermissions',
  });
  return handle.result();
}

const replyCost = costOf(
  { inputTokens: USAGE.prompt_tokens, outputTokens: USAGE.completion_tokens, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  lookupPrice(MODEL),
);

test('an attempt still streaming when it was timed out is cancelled at the provider, and what it cost is reported apart and in the total', async () => {
  // 15 s of stream: the SDK cancels attempt 1 about 8 s in (3 s timeout + its 5 s margin, no heartbeat answered).
  const result = await run('abandoned-streaming', 15_000);
  expect(result).toMatchObject({ subtype: 'success' });
  const [first, second, ...more] = requestsOf(c.slots[0]!.model, 'abandoned-streaming');
  expect(more).toEqual([]);
  // Attempt 1's request was cut by its worker before the provider finished it; attempt 2's ran to the end.
  expect(first!.abortedAt).toBeGreaterThan(first!.at);
  expect(first!.chunksSent).toBeLessThan(150);
  expect(second!.abortedAt).toBeUndefined();

  const usage = result.modelUsage[MODEL]!;
  // The reply the session took, counted as before.
  expect(usage).toMatchObject({ inputTokens: USAGE.prompt_tokens, outputTokens: USAGE.completion_tokens });
  expect(usage.costUSD).toBeCloseTo(replyCost, 10);
  // The abandoned attempt: cut before the provider's usage, so estimated from the request and the text received.
  const abandoned = usage.abandonedCalls!;
  expect(abandoned).toMatchObject({ count: 1, estimated: 1 });
  expect(abandoned.inputTokens).toBeGreaterThan(0);
  expect(abandoned.outputTokens).toBeGreaterThan(0);
  expect(abandoned.costUSD).toBeGreaterThan(0);
  expect(result.total_cost_usd).toBeCloseTo(usage.costUSD + abandoned.costUSD, 10);
});

test('an attempt that finished after it was timed out has its reply refused, and its exact cost reported', async () => {
  // 5 s of stream: attempt 1 ends before the SDK's own timer, its reply refused by the server.
  const result = await run('abandoned-finished', 5_000);
  expect(result).toMatchObject({ subtype: 'success' });
  const requests = requestsOf(c.slots[0]!.model, 'abandoned-finished');
  expect(requests).toHaveLength(2);
  expect(requests.map((r) => r.abortedAt)).toEqual([undefined, undefined]);

  const usage = result.modelUsage[MODEL]!;
  expect(usage).toMatchObject({ inputTokens: USAGE.prompt_tokens, outputTokens: USAGE.completion_tokens });
  expect(usage.abandonedCalls).toMatchObject({
    count: 1,
    estimated: 0,
    inputTokens: USAGE.prompt_tokens,
    outputTokens: USAGE.completion_tokens,
    cacheReadInputTokens: 0,
  });
  expect(usage.abandonedCalls!.costUSD).toBeCloseTo(replyCost, 10);
  expect(result.total_cost_usd).toBeCloseTo(2 * replyCost, 10);
});
