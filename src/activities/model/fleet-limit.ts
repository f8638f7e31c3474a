/**
 * Shares an endpoint's limits across worker processes through Temporal itself
 * (ARCHITECTURE.md#rate-limits). While the process has calls to the endpoint in flight or waiting,
 * it reports to the endpoint's limiter workflow (src/workflows/rate-limit/rate-limit.ts) through the `sync`
 * update about once a second — its calls, its learned part of the limit, its 429s, a block it
 * learned — and applies the answer: a cut another worker's 429 called for, a starting part when it
 * joins, its part of the fleet cap, the fleet's block. A block is reported at once. Until a worker
 * meets a limit (or a fleet cap is set) no limiter workflow is started: workers only look for one
 * every few seconds. Best effort for learning (a failed report leaves
 * the worker on what it learned alone); with a fleet cap, a worker that cannot report loses its
 * grant when its lease ends, and then starts nothing (what cannot be checked is not allowed).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  blockSignal,
  RATE_LIMIT_WORKFLOW_TYPE,
  rateLimitWorkflowId,
  syncUpdate,
  type FleetReport,
  type FleetShare,
  type RateLimitBlock,
} from '../../shared/rate-limit';
import type { EndpointLimiter } from './rate-limit';

/** This process, as the limiter workflows know it. */
const WORKER_ID = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

/** Reports after the last call ended before the worker leaves the division. */
const IDLE_REPORTS = 3;
/** With nothing to share, how often to look again for a limiter workflow another worker started. */
const ABSENT_RECHECK_MS = 5_000;

export class FleetLimitSync {
  private running = false;
  private everyMs = 1_000;
  private blockToShare: RateLimitBlock | undefined;
  private absentUntil = 0;
  private answeredAt = 0;
  /** Calls waiting for the next report's answer. */
  private waiters: (() => void)[] = [];
  private kick: (() => void) | undefined;

  constructor(
    /** The workflow queue, where the limiter workflow runs. */
    private readonly taskQueue: string,
    private readonly limiter: EndpointLimiter,
    private readonly workerId = WORKER_ID,
  ) {
    limiter.onDemand = () => this.start();
  }

  /** The worker's client (from an activity's context): the reports go through it. */
  private client: Client | undefined;
  attach(client: Client): void {
    this.client ??= client;
  }

  /** Tell the fleet: no call to this endpoint until `block.untilMs` (with the next report, sent now). */
  share(block: RateLimitBlock): void {
    if (!this.blockToShare || block.untilMs > this.blockToShare.untilMs) this.blockToShare = block;
    this.start();
    this.kick?.();
  }

  /** Report now and then about once a second while the process has calls to the endpoint. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
      // A call that arrived while the last report said "idle" is reported for again.
      if (this.limiter.inFlight + this.limiter.waiting > 0) this.start();
    });
  }

  private async loop(): Promise<void> {
    let quiet = 0;
    while (quiet <= IDLE_REPORTS) {
      const busy = this.limiter.inFlight + this.limiter.waiting > 0;
      quiet = busy ? 0 : quiet + 1;
      await this.report(quiet > IDLE_REPORTS);
      if (quiet > IDLE_REPORTS) return;
      // A call that asked for the fleet's word during that report gets the next one at once.
      if (this.waiters.length > 0) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.everyMs);
        t.unref(); // never what keeps a process alive
        this.kick = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.kick = undefined;
    }
  }

  /**
   * Before a call starts: the fleet's word, if the last is older than a report interval (a block
   * another worker met, this worker's share). Bounded: a server that is away never holds a call long.
   */
  async fresh(client: Client, boundMs = 2_000): Promise<void> {
    this.attach(client);
    if (Date.now() - this.answeredAt < this.everyMs) return;
    let timer: NodeJS.Timeout | undefined;
    const next = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.start();
    this.kick?.();
    await Promise.race([next, new Promise((r) => (timer = setTimeout(r, boundMs)))]);
    clearTimeout(timer);
  }

  private async report(idle: boolean): Promise<void> {
    const waiters = this.waiters.splice(0);
    try {
      await this.send(idle);
    } finally {
      for (const w of waiters) w();
    }
  }

  private async send(idle: boolean): Promise<void> {
    const client = this.client;
    if (!client) return;
    const l = this.limiter;
    // Leaving the division gives the grant back first: a call arriving meanwhile waits for a new one.
    if (idle) l.fleetGrant = undefined;
    const concurrency = l.concurrency();
    const report: FleetReport = {
      workerId: this.workerId,
      inFlight: l.inFlight,
      applied: idle ? 0 : Number.isFinite(concurrency.n) ? concurrency.n : l.inFlight,
      learned: l.learned,
      limited: l.pending.limited,
      ...(l.caps.fleetMaxConcurrent ? { fleetCap: l.caps.fleetMaxConcurrent } : {}),
      ...(this.blockToShare ? { block: this.blockToShare } : {}),
      ...(idle ? { idle: true } : {}),
    };
    // Until someone meets a limit (or a fleet cap is set) there is nothing to share: no workflow is started for it.
    const mustStart = !!(report.fleetCap || report.block || report.limited);
    if (!mustStart && Date.now() < this.absentUntil) {
      this.answeredAt = Date.now();
      return;
    }
    const sentAt = Date.now();
    try {
      const share = await this.sync(client, report, mustStart);
      if (!share) {
        this.absentUntil = this.answeredAt = Date.now();
        this.absentUntil += ABSENT_RECHECK_MS;
        return;
      }
      // Counted once the fleet has them.
      l.pending.limited -= report.limited;
      if (this.blockToShare === report.block) this.blockToShare = undefined;
      this.answeredAt = Date.now();
      this.everyMs = share.syncEveryMs;
      if (share.block.untilMs > l.blockedUntil) l.block(share.block.untilMs, `${share.block.reason}, seen by another worker`);
      if (!idle) l.applyShare(share, sentAt, report.limited > 0);
    } catch {
      // The server is away or busy: the worker goes on with what it learned; a fleet grant runs out with its lease.
    }
  }

  private async sync(client: Client, report: FleetReport, mustStart: boolean): Promise<FleetShare | undefined> {
    const workflowId = rateLimitWorkflowId(this.limiter.key);
    const handle = client.workflow.getHandle(workflowId);
    try {
      return await handle.executeUpdate(syncUpdate, { args: [report] });
    } catch (e) {
      // None yet, or closed after an idle hour.
      if (!(e instanceof WorkflowNotFoundError) && !/already completed|not found/i.test(String((e as Error)?.message))) throw e;
      if (!mustStart) return undefined;
      // First report for this endpoint (or the workflow closed after an idle hour): start it, then report.
      await client.workflow.signalWithStart(RATE_LIMIT_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [{ key: this.limiter.key }],
        signal: blockSignal,
        signalArgs: [report.block ?? { untilMs: 0, reason: '' }],
      });
      return await handle.executeUpdate(syncUpdate, { args: [report] });
    }
  }
}

const syncs = new Map<string, FleetLimitSync>();

/** The process's fleet sync for an endpoint's limiter (one per limiter, however many workers share it). */
export function fleetSyncFor(taskQueue: string, limiter: EndpointLimiter): FleetLimitSync {
  let s = syncs.get(limiter.key);
  if (!s) syncs.set(limiter.key, (s = new FleetLimitSync(taskQueue, limiter)));
  return s;
}
