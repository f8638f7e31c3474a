/**
 * How the limiter workflow divides an endpoint's concurrency among the model workers that call it
 * (ARCHITECTURE.md#rate-limits). Pure and deterministic: the workflow keeps a `FleetState`, and
 * each worker's `sync` report goes through `applyReport`, whose answer is that worker's share.
 *
 * Two things are shared:
 *  - the **learned** limit. Each worker learns its own part (src/shared/rate-limit.ts); the fleet
 *    relays what one learned to the others: a 429 one worker met (a *cut*, at most one per
 *    cooldown) makes every other worker cut too at its next report, since the fleet as a whole was
 *    over the limit; a worker that joins starts from an equal part of what the others learned, not
 *    from scratch. The provider's 429 stays the judge.
 *  - the **fleet cap** (`DURABLE_AGENT_FLEET_MAX_CONCURRENT`), a hard maximum: grants never sum
 *    above it. A worker's grant is lowered at once; it is raised only from capacity no other
 *    worker still holds (granted, enforced, or in flight by its last report), so a worker that
 *    joins gets its part once the others have drained to theirs and said so.
 *
 * Workers that have not reported for a lease are dropped: their share goes back to the others. A
 * gap in which no worker reached the workflow (a server restart) renews every lease, so the
 * workers that come back are not dropped for the outage.
 */
import type { FleetReport, FleetShare, RateLimitBlock } from '../../shared/rate-limit';

interface WorkerEntry {
  seenMs: number;
  /** Its learned part of the limit, as last reported. */
  learned: number;
  inFlight: number;
  applied: number;
  /** Cap grant (with a fleet cap): the most this worker may run at once. */
  grant: number;
  /** The grant last sent to it: what it enforces until its next report says otherwise. */
  sent: number;
  /** The fleet cap it was configured with (workers that disagree get the lowest). */
  cap?: number;
}

export interface FleetState {
  /** Cuts so far: a worker that sees a higher number than it knew cuts its own part. */
  cuts: number;
  lastCutMs: number;
  /** Whether any worker has met a 429 (after that, parts grow slowly). */
  limited: boolean;
  lastReportMs: number;
  workers: Record<string, WorkerEntry>;
  block: RateLimitBlock;
}

/** 429s within this long of a cut are the same overshoot, not a new one. */
export const CUT_COOLDOWN_MS = 2_000;
/** Workers report at least this often while they have calls, more slowly as the fleet grows. */
const MIN_SYNC_MS = 1_000;
const SYNC_MS_PER_WORKER = 250;

export function initialFleetState(block?: RateLimitBlock): FleetState {
  return { cuts: 0, lastCutMs: 0, limited: false, lastReportMs: 0, workers: {}, block: block ?? { untilMs: 0, reason: '' } };
}

/** The fleet's learned limit: the sum of its workers' parts. */
export const fleetLimit = (state: FleetState): number => Object.values(state.workers).reduce((n, w) => n + w.learned, 0);

/** How often workers report, for a fleet of `n`: one report per 250 ms at the workflow, at most one a second per worker. */
const syncEveryMs = (n: number): number => Math.max(MIN_SYNC_MS, n * SYNC_MS_PER_WORKER);
/** How long a worker that stopped reporting keeps its place. */
export const leaseMs = (n: number): number => Math.max(20_000, 3 * syncEveryMs(n));

/** `total` split into `n` whole parts, the larger ones first (ids sorted, so every worker agrees). */
export function split(total: number, n: number): number[] {
  const base = Math.floor(total / n);
  const extra = total - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0));
}

export function applyReport(state: FleetState, r: FleetReport, nowMs: number): FleetShare {
  const lease = leaseMs(Object.keys(state.workers).length + 1);
  // A gap with no report at all (the server was away): every worker gets a fresh lease.
  if (state.lastReportMs && nowMs - state.lastReportMs > lease / 2)
    for (const w of Object.values(state.workers)) w.seenMs = Math.max(w.seenMs, nowMs);
  state.lastReportMs = nowMs;
  for (const [id, w] of Object.entries(state.workers)) if (id !== r.workerId && nowMs - w.seenMs > lease) delete state.workers[id];
  const joining = !state.workers[r.workerId];
  // A worker that joins starts from an equal part of what the others learned.
  const others = Object.values(state.workers);
  const start = joining && others.length ? Math.max(1, Math.floor(fleetLimit(state) / (others.length + 1))) : undefined;
  const me = (state.workers[r.workerId] ??= { seenMs: nowMs, learned: 0, inFlight: 0, applied: 0, grant: 0, sent: 0 });
  me.seenMs = nowMs;
  me.learned = start ?? Math.max(0, r.learned);
  me.inFlight = Math.max(0, r.inFlight);
  me.applied = Math.max(0, r.applied);
  if (r.fleetCap && r.fleetCap > 0) me.cap = Math.floor(r.fleetCap);
  else delete me.cap;
  if (r.idle) delete state.workers[r.workerId];

  if (r.block && r.block.untilMs > state.block.untilMs) state.block = { untilMs: r.block.untilMs, reason: String(r.block.reason) };
  // One cut per overshoot, however many workers met it.
  if (r.limited > 0) {
    state.limited = true;
    if (nowMs - state.lastCutMs >= CUT_COOLDOWN_MS) {
      state.cuts++;
      state.lastCutMs = nowMs;
    }
  }

  const ids = Object.keys(state.workers).sort();
  const caps = ids.map((id) => state.workers[id]!.cap).filter((c): c is number => c !== undefined);
  if (caps.length) grant(state, ids, Math.min(...caps));
  me.sent = r.idle ? 0 : me.grant;
  return {
    ...(start !== undefined && !r.idle ? { start } : {}),
    cuts: state.cuts,
    ...(me.cap ? { grant: r.idle ? 0 : me.grant } : {}),
    block: state.block,
    workers: ids.length,
    fleetLimit: Math.floor(fleetLimit(state)),
    slowStart: !state.limited,
    syncEveryMs: syncEveryMs(ids.length),
    leaseMs: leaseMs(ids.length),
  };
}

/** Fleet cap: lower grants above the target at once; raise the others from what nobody still holds. */
function grant(state: FleetState, ids: string[], cap: number): void {
  const targets = split(cap, ids.length);
  ids.forEach((id, i) => {
    const w = state.workers[id]!;
    if (w.grant > targets[i]!) w.grant = targets[i]!;
  });
  // What a worker may be running: its grant, the grant it last heard (it enforces that until it
  // reports again), what it enforced and ran when it last reported (its answer was on the way).
  const held = (w: WorkerEntry) => Math.max(w.grant, w.sent, w.applied, w.inFlight);
  let free = cap - ids.reduce((sum, id) => sum + held(state.workers[id]!), 0);
  ids.forEach((id, i) => {
    const w = state.workers[id]!;
    const want = targets[i]! - w.grant;
    if (want <= 0 || free <= 0) return;
    // Capacity this worker already holds (enforced or in flight above its grant) is not new.
    const own = held(w) - w.grant;
    const add = Math.min(want, free + own);
    free -= Math.max(0, add - own);
    w.grant += add;
  });
}
