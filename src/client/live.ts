/**
 * A session's messages with live tokens (ARCHITECTURE.md#live-tokens): the `events` query as
 * `followEvents` reads it, merged with the `stream_event`s of each model call, read from the
 * worker that runs the call. Where a call's stream is served is found in the heartbeat details
 * of the session's pending model call (`describe`); nothing per token passes through Temporal.
 *
 * Order: a call's stream starts after the event its worker saw last when it read the prompt
 * (`afterSeq`), and ends before the next `assistant` event, which is that call's whole reply. A
 * stream found only after its reply was shown is dropped.
 *
 * A call over before a look at the pending activities found it is found when its reply arrives:
 * the session's history names the worker and attempt that ran it, and the worker keeps a finished
 * stream for a minute (LIVE_STREAM_KEPT_MS), so the reply goes out after its stream all the same.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SDKPartialAssistantMessage, SessionEvent } from '../shared/events';
import { LIVE_STREAM_KEPT_MS, type LiveFrame } from '../shared/stream-events';
import { finishedCallStreams, liveUrlFromIdentity, liveUrlOf, LiveStreamGone, readLiveStream } from './live-sse';
import { followEvents, type FollowOptions } from './stream';

/** What a session's reader yields with live tokens: the event log's messages and `stream_event`s. */
export type StreamMessage = SessionEvent | SDKPartialAssistantMessage;

export interface LiveOptions extends Omit<FollowOptions, 'wait'> {
  /** How often to look for a model call's stream while a turn runs (ms; default 100). */
  livePollMs?: number;
  /** The same while the session waits for a message (ms; default 1,000). */
  idlePollMs?: number;
  /** Longest wait for a call's stream to finish before its `assistant` message goes out anyway (ms; default 5,000). */
  drainMs?: number;
  /** A stream could not be read (e.g. the worker's live server is not reachable from here). */
  onLiveError?: (e: Error) => void;
}

interface Live {
  url: string;
  afterSeq?: number;
  buffered: SDKPartialAssistantMessage[];
  released: boolean;
  dropped: boolean;
  finished: boolean;
  /** How the attempt ended, once its `end` frame came. */
  outcome?: 'completed' | 'failed' | 'cancelled';
  started: Promise<void>;
  ended: Promise<void>;
  markStarted(): void;
  finish(): void;
  abort: AbortController;
}

const HIGH_WATER = 1_000;
const REMEMBERED_URLS = 1_000;

