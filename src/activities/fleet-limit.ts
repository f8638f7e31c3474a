/**
 * Shares an endpoint's rate-limit blocks across worker processes through Temporal itself
 * (ARCHITECTURE.md#rate-limits): a block learned here is signalled to the endpoint's limiter
 * workflow (src/workflows/rate-limit.ts); before a call, the block the fleet knows of is read by
 * query, at most once a second per endpoint and worker. Best effort: a failure to reach the
 * limiter workflow never fails a model call (the provider's own 429 still stops it).
 */
import type { Client } from '@temporalio/client';
import { blockQuery, blockSignal, RATE_LIMIT_WORKFLOW_TYPE, rateLimitWorkflowId, type RateLimitBlock } from '../shared/rate-limit';
import type { EndpointLimiter } from './rate-limit';

export class FleetLimitSync {
  private lastRead = 0;
  private reading: Promise<void> | undefined;

  constructor(
    /** The workflow queue, where the limiter workflow runs. */
    private readonly taskQueue: string,
    private readonly everyMs = 1_000,
  ) {}

  /** Tell the fleet: no call to this endpoint until `block.untilMs`. */
  async share(client: Client, limiter: EndpointLimiter, block: RateLimitBlock): Promise<void> {
    await client.workflow
      .signalWithStart(RATE_LIMIT_WORKFLOW_TYPE, {
        workflowId: rateLimitWorkflowId(limiter.key),
        taskQueue: this.taskQueue,
        args: [{ key: limiter.key }],
        signal: blockSignal,
        signalArgs: [block],
      })
      .catch(() => undefined);
  }

  /** Learn the fleet's block for this endpoint (a query, at most once per `everyMs`). */
  async refresh(client: Client, limiter: EndpointLimiter): Promise<void> {
    if (Date.now() - this.lastRead < this.everyMs) return this.reading;
    this.lastRead = Date.now();
    this.reading = client.workflow
      .getHandle(rateLimitWorkflowId(limiter.key))
      .query(blockQuery)
      .then((b) => void (b && limiter.block(b.untilMs, `${b.reason}, seen by another worker`)))
      .catch(() => undefined); // none yet (no block ever seen), or the server is away
    return this.reading;
  }
}
