/**
 * A batch job's session tells its batch coordinator what it has spent so far, so the batch budget
 * counts running jobs as well as finished ones (ARCHITECTURE.md#batch-budget).
 *
 * One `spend` signal (the session's total cost, not an increment) after a model call that changed
 * the cost, throttled: at most one per REPORT_EVERY_MS of workflow time, unless the cost grew by at
 * least REPORT_STEP of the session's cap since the last report, and always the first time. Only a
 * top-level session of a batch job with a budget reports (subagents' cost reaches it when they end).
 * The signal is a new command, so it is behind `patched(PATCHES.batchSpend.id)`.
 */
import { getExternalWorkflowHandle, patched, workflowInfo } from '@temporalio/workflow';
import { sessionIdFor, spendSignal } from '../../shared/batch';
import type { SessionConfig } from '../../shared/config';
import { PATCHES } from '../../shared/compat';

/** At most one report per this much workflow time… */
const REPORT_EVERY_MS = 30_000;
/** …unless the spend grew by this share of the session's cap since the last one. */
const REPORT_STEP = 0.1;

/** Returns the function to call with the session's total cost after each model call, or undefined when it has no batch budget to report to. */
export function batchSpendReporter(config: SessionConfig): ((costUsd: number) => void) | undefined {
  const { batchId, maxBudgetUsd: cap } = config;
  if (!batchId || config.subagent || cap === undefined) return undefined;
  const prefix = sessionIdFor(batchId, '');
  const workflowId = workflowInfo().workflowId;
  if (!workflowId.startsWith(prefix)) return undefined;
  const jobId = workflowId.slice(prefix.length);
  let reported = 0;
  let reportedAt: number | undefined;
  return (costUsd) => {
    if (!(costUsd > reported)) return;
    const now = Date.now();
    if (reportedAt !== undefined && now - reportedAt < REPORT_EVERY_MS && costUsd - reported < REPORT_STEP * cap) return;
    if (!patched(PATCHES.batchSpend.id)) return;
    reported = costUsd;
    reportedAt = now;
    // Not awaited: the session does not wait for the coordinator; a coordinator that is gone is ignored.
    getExternalWorkflowHandle(batchId)
      .signal(spendSignal, { jobId, costUsd })
      .catch(() => undefined);
  };
}
