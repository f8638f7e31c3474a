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

/** Sends one heartbeat (the activity's own, or a DeferredHeartbeat's). */
export type Beat = (details: unknown) => void;

/**
 * The heartbeats of one model call attempt: none reaches the server before half the heartbeat
 * timeout has passed. Until then the server's timeout, counted from the attempt's start, watches
 * the worker as well as a beat would, so a call that ends sooner (a short reply) costs the server
 * no heartbeat: a write per call saved. Clients find its live stream from the worker's identity,
 * not from a beat (ARCHITECTURE.md#live-tokens). The latest details held back go out when the
 * window ends; from then on every beat goes through (the SDK throttles them). Cancellation is heard
 * on a beat, so a call cancelled in the window learns it at the window's end.
 *
 * The window is counted from when the server scheduled the attempt, not from when this code
 * starts: on a busy worker an attempt reaches the activity a second or more after the server
 * started its timeout, and a window counted from here ended with the timeout nearly spent
 * (measured: the first heartbeat 2.9 s into a 3 s timeout; ARCHITECTURE.md#recovery). An attempt
 * that reaches here past half its timeout beats at once.
 */
export class DeferredHeartbeat {
  private held: { details: unknown } | undefined;
  private open: boolean;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx = Context.current()) {
    const timeout = ctx.info.heartbeatTimeoutMs;
    // The attempt started on the server at or after it was scheduled; a worker clock behind the
    // server's at worst leaves the window at half the timeout, as when it was counted from here.
    const waited = Math.max(0, Date.now() - ctx.info.currentAttemptScheduledTimestampMs);
    const windowMs = timeout ? Math.floor(timeout / 2) - waited : 0;
    this.open = windowMs <= 0;
    if (!this.open) {
      this.timer = setTimeout(() => {
        this.open = true;
        if (this.held) ctx.heartbeat(this.held.details);
        this.held = undefined;
      }, windowMs);
    }
  }

  readonly beat: Beat = (details) => {
    if (this.open) this.ctx.heartbeat(details);
    else this.held = { details };
  };

  /**
   * Record what was held back before the attempt fails: the SDK sends the last details with the
   * failure, so the retry learns which process ran this one (sticky.ts) even inside the window.
   */
  flush(): void {
    if (this.held) this.ctx.heartbeat(this.held.details);
    this.held = undefined;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** Heartbeat on a timer until the returned function is called (e.g. while waiting on a query). */
export function keepAlive(details: unknown, maxEveryMs?: number, beat?: Beat): () => void {
  const ctx = Context.current();
  const send: Beat = beat ?? ((d) => ctx.heartbeat(d));
  send(details);
  const ticker = setInterval(() => send(details), heartbeatEveryMs(maxEveryMs));
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

export function watchStream(opts: { idleMs: number; maxEveryMs?: number; phase: string; extra?: object; beat?: Beat }): StreamWatchdog {
  const ctx = Context.current();
  const send: Beat = opts.beat ?? ((d) => ctx.heartbeat(d));
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
    send(waitingDetails);
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
      send(beat);
    },
    stallError: () =>
      stalled ? new Error(`the model sent nothing for ${Math.round(opts.idleMs / 1000)} s; the request was abandoned`) : undefined,
    dispose() {
      clearInterval(ticker);
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
    },
  };
}
