/**
 * What a model call attempt publishes to its live stream (ARCHITECTURE.md#live-tokens): `start`
 * once the prompt is read, the reply's stream events as chunks arrive, `end` however the attempt
 * ends. Publishing is in memory and never fails the call.
 */
import type OpenAI from 'openai';
import type { StopReason, Usage } from '../../shared/messages';
import type { LiveHeartbeat } from '../../shared/stream-events';
import type { LiveAttempt, LiveHub, LiveStream } from './hub';
import { StreamTranslator } from './translate';

export class LiveTap {
  private translator: StreamTranslator | undefined;

  private constructor(
    private readonly stream: LiveStream,
    private readonly model: string,
  ) {}

  /** A tap for one attempt, or undefined when the worker serves no live streams. */
  static open(hub: LiveHub | undefined, model: string, attempt?: LiveAttempt): LiveTap | undefined {
    const stream = hub?.open(attempt);
    return stream ? new LiveTap(stream, model) : undefined;
  }

  /** Heartbeat details naming this attempt's stream (for clients that predate the worker identity's mark). */
  details(phase: string): LiveHeartbeat {
    return { phase, live: this.stream.url };
  }

  /** The call follows the session's event `afterSeq`: clients show it after that event. */
  start(afterSeq: number): void {
    this.stream.publish({ type: 'start', afterSeq });
  }

  /** `startedAt` gives the message id when the provider sends none, as `callModel` does. */
  chunk(chunk: OpenAI.ChatCompletionChunk, startedAt: number): void {
    this.translator ??= new StreamTranslator(this.model, `msg_${startedAt}`);
    for (const event of this.translator.onChunk(chunk)) this.stream.publish({ type: 'event', event });
  }

  complete(stopReason: StopReason, usage: Usage): void {
    for (const event of this.translator?.finish(stopReason, usage) ?? []) this.stream.publish({ type: 'event', event });
    this.stream.end('completed');
  }

  fail(cancelled: boolean): void {
    this.stream.end(cancelled ? 'cancelled' : 'failed');
  }
}
