/**
 * The worker's in-process hub of live model streams (ARCHITECTURE.md#live-tokens). A model call
 * attempt opens one stream under a fresh unguessable token and publishes its frames; the live
 * server replays a stream's frames to whoever presents the token, then forwards new ones. A
 * finished stream is kept for `retainMs`, so a client that found it late still reads it whole.
 */
import { randomBytes } from 'node:crypto';
import type { LiveFrame } from '../../shared/stream-events';

export interface LiveStream {
  /** Where a client reads this stream (goes into the attempt's heartbeat details). */
  readonly url: string;
  publish(frame: LiveFrame): void;
  /** Publish the final `end` frame; later frames are dropped. */
  end(status: 'completed' | 'failed' | 'cancelled'): void;
}

interface Entry {
  /** Serialized frames, in order. */
  frames: string[];
  listeners: Set<(frame: string, last: boolean) => void>;
  ended: boolean;
}

export class LiveHub {
  private readonly streams = new Map<string, Entry>();
  /** Set by the live server once it listens: `http://host:port/live/`. */
  baseUrl: string | undefined;

  constructor(private readonly retainMs = 60_000) {}

  /** A stream for one attempt, or undefined when no live server is listening. */
  open(): LiveStream | undefined {
    if (!this.baseUrl) return undefined;
    // 128 random bits: knowing one session's id (and so its describe) never yields another's token.
    const token = randomBytes(16).toString('base64url');
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
        setTimeout(() => this.streams.delete(token), this.retainMs).unref();
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
   * frame). Undefined for an unknown or expired token.
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
