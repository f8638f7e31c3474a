/**
 * One small workflow per model endpoint and key (ARCHITECTURE.md#rate-limits). It holds the
 * fleet's current rate-limit block, and divides the endpoint's concurrency among the model workers
 * calling it: the limit the fleet has learned, and the fleet cap when one is set
 * (src/workflows/rate-limit/fleet-shares.ts). Workers report through the `sync` update while they have calls
 * (about once a second) and get their share back; older workers signal blocks and query them. It
 * closes after an idle hour; the next report or block starts it again.
 */
import { condition, continueAsNew, setHandler, workflowInfo, allHandlersFinished } from '@temporalio/workflow';
import { blockQuery, blockSignal, fleetQuery, syncUpdate, type RateLimitBlock } from '../../shared/rate-limit';
import { applyReport, fleetLimit, initialFleetState, type FleetState } from './fleet-shares';

const IDLE = '1 hour';

export async function modelRateLimit(input: { key: string; block?: RateLimitBlock; fleet?: FleetState }): Promise<void> {
  const fleet = input.fleet ?? initialFleetState(input.block);
  let signals = 0;
  setHandler(blockSignal, (b) => {
    signals++;
    if (typeof b?.untilMs === 'number' && b.untilMs > fleet.block.untilMs)
      fleet.block = { untilMs: b.untilMs, reason: String(b.reason ?? '') };
  });
  setHandler(blockQuery, () => fleet.block);
  setHandler(fleetQuery, () => ({
    limit: Math.floor(fleetLimit(fleet)),
    cuts: fleet.cuts,
    block: fleet.block,
    workers: Object.entries(fleet.workers).map(([workerId, w]) => ({
      workerId,
      learned: w.learned,
      inFlight: w.inFlight,
      applied: w.applied,
      grant: w.grant,
      ...(w.cap ? { cap: w.cap } : {}),
    })),
  }));
  setHandler(
    syncUpdate,
    (report) => {
      signals++;
      return applyReport(fleet, report, Date.now());
    },
    {
      validator: (report) => {
        if (typeof report?.workerId !== 'string' || !report.workerId) throw new Error('sync: workerId is required');
      },
    },
  );
  for (;;) {
    const seen = signals;
    const active = await condition(() => signals !== seen || workflowInfo().continueAsNewSuggested, IDLE);
    if (!active) return;
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof modelRateLimit>({ key: input.key, block: fleet.block, fleet });
    }
  }
}