export async function* followWithPartials(client: Client, sessionId: string, opts: LiveOptions = {}): AsyncGenerator<StreamMessage> {
  const out = new Outbox();
  const historyWake = new Wake();
  const discoveryWake = new Wake();
  const streams = new Map<string, Live>();
  const seen = new Set<string>();
  let pushedSeq = opts.after ?? -1;
  let lastAssistantSeq = -1;
  /** The session's own previous reply (a subagent's replies are not its calls). */
  let lastOwnReplySeq = -1;
  /** The streams that started since the session's previous reply (an attempt each). */
  let attempts: Live[] = [];
  let idle = false;
  let stopped = false;
  let runId: string | undefined;
  /** When the page of events being shown arrived, and when the history was last read for finished calls. */
  let pageAt = 0;
  let historyReadAt = 0;
  let historyReadTo: { runId: string; eventId: number } | undefined;

  const release = (s: Live, force = false): void => {
    if (s.released || s.dropped || s.afterSeq === undefined || (!force && pushedSeq < s.afterSeq)) return;
    s.released = true;
    for (const m of s.buffered) out.push(m);
    s.buffered = [];
    if (s.finished) streams.delete(s.url);
  };
  const drop = (s: Live): void => {
    s.dropped = true;
    s.buffered = [];
    s.abort.abort();
    streams.delete(s.url);
  };

  const onFrame = (s: Live, frame: LiveFrame): void => {
    if (s.dropped) return;
    if (frame.type === 'start') {
      s.afterSeq = frame.afterSeq;
      attempts.push(s);
      s.markStarted();
      // The first reply after `afterSeq` is this call's: if one was shown already, the call is over.
      if (lastAssistantSeq > frame.afterSeq) return drop(s);
      release(s);
      if (!s.released) historyWake.wake();
    } else if (frame.type === 'event') {
      const m: SDKPartialAssistantMessage = {
        type: 'stream_event',
        event: frame.event,
        parent_tool_use_id: null,
        uuid: randomUUID(),
        session_id: sessionId,
      };
      if (s.released) out.push(m);
      else s.buffered.push(m);
    } else {
      s.outcome = frame.status;
      s.finish();
    }
  };

  const connect = (url: string): void => {
    seen.add(url);
    if (seen.size > REMEMBERED_URLS) seen.delete(seen.values().next().value!);
    let resolveStarted!: () => void;
    let resolveEnded!: () => void;
    const s: Live = {
      url,
      buffered: [],
      released: false,
      dropped: false,
      finished: false,
      started: new Promise((r) => (resolveStarted = r)),
      ended: new Promise((r) => (resolveEnded = r)),
      markStarted: () => resolveStarted(),
      finish() {
        s.finished = true;
        resolveStarted();
        resolveEnded();
      },
      abort: new AbortController(),
    };
    streams.set(url, s);
    readLiveStream(url, s.abort.signal, (f) => onFrame(s, f))
      .catch((e: Error) => {
        if (!stopped && !s.dropped && !(e instanceof LiveStreamGone)) opts.onLiveError?.(e);
      })
      .finally(() => {
        s.finish();
        // A finished stream still waiting for the events before it stays until it is shown.
        if (s.released || s.dropped || s.afterSeq === undefined) streams.delete(url);
      });
  };

  const open = () => [...streams.values()].filter((s) => !s.dropped && !(s.finished && s.released));

  /**
   * The streams of calls that finished since the history was last read, connected: one read per
   * page of events at most, since a read after a page arrived names every call whose reply it holds.
   */
  const findFinished = async (): Promise<void> => {
    if (historyReadAt > pageAt) return;
    historyReadAt = Date.now();
    try {
      runId ??= (await client.workflow.getHandle(sessionId).describe()).runId;
      const afterEventId = historyReadTo?.runId === runId ? historyReadTo.eventId : undefined;
      const found = await finishedCallStreams(client, sessionId, runId, { withinMs: LIVE_STREAM_KEPT_MS, afterEventId });
      historyReadTo = { runId, eventId: found.newestEventId };
      for (const url of found.urls) if (!seen.has(url) && !stopped) connect(url);
    } catch (e) {
      if (!stopped) opts.onLiveError?.(e as Error);
    }
  };

  /** Before a reply goes out: every stream of a call before it has been shown whole. */
  const settleBefore = async (e: SessionEvent & { type: 'assistant' }): Promise<void> => {
    const seq = e.seq;
    const deadline = Date.now() + (opts.drainMs ?? 5_000);
    await Promise.all(open().map((s) => until(s.started, deadline)));
    // The session's own call with no stream found since its previous reply, or only attempts that
    // were cut (a retry over before a look found it): the attempt that completed is in history.
    const found = attempts.some(
      (s) => s.afterSeq! >= lastOwnReplySeq && s.afterSeq! < seq && s.outcome !== 'failed' && s.outcome !== 'cancelled',
    );
    if (e.parent_tool_use_id === null && !found) {
      await findFinished();
      await Promise.all(open().map((s) => until(s.started, deadline)));
    }
    for (const s of open()) {
      if (s.afterSeq === undefined || s.afterSeq >= seq) continue;
      release(s, true);
      await until(s.ended, deadline);
      if (!s.finished) drop(s);
    }
  };

  const history = (async () => {
    try {
      const wait = (ms: number) => historyWake.sleep(ms, () => stopped);
      for await (const e of followEvents(client, sessionId, { ...opts, wait, onPage: (at) => (pageAt = at) })) {
        if (stopped) break;
        if (e.type === 'assistant') await settleBefore(e);
        out.push(e);
        pushedSeq = e.seq;
        if (e.type === 'assistant') lastAssistantSeq = e.seq;
        if (e.type === 'assistant' && e.parent_tool_use_id === null) {
          lastOwnReplySeq = e.seq;
          attempts = attempts.filter((s) => s.afterSeq! >= e.seq);
        }
        // A new turn after a wait: look for its model call now, not at the idle pace.
        if (idle && e.type !== 'result') discoveryWake.wake();
        idle = e.type === 'result';
        for (const s of streams.values()) release(s);
        await out.space(HIGH_WATER, () => stopped);
      }
      out.finish();
    } catch (e) {
      out.fail(e);
    }
  })();

  const discovery = (async () => {
    const handle = client.workflow.getHandle(sessionId);
    while (!stopped) {
      try {
        const d = await handle.describe();
        runId = d.runId;
        for (const a of d.raw.pendingActivities ?? []) {
          const url = liveUrlFromIdentity(d.runId, a) ?? (await liveUrlOf(client.options.loadedDataConverter, a));
          if (url && !seen.has(url) && !stopped) connect(url);
        }
      } catch {
        // The history side reports a session that cannot be read; a missed look only costs liveness.
      }
      await discoveryWake.sleep(idle ? (opts.idlePollMs ?? 1_000) : (opts.livePollMs ?? 100), () => stopped);
    }
  })();

  try {
    for (let m = await out.next(); m !== undefined; m = await out.next()) yield m;
  } finally {
    stopped = true;
    for (const s of streams.values()) s.abort.abort();
    historyWake.wake();
    discoveryWake.wake();
    out.wakeAll();
    await Promise.allSettled([history, discovery]);
  }
}

function until(p: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now()))));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** A timer that can be cut short. */
class Wake {
  private wakers = new Set<() => void>();
  sleep(ms: number, stopped: () => boolean): Promise<void> {
    if (stopped()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
  wake(): void {
    for (const w of [...this.wakers]) w();
  }
}

/** The merged stream's queue: pushed in order by both sides, read by the generator. */
class Outbox {
  private items: StreamMessage[] = [];
  private done = false;
  private error: unknown;
  private waiters: (() => void)[] = [];

  push(m: StreamMessage): void {
    this.items.push(m);
    this.wakeAll();
  }
  finish(): void {
    this.done = true;
    this.wakeAll();
  }
  fail(e: unknown): void {
    this.error = e;
    this.finish();
  }
  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async next(): Promise<StreamMessage | undefined> {
    for (;;) {
      const m = this.items.shift();
      if (m !== undefined) {
        this.wakeAll();
        return m;
      }
      if (this.done) {
        if (this.error !== undefined) throw this.error;
        return undefined;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  /** Resolves once fewer than `max` items wait (or the reader stopped). */
  async space(max: number, stopped: () => boolean): Promise<void> {
    while (this.items.length >= max && !stopped()) await new Promise<void>((r) => this.waiters.push(r));
  }
}
