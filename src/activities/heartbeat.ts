/**
 * Heartbeats: how a dead worker is noticed (the server retries the activity elsewhere once a
 * heartbeat is overdue) and how a running activity hears cancellation. An activity must beat
 * well inside its own heartbeat timeout, whatever the session configured; the SDK throttles
 * what actually goes to the server.
 */
import { Context } from '@temporalio/activity';

const DEFAULT_EVERY_MS = 2_000;

/** While chunks stream in with unchanged details, beat at most this often from them. */
const CHUNK_BEAT_EVERY_MS = 500;

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

/**
 * Watches a provider stream: heartbeats while it is alive, aborts the request when the activity
 * is cancelled or when nothing arrives for `idleMs` (a hung provider; Temporal then retries).
 */
export interface StreamWatchdog {
  /** Pass to the request; aborted on cancellation or a stall. */
  signal: AbortSignal;
  /** Call for every chunk received. */
  onChunk(details?: unknown): void;
  /** The error to report instead of the abort's, when the stream stalled. */
  stallError(): Error | undefined;
  dispose(): void;
}

export function watchStream(opts: { idleMs: number; maxEveryMs?: number; phase: string; extra?: object }): StreamWatchdog {
  const ctx = Context.current();
  const abort = new AbortController();
  const onCancel = () => abort.abort(ctx.cancellationSignal.reason);
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  // The same object every time: a chunk beats at once only when its details change.
  const waitingDetails = { ...opts.extra, phase: opts.phase };
  let lastChunkAt = Date.now();
  let lastBeat: unknown;
  let lastBeatAt = 0;
  let stalled = false;
  const ticker = setInterval(() => {
    if (Date.now() - lastChunkAt > opts.idleMs) {
      stalled = true;
      abort.abort(new Error('stalled'));
      return;
    }
    ctx.heartbeat(waitingDetails);
  }, heartbeatEveryMs(opts.maxEveryMs));
  return {
    signal: abort.signal,
    onChunk(details) {
      lastChunkAt = Date.now();
      // New details go at once (the first chunk says the stream began); the same details again
      // only after a quiet spell. The SDK would throttle them anyway, but only after each passed
      // through its pipeline, and a provider can send hundreds of chunks a second.
      const beat = details ?? waitingDetails;
      if (beat === lastBeat && lastChunkAt - lastBeatAt < CHUNK_BEAT_EVERY_MS) return;
      lastBeat = beat;
      lastBeatAt = lastChunkAt;
      ctx.heartbeat(beat);
    },
    stallError: () =>
      stalled ? new Error(`the model sent nothing for ${Math.round(opts.idleMs / 1000)} s; the request was abandoned`) : undefined,
    dispose() {
      clearInterval(ticker);
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
    },
  };
}
