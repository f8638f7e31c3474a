/** The fleet-wide rate-limit workflow's interface (ARCHITECTURE.md#rate-limits), shared by it and the model workers. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export const RATE_LIMIT_WORKFLOW_TYPE = 'modelRateLimit';
/** One limiter workflow per endpoint and key; `key` is a hash (src/activities/model/rate-limit.ts `endpointKey`), never the key. */
export const rateLimitWorkflowId = (key: string): string => `rate-limit/${key}`;

/**
 * Learning an endpoint's concurrency — the same rule on each worker and in the limiter workflow
 * (ARCHITECTURE.md#rate-limits). Slow start until the first 429/529 (one more per saturated
 * success); a 429 cuts the limit by a quarter (or to the calls the endpoint was serving, if fewer)
 * and remembers the level where it struck; below that level one
 * more per limit's worth of saturated successes, at it and above one more per eight limits' worth
 * (the level that failed is probed rarely, so a steady fleet meets few 429s).
 */
export interface Learning {
  limit: number;
  /** The limit at the last 429 (null: none yet, slow start). */
  ceiling: number | null;
}
export const INITIAL_LIMIT = 8;
const MAX_LIMIT = 10_000;
const DECREASE = 0.75;
const PROBE_SLOWDOWN = 8;

/** A 429/529; `serving` is how many calls the endpoint was serving then, when known (a tighter cut). */
export function afterLimited(l: Learning, serving?: number): Learning {
  const known = serving !== undefined && serving >= 1;
  return {
    limit: Math.max(1, Math.min(l.limit * DECREASE, known ? serving : Infinity)),
    ceiling: Math.max(1, Math.min(Math.floor(l.limit), known ? serving + 1 : Infinity)),
  };
}

export function afterSuccesses(l: Learning, n: number): Learning {
  if (l.ceiling === null) return { limit: Math.min(MAX_LIMIT, l.limit + n), ceiling: null };
  let { limit, ceiling } = l;
  for (let i = 0; i < n; i++) {
    // The next whole step reaches the level that failed: probe it slowly.
    limit = Math.min(MAX_LIMIT, limit + (Math.floor(limit) + 1 >= ceiling ? 1 / (limit * PROBE_SLOWDOWN) : 1 / limit));
    ceiling = Math.max(ceiling, Math.floor(limit));
  }
  return { limit, ceiling };
}

export interface RateLimitBlock {
  /** Epoch ms until which no model call to the endpoint may start. */
  untilMs: number;
  reason: string;
}

export const blockSignal = defineSignal<[RateLimitBlock]>('block');
export const blockQuery = defineQuery<RateLimitBlock>('block');

/** A model worker's report to the limiter workflow, about one endpoint (at most once a second while it has calls). */
export interface FleetReport {
  /** The worker process (host, pid and a random part): one entry per process, however many workers it runs. */
  workerId: string;
  /** Calls to the endpoint in flight in the process now. */
  inFlight: number;
  /** The concurrency it enforces now (what it was last given, or its own cap if lower). */
  applied: number;
  /** Its learned part of the endpoint's limit. */
  learned: number;
  /** The 429/529 answers it cut its part for since its last report (one per overshoot). */
  limited: number;
  /** `DURABLE_AGENT_FLEET_MAX_CONCURRENT` as the worker has it. */
  fleetCap?: number;
  /** A block it learned from a provider's headers. */
  block?: RateLimitBlock;
  /** No calls in flight or waiting: it leaves the fleet's division until it has calls again. */
  idle?: boolean;
}

/** The limiter workflow's answer: the worker's part of the endpoint. */
export interface FleetShare {
  /** For a worker that joins: its starting part (an equal part of what the others learned). */
  start?: number;
  /** Cuts the fleet has made: a higher number than the worker knew means another worker met a 429. */
  cuts: number;
  /** Its part of the fleet cap, when one is set: a hard maximum. */
  grant?: number;
  block: RateLimitBlock;
  /** Workers the limit is divided among. */
  workers: number;
  fleetLimit: number;
  /** No worker has met a 429 yet (parts still grow fast). */
  slowStart: boolean;
  /** When to report next, and how long its place is kept without a report. */
  syncEveryMs: number;
  leaseMs: number;
}

export const syncUpdate = defineUpdate<FleetShare, [FleetReport]>('sync');

/** What the limiter workflow holds for an endpoint: the learned limit and the workers it is divided among (for operators and benchmarks). */
export interface FleetView {
  limit: number;
  cuts: number;
  block: RateLimitBlock;
  workers: { workerId: string; learned: number; inFlight: number; applied: number; grant: number; cap?: number }[];
}
export const fleetQuery = defineQuery<FleetView>('fleet');
