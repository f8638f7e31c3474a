/**
 * A rate-limit block crosses worker processes through Temporal (ARCHITECTURE.md#rate-limits):
 * model worker A gets a 429 with `retry-after: 20` and signals the endpoint's `modelRateLimit`
 * workflow; A is then killed and model worker B — another process that never saw a 429 — takes over. A new
 * session's call on B waits for the reset, and says it learnt the block from another worker.
 */
import { endpointKey } from '../../src/activities/model/rate-limit';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { rateLimitWorkflowId } from '../../src/shared/rate-limit';
import { resultThroughRestarts, useCluster } from '../helpers/chaos';
import { collect, scenarioTag } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

/** Slot 0 runs the workflows (the sessions and the limiter workflow) throughout; slots 1 and 2 are the model workers A and B. */
const c = useCluster({ slots: 3, sharedModel: true });

test('worker B holds its calls for the block worker A learnt from a 429, and says so', async () => {
  const model = c.slots[0]!.model;
  c.addScenario([
    { name: 'fleet-a', turns: [turn.text('a done', { faults: [{ status: 429, headers: { 'retry-after': '20' } }] })] },
    { name: 'fleet-b', turns: [turn.text('b done')] },
  ]);
  const opts = (name: string) => ({
    prompt: `${scenarioTag(name)} go`,
    cwd: c.dir,
    model: 'gpt-4.1-mini',
    permissionMode: 'bypassPermissions' as const,
    heartbeatTimeoutMs: 5_000,
    retry: { maxAttempts: 10, initialIntervalMs: 500, maximumIntervalMs: 2_000 },
  });
  await c.spawn(0, ['workflow', 'tools']);
  await c.spawn(1, ['model']);
  const a = await c.client.start({ ...opts('fleet-a'), sessionId: `fleet-a-${Date.now()}` });
  // A's 429 reached the limiter workflow (signal-with-start) before A goes away.
  const limiter = c.client.client.workflow.getHandle(rateLimitWorkflowId(endpointKey(model.url, 'chaos-test-key')));
  await waitFor('the limiter workflow', async () => (await limiter.describe()).status.name === 'RUNNING', {
    timeoutMs: 60_000,
    ignoreErrors: true,
  });
  await c.kill(1);
  await c.spawn(2, ['model']);
  const b = await c.client.start({ ...opts('fleet-b'), sessionId: `fleet-b-${Date.now()}` });
  const messages = await collect(b);
  expect(messages.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success' });
  expect((await resultThroughRestarts(a, 120_000)).subtype).toBe('success');
  // B never met a 429 of its own: its one request came after the reset, and it said why it waited.
  expect(model.requests.filter((r) => r.scenario === 'fleet-b').map((r) => r.status)).toEqual([200]);
  const held = messages.filter(
    (m): m is Extract<SessionEvent, { subtype: 'api_retry' }> => m.type === 'system' && m.subtype === 'api_retry',
  );
  expect(held).toEqual([expect.objectContaining({ reason: 'rate_limited' })]);
  expect(held[0]!.error_message).toMatch(/HTTP 429, seen by another worker/);
});
