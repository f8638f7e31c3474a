/** The per-endpoint limiter's pure parts (ARCHITECTURE.md#rate-limits): header parsing, blocks, caps, and how `watch` shows a wait. */
import { blockFromHeaders, EndpointLimiter, endpointKey, parseResetMs, capsFromEnv } from '../../src/activities/rate-limit';
import { renderMessage } from '../../src/client/render';
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
  const release = await l.acquire(10);
  expect(l.check(10)).toMatchObject({ reason: 'max_concurrent' });
  release(5);
  expect(l.check(10)).toBeUndefined();

  const rpm = new EndpointLimiter('k', { requestsPerMinute: 2 });
  (await rpm.acquire(1))();
  (await rpm.acquire(1))();
  expect(rpm.check(1)).toMatchObject({ reason: 'requests_per_minute' });

  const tpm = new EndpointLimiter('k', { tokensPerMinute: 100 });
  (await tpm.acquire(90))(80);
  expect(tpm.check(30)).toMatchObject({ reason: 'tokens_per_minute' });
  expect(tpm.check(20)).toBeUndefined();
  // A minute on, both windows are empty.
  const later = Date.now() + 61_000;
  expect(rpm.check(1, later)).toBeUndefined();
  expect(tpm.check(100, later)).toBeUndefined();

  // A call released after its minute has passed corrects nothing in the new window.
  const slow = new EndpointLimiter('k', { tokensPerMinute: 100 });
  const releaseSlow = await slow.acquire(90);
  expect(slow.check(100, Date.now() + 61_000)).toBeUndefined();
  releaseSlow(95);
  (await slow.acquire(90))();
  expect(slow.check(10)).toBeUndefined();
  expect(slow.check(11)).toMatchObject({ reason: 'tokens_per_minute' });
});

test('a waiting acquire says why once, and goes when the slot frees', async () => {
  const l = new EndpointLimiter('k', { maxConcurrent: 1 });
  const first = await l.acquire(1);
  const told: string[] = [];
  const second = l.acquire(1, { onWait: (w) => told.push(w.reason) });
  setTimeout(() => first(), 50);
  (await second)();
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
