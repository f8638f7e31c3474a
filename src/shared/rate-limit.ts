/** The fleet-wide rate-limit workflow's interface (ARCHITECTURE.md#rate-limits), shared by it and the model workers. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export const RATE_LIMIT_WORKFLOW_TYPE = 'modelRateLimit';
/** One limiter workflow per endpoint and key; `key` is a hash (src/activities/rate-limit.ts `endpointKey`), never the key. */
export const rateLimitWorkflowId = (key: string): string => `rate-limit/${key}`;

/** Learning an endpoint's concurrency (workers and the limiter workflow alike): where it starts, its ceiling, and its cut on a 429/529. */
export const INITIAL_LIMIT = 8;
export const MAX_LIMIT = 10_000;
export const DECREASE = 0.75;

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
  /** 429/529 answers since its last report that can mean the fleet is over the limit (one per overshoot). */
  limited: number;
  /** Calls that ended well since its last report while it was using all of its share. */
  saturated: number;
  /** `DURABLE_AGENT_FLEET_MAX_CONCURRENT` as the worker has it. */
  fleetCap?: number;
  /** A block it learned from a provider's headers. */
  block?: RateLimitBlock;
  /** No calls in flight or waiting: it leaves the fleet's division until it has calls again. */
  idle?: boolean;
}

/** The limiter workflow's answer: the worker's part of the endpoint. */
export interface FleetShare {
  /** Its part of the learned limit. */
  concurrency: number;
  /** Its part of the fleet cap, when one is set: a hard maximum. */
  grant?: number;
  block: RateLimitBlock;
  /** Workers the limit is divided among. */
  workers: number;
  fleetLimit: number;
  /** When to report next, and how long its place is kept without a report. */
  syncEveryMs: number;
  leaseMs: number;
}

export const syncUpdate = defineUpdate<FleetShare, [FleetReport]>('sync');
