/**
 * How the limiter workflow divides an endpoint among model workers (src/workflows/rate-limit/fleet-shares.ts,
 * ARCHITECTURE.md#rate-limits): the learned limit, and a fleet cap that grants never exceed while
 * workers come, go, drain and die.
 */
import {
  applyReport,
  CUT_COOLDOWN_MS,
  fleetLimit,
  initialFleetState,
  leaseMs,
  split,
  type FleetState,
} from '../../src/workflows/rate-limit/fleet-shares';
import { afterLimited, afterSuccesses, type FleetReport } from '../../src/shared/rate-limit';

const report = (workerId: string, r: Partial<FleetReport> = {}): FleetReport => ({
  workerId,
  learned: 8,
  inFlight: 0,
  applied: 0,
  limited: 0,
  ...r,
});

test('learning: slow start, a cut by a quarter that remembers where it struck, and a slow probe at that level', () => {
  expect(afterSuccesses({ limit: 8, ceiling: null }, 3)).toEqual({ limit: 11, ceiling: null });
  const cut = afterLimited({ limit: 11.5, ceiling: null });
  expect(cut).toEqual({ limit: 8.625, ceiling: 11 });
  // Up to the level below the one that failed: about one per limit's worth of successes (~2 windows of ~9).
  const below = afterSuccesses(cut, 20);
  expect(below.limit).toBeGreaterThan(10);
  // From there to 11 (where the 429 struck) takes eight times as long: ~80 successes, not ~10.
  expect(afterSuccesses(below, 10).limit).toBeLessThan(10.3);
  expect(afterSuccesses(below, 90).limit).toBeGreaterThan(11);
  // A level passed without a 429 becomes the new one to probe past.
  expect(afterSuccesses(below, 90).ceiling).toBe(11);
});

test('split: whole parts, the larger first, summing to the total', () => {
  expect(split(10, 3)).toEqual([4, 3, 3]);
  expect(split(10, 1)).toEqual([10]);
  expect(split(2, 4)).toEqual([1, 1, 0, 0]);
});

test('the fleet relays cuts, one per overshoot, and gives a joining worker an equal part of what the others learned', () => {
  const s = initialFleetState();
  let t = 1_000_000;
  expect(applyReport(s, report('a', { learned: 12 }), t)).toMatchObject({ cuts: 0, workers: 1, slowStart: true });
  expect(applyReport(s, report('a', { learned: 12 }), ++t).start).toBeUndefined();
  // 'b' joins: it starts from 12 / 2.
  expect(applyReport(s, report('b', { learned: 8 }), ++t)).toMatchObject({ start: 6, workers: 2, fleetLimit: 18 });
  // 'b' met a 429: a cut, which 'a' hears at its next report.
  expect(applyReport(s, report('b', { learned: 4.5, limited: 1 }), ++t)).toMatchObject({ cuts: 1, slowStart: false });
  // 'a' met the same overshoot: no second cut within the cooldown.
  expect(applyReport(s, report('a', { learned: 9, limited: 1 }), t + CUT_COOLDOWN_MS - 1).cuts).toBe(1);
  expect(applyReport(s, report('a', { learned: 9, limited: 1 }), t + CUT_COOLDOWN_MS).cuts).toBe(2);
  expect(fleetLimit(s)).toBe(13.5);
});

test('a worker that stops reporting is dropped after its lease; an idle one leaves at once; an outage renews every lease', () => {
  const s = initialFleetState();
  const t = 5_000_000;
  applyReport(s, report('a'), t);
  applyReport(s, report('b'), t);
  // 'a' keeps reporting, 'b' went away.
  let now = t;
  for (; now < t + leaseMs(2) + 2_000; now += 1_000) applyReport(s, report('a'), now);
  expect(Object.keys(s.workers)).toEqual(['a']);
  applyReport(s, report('b'), now);
  expect(applyReport(s, report('a', { idle: true }), now + 1)).toMatchObject({ workers: 1 });
  expect(Object.keys(s.workers)).toEqual(['b']);
  // Nobody reached the workflow for longer than a lease (the server was away): 'b' is kept, not dropped.
  applyReport(s, report('a'), now + 10 * leaseMs(2));
  expect(Object.keys(s.workers).sort()).toEqual(['a', 'b']);
});

