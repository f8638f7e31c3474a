/**
 * The worker's in-process hub of live model streams (ARCHITECTURE.md#live-tokens). A model call
 * attempt opens one stream, named by its run, activity id and attempt under this process's secret,
 * and publishes its frames; the live server replays a stream's frames to whoever presents its
 * path, then forwards new ones. A finished stream is kept for `retainMs`, so a client that found
 * it late still reads it whole.
 */
import { randomBytes } from 'node:crypto';
import { LIVE_STREAM_KEPT_MS, liveStreamKey, type LiveFrame } from '../../shared/stream-events';

export interface LiveStream {
  /** Where a client reads this stream. */
  readonly url: string;
  publish(frame: LiveFrame): void;
  /** Publish the final `end` frame; later frames are dropped. */
  end(status: 'completed' | 'failed' | 'cancelled'): void;
}

/** Which attempt a stream belongs to. */
export interface LiveAttempt {
  runId: string;
  activityId: string;
  attempt: number;
}

interface Entry {
  /** Serialized frames, in order. */
  frames: string[];
  listeners: Set<(frame: string, last: boolean) => void>;
  ended: boolean;
}

export class LiveHub {
  private readonly streams = new Map<string, Entry>();
  /**
   * 128 random bits, in every stream's path: a client learns it only from `describe` of a session
   * this worker served (its identity), never by guessing.
   */
  private readonly secret = randomBytes(16).toString('base64url');
  /** Set by the live server once it listens: `http://host:port/live/`. */
  baseUrl: string | undefined;

  constructor(private readonly retainMs = LIVE_STREAM_KEPT_MS) {}

  /** `…/live/<secret>/`: what the worker's identity names (LIVE_IDENTITY_MARK); undefined when no live server listens. */
  get streamsUrl(): string | undefined {
    return this.baseUrl ? `${this.baseUrl}${this.secret}/` : undefined;
  }

  /** A stream for one attempt, or undefined when no live server is listening. Without `attempt`, a one-off path. */
  open(attempt?: LiveAttempt): LiveStream | undefined {
    if (!this.baseUrl) return undefined;
    const token = `${this.secret}/${attempt ? liveStreamKey(attempt.runId, attempt.activityId, attempt.attempt) : randomBytes(16).toString('base64url')}`;
    const entry: Entry = { frames: [], listeners: new Set(), ended: false };
    this.streams.set(token, entry);
    const send = (frame: LiveFrame, last: boolean) => {
      if (entry.ended) return;
      const s = JSON.stringify(frame);
      entry.frames.push(s);
      entry.ended = last;
      for (const l of entry.listeners) l(s, last);
      if (last) {
        entry.listeners.clear();
        setTimeout(() => this.streams.get(token) === entry && this.streams.delete(token), this.retainMs).unref();
      }
    };
    return {
      url: `${this.baseUrl}${token}`,
      publish: (frame) => send(frame, false),
      end: (status) => send({ type: 'end', status }, true),
    };
  }

  /**
   * Every frame of the stream so far, then each new one as it is published (`last` on the end
   * frame). Undefined for an unknown or expired stream.
   */
  subscribe(token: string, listener: (frame: string, last: boolean) => void): (() => void) | undefined {
    const entry = this.streams.get(token);
    if (!entry) return undefined;
    entry.frames.forEach((f, i) => listener(f, entry.ended && i === entry.frames.length - 1));
    if (entry.ended) return () => undefined;
    entry.listeners.add(listener);
    return () => entry.listeners.delete(listener);
  }

  /** Streams held now (open or retained). */
  get size(): number {
    return this.streams.size;
  }
}
