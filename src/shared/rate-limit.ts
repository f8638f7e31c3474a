/** The fleet-wide rate-limit workflow's interface (ARCHITECTURE.md#rate-limits), shared by it and the model workers. */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const RATE_LIMIT_WORKFLOW_TYPE = 'modelRateLimit';
/** One limiter workflow per endpoint and key; `key` is a hash (src/activities/rate-limit.ts `endpointKey`), never the key. */
export const rateLimitWorkflowId = (key: string): string => `rate-limit/${key}`;

export interface RateLimitBlock {
  /** Epoch ms until which no model call to the endpoint may start. */
  untilMs: number;
  reason: string;
}

export const blockSignal = defineSignal<[RateLimitBlock]>('block');
export const blockQuery = defineQuery<RateLimitBlock>('block');
