/** The per-endpoint limiter's pure parts (ARCHITECTURE.md#rate-limits): header parsing, blocks, caps, and how `watch` shows a wait. */
import {
  blockFromHeaders,
  EndpointLimiter,
  endpointKey,
  parseResetMs,
  capsFromEnv,
  RAMP_STEP_MS,
} from '../../src/activities/model/rate-limit';
import { renderMessage } from '../../src/cli/render';
import type { SessionEvent } from '../../src/shared/events';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const headers = (h: Record<string, string>) => new Headers(h);

test('reset headers: seconds, Go-style durations, HTTP dates', () => {
  expect(parseResetMs('2')).toBe(2_000);
  expect(parseResetMs('1.5s')).toBe(1_500);
  expect(parseResetMs('6m0s')).toBe(360_000);
  expect(parseResetMs('200ms')).toBe(200);
  expect(parseResetMs('1m30.5s')).toBe(90_500);
  expect(parseResetMs(new Date(NOW + 3_000).toUTCString(), NOW)).toBe(3_000);
  expect(parseResetMs('soon')).toBeUndefined();
  expect(parseResetMs(undefined)).toBeUndefined();
});

test('what blocks: 429/529 with retry-after(-ms), or a remaining count of 0 until its reset; nothing else', () => {
  expect(blockFromHeaders(429, headers({ 'retry-after': '3' }), NOW)).toBe(3_000);
  expect(blockFromHeaders(429, headers({ 'retry-after-ms': '250', 'retry-after': '3' }), NOW)).toBe(250);
  expect(blockFromHeaders(529, headers({}), NOW)).toBe(1_000);
  expect(blockFromHeaders(200, headers({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6s' }), NOW)).toBe(6_000);
  expect(blockFromHeaders(200, headers({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1m0s' }), NOW)).toBe(60_000);
  expect(
    blockFromHeaders(200, headers({ 'x-ratelimit-remaining-requests': '5', 'x-ratelimit-reset-requests': '6s' }), NOW),
  ).toBeUndefined();
  expect(blockFromHeaders(500, headers({ 'retry-after': '3' }), NOW)).toBeUndefined();
});

test('a block holds every call until it ends; the later block wins; observe returns only a new one (to share)', () => {
  const l = new EndpointLimiter('k');
  expect(l.check(10, NOW)).toBeUndefined();
  expect(l.observe(429, headers({ 'retry-after': '2' }), NOW)).toEqual({ untilMs: NOW + 2_000, reason: 'HTTP 429' });
  expect(l.check(10, NOW + 500)).toMatchObject({ reason: 'rate_limited', delayMs: 1_500 });
  expect(l.observe(429, headers({ 'retry-after': '1' }), NOW)).toBeUndefined();
  expect(l.check(10, NOW + 2_000)).toBeUndefined();
  expect(l.stats.limited).toBe(2);
});

test('caps: concurrent calls, requests and tokens per rolling minute', async () => {
  const l = new EndpointLimiter('k', { maxConcurrent: 1 });
  const slot = await l.acquire(10);
  expect(l.check(10)).toMatchObject({ reason: 'max_concurrent' });
  slot.release(5);
  expect(l.check(10)).toBeUndefined();

  const rpm = new EndpointLimiter('k', { requestsPerMinute: 2 });
  (await rpm.acquire(1)).release();
  (await rpm.acquire(1)).release();
  expect(rpm.check(1)).toMatchObject({ reason: 'requests_per_minute' });

  const tpm = new EndpointLimiter('k', { tokensPerMinute: 100 });
  (await tpm.acquire(90)).release(80);
  expect(tpm.check(30)).toMatchObject({ reason: 'tokens_per_minute' });
  expect(tpm.check(20)).toBeUndefined();
  // A minute on, both windows are empty.
  const later = Date.now() + 61_000;
  expect(rpm.check(1, later)).toBeUndefined();
  expect(tpm.check(100, later)).toBeUndefined();

  // A call released after its minute has passed corrects nothing in the new window.
  const slow = new EndpointLimiter('k', { tokensPerMinute: 100 });
  const slowSlot = await slow.acquire(90);
  expect(slow.check(100, Date.now() + 61_000)).toBeUndefined();
  slowSlot.release(95);
  (await slow.acquire(90)).release();
  expect(slow.check(10)).toBeUndefined();
  expect(slow.check(11)).toMatchObject({ reason: 'tokens_per_minute' });
});

test('a waiting acquire says why once, and goes when the slot frees', async () => {
  const l = new EndpointLimiter('k', { maxConcurrent: 1 });
  const first = await l.acquire(1);
  const told: string[] = [];
  const second = l.acquire(1, { onWait: (w) => told.push(w.reason) });
  setTimeout(() => first.release(), 50);
  (await second).release();
  expect(told).toEqual(['max_concurrent']);
});

test('the key is hashed, endpoint and key both count; caps from the environment are checked', () => {
  const k = endpointKey('https://api.example.com/v1/', 'sk-secret');
  expect(k).toMatch(/^[0-9a-f]{16}$/);
  expect(k).toBe(endpointKey('https://api.example.com/v1', 'sk-secret'));
  expect(k).not.toBe(endpointKey('https://api.example.com/v1', 'sk-other'));
  expect(capsFromEnv({ DURABLE_AGENT_MODEL_MAX_CONCURRENT: '10', DURABLE_AGENT_MODEL_TPM: '5000' })).toEqual({
    maxConcurrent: 10,
    tokensPerMinute: 5000,
  });
  expect(() => capsFromEnv({ DURABLE_AGENT_MODEL_RPM: 'lots' })).toThrow(/DURABLE_AGENT_MODEL_RPM: expected a whole number/);
});

test('watch shows a held call as a wait with its reason, a failed one as a retry', () => {
  const base = { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 4, retry_delay_ms: 1_500, error: 'rate_limit' } as const;
  const held = { ...base, error_status: 429, error_message: 'waiting: the rate limit resets in 1500 ms', reason: 'rate_limited' };
  expect(renderMessage(held as unknown as SessionEvent, { color: false })).toEqual([
    '⏸ model call held by the rate limiter (rate_limited): waiting: the rate limit resets in 1500 ms',
  ]);
  const failed = { ...base, error_status: 429, error_message: 'Too many requests' };
  expect(renderMessage(failed as unknown as SessionEvent, { color: false })[0]).toMatch(/^↻ model call failed \(429/);
});

describe('learning the concurrency an endpoint serves (no caps configured)', () => {
  test('a 429 cuts the learned limit once per overshoot; saturated successes raise it, fast before the first 429', async () => {
    const l = new EndpointLimiter('k');
    expect(l.concurrency().n).toBe(8);
    // Eight calls in flight (all of the limit): the ninth waits, and says what holds it.
    const slots = await Promise.all(Array.from({ length: 8 }, () => l.acquire(1)));
    expect(l.check(1)).toMatchObject({ reason: 'max_concurrent', message: '8 model calls in flight (limit 8 learned from the endpoint)' });
    // Slow start: each saturated success adds one (all of the limit in use, or calls waiting).
    slots[0]!.release(1);
    expect(l.learned).toBe(9);
    slots.push(await l.acquire(1), await l.acquire(1));
    const waiting = l.acquire(1);
    expect(l.waiting).toBe(1);
    slots[1]!.release(1);
    expect(l.learned).toBe(10);
    slots.push(await waiting);
    // The burst that overshot: the first 429 cuts by a quarter, the others from calls started before the cut do not.
    const t = Date.now() + 10;
    l.observe(429, headers({ 'retry-after-ms': '1' }), t, t - 5);
    expect(l.learned).toBe(7.5);
    l.observe(429, headers({ 'retry-after-ms': '1' }), t + 1, t - 3);
    expect(l.learned).toBe(7.5);
    expect(l.pending.limited).toBe(1);
    // Calls that started before the cut teach nothing more.
    for (const s of slots.slice(2)) s.release(1);
    expect(l.learned).toBe(7.5);
    // After the first 429, one more per limit's worth of saturated successes (additive increase).
    await new Promise((r) => setTimeout(r, 15));
    const again = await Promise.all(Array.from({ length: 7 }, () => l.acquire(1)));
    again.forEach((s) => s.release(1));
    expect(l.learned).toBeCloseTo(7.5 + 1 / 7.5, 5);
    // A failed call (no usage) is no evidence either way.
    const failed = await l.acquire(1);
    const before = l.learned;
    failed.release();
    expect(l.learned).toBe(before);
  });

  test('calls held by a block leave it one per step, not all at once', () => {
    const l = new EndpointLimiter('k');
    const t = Date.now();
    l.block(t, 'HTTP 429');
    expect(l.concurrency(t).n).toBe(1);
    expect(l.concurrency(t + RAMP_STEP_MS).n).toBe(2);
    expect(l.concurrency(t + 3 * RAMP_STEP_MS + 1).n).toBe(4);
    expect(l.concurrency(t + 20 * RAMP_STEP_MS).n).toBe(8);
  });

  test('learning off: only the configured caps hold calls', async () => {
    const l = new EndpointLimiter('k', {}, false);
    await Promise.all(Array.from({ length: 20 }, () => l.acquire(1)));
    expect(l.check(1)).toBeUndefined();
  });

  test("a fleet cap: nothing starts without a live grant; the grant is a hard maximum under the worker's own cap", async () => {
    const l = new EndpointLimiter('k', { fleetMaxConcurrent: 10, maxConcurrent: 3 });
    expect(l.check(1)).toMatchObject({
      reason: 'max_concurrent',
      message: expect.stringMatching(/waiting for a share of the fleet cap 10/),
    });
    const sent = Date.now();
    l.applyShare({ cuts: 0, grant: 5, leaseMs: 20_000, slowStart: true }, sent, false);
    expect(l.concurrency().n).toBe(3);
    l.caps = { fleetMaxConcurrent: 10 };
    expect(l.concurrency()).toEqual({ n: 5, why: "this worker's share 5 of the fleet cap 10" });
    // The grant holds for 0.8 of the lease from when the report was sent, then nothing starts.
    expect(l.concurrency(sent + 15_999).n).toBe(5);
    expect(l.concurrency(sent + 16_000).n).toBe(0);
  });
});

test('the worker caps include the fleet cap from DURABLE_AGENT_FLEET_MAX_CONCURRENT, checked like the others', () => {
  expect(capsFromEnv({ DURABLE_AGENT_FLEET_MAX_CONCURRENT: '10' })).toEqual({ fleetMaxConcurrent: 10 });
  expect(() => capsFromEnv({ DURABLE_AGENT_FLEET_MAX_CONCURRENT: '0' })).toThrow(
    /DURABLE_AGENT_FLEET_MAX_CONCURRENT: expected a whole number ≥ 1, got '0'/,
  );
});

test("the fleet's word: a starting part on joining, a cut for another worker's 429 (not twice for its own)", () => {
  const l = new EndpointLimiter('k');
  l.applyShare({ start: 5, cuts: 3, leaseMs: 20_000, slowStart: false }, Date.now(), false);
  expect(l.learned).toBe(5);
  // The same count again: nothing new.
  l.applyShare({ cuts: 3, leaseMs: 20_000, slowStart: false }, Date.now(), false);
  expect(l.learned).toBe(5);
  // Another worker met a 429: this one cuts too.
  l.applyShare({ cuts: 4, leaseMs: 20_000, slowStart: false }, Date.now(), false);
  expect(l.learned).toBe(3.75);
  // This worker's own 429 made the cut: it has cut already.
  l.applyShare({ cuts: 5, leaseMs: 20_000, slowStart: false }, Date.now(), true);
  expect(l.learned).toBe(3.75);
});
