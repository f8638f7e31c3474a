/**
 * Provider failures (ARCHITECTURE.md#temporal-owns-retries): Temporal owns the retries, honours retry-after, does not retry
 * what cannot succeed, and falls back to `fallbackModel` once the primary's retries run out.
 */
import { turn } from '../../src/testing/scripted-model';
import type { ApiRetryMessage } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';
import { scheduledActivities } from '../helpers/history';

const h = useHarness();

const fast = { retry: { maxAttempts: 5, initialIntervalMs: 200, maximumIntervalMs: 2_000 } };
const retries = (messages: { type: string; subtype?: string }[]) =>
  messages.filter((m): m is ApiRetryMessage => m.type === 'system' && m.subtype === 'api_retry');

test('429 with retry-after: 2 is retried no sooner than 2 s later, and reported as api_retry', async () => {
  const { messages, result } = await h.run(
    { name: 'rate-limited', turns: [turn.text('ok', { faults: [{ status: 429, headers: { 'retry-after': '2' } }] })] },
    fast,
  );
  expect(result.subtype).toBe('success');
  const [first, second] = h.requestsOf('rate-limited');
  expect(second!.at - first!.at).toBeGreaterThanOrEqual(2_000);
  expect(retries(messages)).toEqual([expect.objectContaining({ attempt: 1, max_retries: 4, retry_delay_ms: 2_000, error_status: 429 })]);
});

test('500 and 503 are retried with growing backoff', async () => {
  const { messages, result } = await h.run(
    { name: 'server-errors', turns: [turn.text('ok', { faults: [{ status: 500 }, { status: 503 }] })] },
    fast,
  );
  expect(result.subtype).toBe('success');
  const at = h.requestsOf('server-errors').map((r) => r.at);
  expect(at).toHaveLength(3);
  expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(200);
  expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(400);
  expect(retries(messages).map((r) => [r.error_status, r.retry_delay_ms])).toEqual([
    [500, 200],
    [503, 400],
  ]);
});

test.each([
  [400, 'ModelBadRequest'],
  [401, 'ModelAuth'],
])('%i is not retried and ends with an error result that says why', async (status, type) => {
  const name = `fatal-${status}`;
  const { handle, result } = await h.run(
    { name, turns: [turn.text('never', { faults: [{ status, body: { error: { message: `scripted ${status} failure` } } }] })] },
    fast,
  );
  expect(h.requestsOf(name)).toHaveLength(1);
  // The activity's own failure says it is final: the call's retry policy lists no types.
  const [scheduled] = await scheduledActivities(handle.workflow, 'callModel');
  expect(scheduled?.retryPolicy?.nonRetryableErrorTypes ?? []).toEqual([]);
  expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true, exit_reason: 'model_error' });
  expect(result.errors![0]).toMatch(new RegExp(`^Model request failed \\(${type}\\): ${status} scripted ${status} failure`));
  h.model.reset(); // the unused turn is intended
});

test('a stream dropped mid-response is retried', async () => {
  const { result, messages } = await h.run(
    { name: 'dropped', turns: [turn.text('a complete answer after a drop', { faults: [{ drop_after_chunks: 3 }] })] },
    fast,
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'a complete answer after a drop' });
  expect(h.requestsOf('dropped')).toHaveLength(2);
  expect(retries(messages)).toHaveLength(1);
});

test('fallbackModel is used once the primary model exhausts its retries', async () => {
  const { messages, result, handle } = await h.run(
    { name: 'fallback', turns: [turn.text('from the fallback', { faults: [{ status: 503 }, { status: 503 }] })] },
    { retry: { maxAttempts: 2, initialIntervalMs: 100, maximumIntervalMs: 100 }, fallbackModel: 'gpt-4.1-nano' },
  );
  expect(h.requestsOf('fallback').map((r) => r.body.model)).toEqual(['gpt-4.1-mini', 'gpt-4.1-mini', 'gpt-4.1-nano']);
  expect(result).toMatchObject({ subtype: 'success', result: 'from the fallback' });
  expect(messages.find((m) => m.type === 'system' && m.subtype === 'model_changed')).toMatchObject({
    model: 'gpt-4.1-nano',
    reason: 'fallback',
  });
  expect((await handle.state()).model).toBe('gpt-4.1-nano');
});
