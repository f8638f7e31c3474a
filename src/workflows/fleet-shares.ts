/**
 * How the limiter workflow divides an endpoint's concurrency among the model workers that call it
 * (ARCHITECTURE.md#rate-limits). Pure and deterministic: the workflow keeps a `FleetState`, and
 * each worker's `sync` report goes through `applyReport`, whose answer is that worker's share.
 *
 * Two numbers are divided:
 *  - the **learned** limit: how many calls at once the endpoint serves, learned by additive
 *    increase and multiplicative decrease from the workers' reports (slow start — one more per
 *    saturated success — until the first 429, then one more per limit's worth of them; × 0.75 on
 *    a 429, at most once per cooldown). A hint: the provider's 429 stays the judge.
 *  - the **fleet cap** (`DURABLE_AGENT_FLEET_MAX_CONCURRENT`), a hard maximum: grants never sum
 *    above it. A worker's grant is lowered at once; it is raised only from capacity no other
 *    worker still holds (granted, enforced, or in flight by its last report), so a worker that
 *    joins gets its part once the others have drained to theirs.
 *
 * Workers that have not reported for a lease are dropped: their share goes back to the others. A
 * gap in which no worker reached the workflow (a server restart) renews every lease, so the
 * workers that come back are not dropped for the outage.
 */
import { DECREASE, INITIAL_LIMIT, MAX_LIMIT, type FleetReport, type FleetShare, type RateLimitBlock } from '../shared/rate-limit';

export interface WorkerEntry {
  seenMs: number;
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
  /** The learned concurrency of the endpoint, for the whole fleet. */
  limit: number;
  /** Below it the limit grows fast (slow start); `null` until the first 429. */
  threshold: number | null;
  lastCutMs: number;
  lastReportMs: number;
  workers: Record<string, WorkerEntry>;
  block: RateLimitBlock;
}

/** 429s within this long of a cut are the same overshoot, not a new one. */
export const CUT_COOLDOWN_MS = 2_000;
/** Workers report at least this often while they have calls, more slowly as the fleet grows. */
export const MIN_SYNC_MS = 1_000;
const SYNC_MS_PER_WORKER = 250;

export function initialFleetState(block?: RateLimitBlock): FleetState {
  return {
    limit: INITIAL_LIMIT,
    threshold: null,
    lastCutMs: 0,
    lastReportMs: 0,
    workers: {},
    block: block ?? { untilMs: 0, reason: '' },
  };
}

/** How often workers report, for a fleet of `n`: one report per 250 ms at the workflow, at most one a second per worker. */
export const syncEveryMs = (n: number): number => Math.max(MIN_SYNC_MS, n * SYNC_MS_PER_WORKER);
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
  const me = (state.workers[r.workerId] ??= { seenMs: nowMs, inFlight: 0, applied: 0, grant: 0, sent: 0 });
  me.seenMs = nowMs;
  me.inFlight = Math.max(0, r.inFlight);
  me.applied = Math.max(0, r.applied);
  if (r.fleetCap && r.fleetCap > 0) me.cap = Math.floor(r.fleetCap);
  else delete me.cap;
  if (r.idle) delete state.workers[r.workerId];

  if (r.block && r.block.untilMs > state.block.untilMs) state.block = { untilMs: r.block.untilMs, reason: String(r.block.reason) };
  learn(state, r, nowMs);

  const ids = Object.keys(state.workers).sort();
  const n = Math.max(1, ids.length);
  const shares = split(Math.max(n, Math.floor(state.limit)), n);
  const mine = Math.max(0, ids.indexOf(r.workerId));
  const caps = ids.map((id) => state.workers[id]!.cap).filter((c): c is number => c !== undefined);
  if (caps.length) grant(state, ids, Math.min(...caps));
  me.sent = r.idle ? 0 : me.grant;
  return {
    concurrency: r.idle ? 0 : shares[mine]!,
    ...(me.cap ? { grant: r.idle ? 0 : me.grant } : {}),
    block: state.block,
    workers: ids.length,
    fleetLimit: Math.floor(state.limit),
    syncEveryMs: syncEveryMs(ids.length),
    leaseMs: leaseMs(ids.length),
  };
}

/** AIMD on the fleet's limit from one report's 429s and saturated successes. */
function learn(state: FleetState, r: FleetReport, nowMs: number): void {
  if (r.limited > 0 && nowMs - state.lastCutMs >= CUT_COOLDOWN_MS) {
    state.limit = Math.max(1, state.limit * DECREASE);
    state.threshold = state.limit;
    state.lastCutMs = nowMs;
    return;
  }
  if (r.limited > 0 || r.saturated <= 0) return;
  const slowStart = state.threshold === null || state.limit < state.threshold;
  state.limit = Math.min(MAX_LIMIT, state.limit + (slowStart ? r.saturated : r.saturated / state.limit));
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
