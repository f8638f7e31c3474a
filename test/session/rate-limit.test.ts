/**
 * Rate limits per endpoint (ARCHITECTURE.md#rate-limits): a worker's calls to one endpoint share a
 * limiter. Against a scripted model that answers 429 beyond 2 concurrent requests, a cap of 2
 * keeps every call under the limit (sessions held back say so in `system/api_retry`), and one
 * session's 429 with `retry-after` holds another session's call until the reset.
 */
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { collect, useHarness } from '../helpers/harness';

jest.setTimeout(120_000);

const h = useHarness({ rateLimits: { maxConcurrent: 2 } }, { maxConcurrent: 2 });

type Retry = Extract<SessionEvent, { subtype: 'api_retry' }>;
const retries = (ms: SessionEvent[]) => ms.filter((m): m is Retry => m.type === 'system' && m.subtype === 'api_retry');
const fast = { retry: { maxAttempts: 10, initialIntervalMs: 200, maximumIntervalMs: 1_000 } };

test('six sessions against a 2-request limit: the cap holds them back, the provider never answers 429', async () => {
  const text = (i: number, k: number) =>
    turn.text(`session ${i} turn ${k} is a reply long enough to stream for a while`, { chunk_delay_ms: 20 });
  const handles = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      h.start({ name: `capped-${i}`, turns: [text(i, 0)] }, { ...fast, sessionId: `capped-${i}-${Date.now()}` }),
    ),
  );
  const runs = await Promise.all(handles.map((x) => collect(x)));
  for (const ms of runs) expect(ms.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success' });
  expect(h.model.rateLimited).toBe(0);
  expect(h.model.peakConcurrent).toBeLessThanOrEqual(2);
  const held = runs.flatMap(retries);
  expect(held.length).toBeGreaterThan(0);
  expect(held.every((r) => r.reason === 'max_concurrent')).toBe(true);
});

test("one session's 429 with retry-after holds another session's call until the reset, and it says why", async () => {
  h.model.reset();
  const a = await h.start(
    { name: 'first-429', turns: [turn.text('a done', { faults: [{ status: 429, headers: { 'retry-after': '3' } }] })] },
    { ...fast, sessionId: `first-429-${Date.now()}` },
  );
  const aDone = collect(a);
  // Once the provider has said 429, the next session's call waits for the reset instead of trying.
  const deadline = Date.now() + 60_000;
  while (!h.requestsOf('first-429').some((r) => r.status === 429) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const b = await h.start({ name: 'second', turns: [turn.text('b done')] }, { ...fast, sessionId: `second-${Date.now()}` });
  const [ma, mb] = await Promise.all([aDone, collect(b)]);
  expect(ma.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success' });
  expect(mb.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success' });
  // B's only request came after the block, at its first try: it never met a 429 of its own.
  expect(h.requestsOf('second').map((r) => r.status)).toEqual([200]);
  expect(retries(mb)).toEqual([expect.objectContaining({ reason: 'rate_limited', error_status: 429 })]);
  expect(retries(mb)[0]!.error_message).toMatch(/rate limit \(HTTP 429\) resets in/);
});