test('the fleet cap: a joining worker gets its part only once the others have drained to theirs', () => {
  const s = initialFleetState();
  const t = 9_000_000;
  const cap = 10;
  expect(applyReport(s, report('a', { fleetCap: cap }), t).grant).toBe(10);
  // 'a' runs 10; 'b' joins: 'a' is lowered to 5 at once, 'b' gets nothing while 'a' holds 10.
  expect(applyReport(s, report('a', { fleetCap: cap, applied: 10, inFlight: 10 }), t + 1).grant).toBe(10);
  expect(applyReport(s, report('b', { fleetCap: cap }), t + 2).grant).toBe(0);
  expect(s.workers.a!.grant).toBe(5);
  // 'a' applies 5 but still has 8 in flight: 'b' may have 2.
  applyReport(s, report('a', { fleetCap: cap, applied: 5, inFlight: 8 }), t + 3);
  expect(applyReport(s, report('b', { fleetCap: cap }), t + 4).grant).toBe(2);
  applyReport(s, report('a', { fleetCap: cap, applied: 5, inFlight: 5 }), t + 5);
  expect(applyReport(s, report('b', { fleetCap: cap, applied: 2 }), t + 6).grant).toBe(5);
});

/**
 * Workers that join, report at random moments, run calls up to what they enforce, drain slowly,
 * go idle and die (their calls die with them): at every moment the calls in flight across the
 * fleet stay within the cap, and every worker still reporting ends with its part.
 */
test('the fleet cap holds through a random run of joins, drains, idles and deaths', () => {
  let seed = 42;
  const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const cap = 10;
  for (let run = 0; run < 50; run++) {
    const s: FleetState = initialFleetState();
    interface Sim {
      enforced: number;
      grant: number;
      inFlight: number;
      alive: boolean;
      idle: boolean;
    }
    const sims = new Map<string, Sim>();
    let now = 1_000_000;
    let peak = 0;
    for (let step = 0; step < 400; step++) {
      now += Math.floor(rand() * 400);
      const roll = rand();
      const live = [...sims.entries()].filter(([, w]) => w.alive);
      if (roll < 0.05 || live.length === 0) {
        sims.set(`w${step}`, { enforced: 0, grant: 0, inFlight: 0, alive: true, idle: false });
        continue;
      }
      const [id, w] = live[Math.floor(rand() * live.length)]!;
      if (roll < 0.07) {
        w.alive = false; // SIGKILL: its calls end with it
        w.inFlight = 0;
      } else if (roll < 0.5) {
        // A report: what it enforces and runs now; it enforces the answer from then on.
        const idle = w.inFlight === 0 && rand() < 0.1;
        if (idle) w.enforced = w.grant = 0;
        const share = applyReport(s, report(id, { fleetCap: cap, applied: w.enforced, inFlight: w.inFlight, idle }), now);
        w.idle = idle;
        if (!idle) w.enforced = w.grant = share.grant!;
      } else if (roll < 0.8) {
        if (!w.idle && w.inFlight < w.enforced) w.inFlight += 1 + Math.floor(rand() * (w.enforced - w.inFlight));
      } else if (w.inFlight > 0) w.inFlight--;
      const total = [...sims.values()].reduce((n, x) => n + x.inFlight, 0);
      peak = Math.max(peak, total);
      expect(total).toBeLessThanOrEqual(cap);
    }
    // The live workers finish their calls and report every second for a lease: the dead are dropped, and each live one gets its part.
    const alive = [...sims.entries()].filter(([, w]) => w.alive).map(([id]) => id);
    for (const [, w] of sims) w.inFlight = 0;
    const until = now + leaseMs(sims.size) + 3_000;
    for (; now < until; now += 1_000)
      for (const id of alive) {
        const w = sims.get(id)!;
        w.enforced = w.grant = applyReport(s, report(id, { fleetCap: cap, applied: w.enforced, inFlight: 0 }), now).grant!;
      }
    expect(Object.keys(s.workers).sort()).toEqual(alive.sort());
    expect(alive.map((id) => s.workers[id]!.grant)).toEqual(split(cap, alive.length));
    expect(peak).toBeGreaterThan(0);
  }
});

test('workers configured with different fleet caps are all held to the lowest', () => {
  const s = initialFleetState();
  applyReport(s, report('a', { fleetCap: 10 }), 1);
  // 'a' holds all 10 until it says it enforces its new part.
  expect(applyReport(s, report('b', { fleetCap: 4 }), 2).grant).toBe(0);
  expect(applyReport(s, report('a', { fleetCap: 10, applied: 10 }), 3).grant).toBe(2);
  applyReport(s, report('a', { fleetCap: 10, applied: 2 }), 4);
  expect(applyReport(s, report('b', { fleetCap: 4 }), 5).grant).toBe(2);
});
