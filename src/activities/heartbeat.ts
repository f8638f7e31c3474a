/**
 * Heartbeats: how a dead worker is noticed (the server retries the activity elsewhere once a
 * heartbeat is overdue) and how a running activity hears cancellation. An activity must beat
 * well inside its own heartbeat timeout, whatever the session configured; the SDK throttles
 * what actually goes to the server.
 */
import { Context } from '@temporalio/activity';

const DEFAULT_EVERY_MS = 2_000;

/** Beat at least four times per heartbeat timeout, and at most every `maxEveryMs`. */
export function heartbeatEveryMs(maxEveryMs = DEFAULT_EVERY_MS): number {
  const timeout = Context.current().info.heartbeatTimeoutMs;
  return timeout ? Math.max(100, Math.min(maxEveryMs, Math.floor(timeout / 4))) : maxEveryMs;
}

/** Heartbeat on a timer until the returned function is called (e.g. while waiting on a query). */
export function keepAlive(details: unknown, maxEveryMs?: number): () => void {
  const ctx = Context.current();
  ctx.heartbeat(details);
  const ticker = setInterval(() => ctx.heartbeat(details), heartbeatEveryMs(maxEveryMs));
  return () => clearInterval(ticker);
}
