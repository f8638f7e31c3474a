/**
 * Learning an endpoint's limit (ARCHITECTURE.md#rate-limits): no caps configured, sixteen sessions
 * against a scripted model that serves 3 requests at once and answers 429 beyond. The worker's
 * limiter starts at 8, is cut on the first 429s, and settles near 3: most calls never meet a 429,
 * where a limiter that only honours `retry-after` releases every held call at once after each
 * block and meets the limit again every time (over half of the calls in this run).
 */
import { limiterFor } from '../../src/activities/model/rate-limit';
import { turn } from '../../src/testing/scripted-model';
import { collect, useHarness } from '../helpers/harness';

jest.setTimeout(240_000);

const h = useHarness({}, { maxConcurrent: 3, retryAfterMs: 300 });

test('sixteen sessions, a provider serving 3 at once, no caps: the limit is learned and few calls meet a 429', async () => {
  // Four model calls per session: three that call a tool, then the answer; each streams for ~0.6 s.
  const step = (i: number, k: number) =>
    turn.tools([{ name: 'Glob', arguments: { pattern: `*${i}-${k}` } }], {
      text: `session ${i} step ${k}, looking around`,
      chunk_delay_ms: 30,
    });
  const fast = { retry: { maxAttempts: 30, initialIntervalMs: 200, maximumIntervalMs: 1_000 } };
  const handles = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      h.start(
        { name: `learn-${i}`, turns: [step(i, 0), step(i, 1), step(i, 2), turn.text(`session ${i} done`, { chunk_delay_ms: 30 })] },
        { ...fast, sessionId: `learn-${i}-${Date.now()}` },
      ),
    ),
  );
  const runs = await Promise.all(handles.map((x) => collect(x)));
  for (const ms of runs) expect(ms.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success' });
  const calls = h.model.requests.length + h.model.rateLimited;
  process.stderr.write(
    `[learned] ${h.model.requests.length} served, ${h.model.rateLimited} answered 429, peak ${h.model.peakConcurrent}\n`,
  );
  expect(h.model.rateLimited).toBeGreaterThan(0); // the limit was met, and learned from
  expect(h.model.rateLimited).toBeLessThanOrEqual(0.2 * calls);
  const limiter = limiterFor(h.model.url, 'scripted-model');
  expect(limiter.stats.cuts).toBeGreaterThan(0);
  expect(Math.floor(limiter.learned)).toBeLessThanOrEqual(4);
});
