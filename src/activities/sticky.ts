/**
 * Leaving a dead worker's sticky queue (ARCHITECTURE.md#recovery). A session's workflow tasks
 * and queries go to the sticky queue of the worker that last ran it, and the server keeps trying
 * that queue for the sticky timeout even when the worker was SIGKILLed. A retried model or tool
 * call whose previous attempt ran in another process (most often: that process died) clears the
 * session's stickiness first, so its prompt query and the workflow task after it go to the
 * shared queue at once. Retries in the same process (a provider's 429 or 500) leave it alone:
 * their worker is alive and still holds the workflow in its cache.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';

/** This worker process, as named in the heartbeat details of its model and tool calls. */
const WORKER_PROCESS = randomUUID();

/** Heartbeat details carrying the process that sent them (an object's fields are kept; anything else is dropped). */
export function withWorkerProcess(details: unknown): Record<string, unknown> {
  const base = details !== null && typeof details === 'object' && !Array.isArray(details) ? details : {};
  return { ...base, worker: WORKER_PROCESS };
}

/** Did the previous attempt of this activity run in another process (or say nothing of where it ran)? */
function previousAttemptElsewhere(): boolean {
  const info = Context.current().info;
  if (info.attempt <= 1) return false;
  const previous = info.heartbeatDetails as { worker?: unknown } | undefined;
  return previous?.worker !== WORKER_PROCESS;
}

/**
 * Clear the session's sticky queue when the previous attempt ran elsewhere. Best effort: a
 * failure here only means the old wait for the sticky timeout; it is never the call's failure.
 */
export async function leaveStickyQueueOfPreviousAttempt(): Promise<void> {
  const ctx = Context.current();
  const execution = ctx.info.workflowExecution;
  if (!execution || !previousAttemptElsewhere()) return;
  try {
    await ctx.client.workflowService.resetStickyTaskQueue({
      namespace: ctx.info.namespace,
      execution: { workflowId: execution.workflowId, runId: execution.runId },
    });
  } catch (err) {
    ctx.log.warn('could not clear the session sticky queue before a retry', { error: String(err) });
  }
}
