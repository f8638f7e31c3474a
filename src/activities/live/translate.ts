/**
 * OpenAI chat-completion chunks as the Anthropic Messages API stream events the Claude Agent
 * SDK's `stream_event` carries (ARCHITECTURE.md#live-tokens): `message_start` at the first chunk,
 * one content block per run of text or per tool call, `message_delta` and `message_stop` once
 * the reply is complete and its usage known. Pure: no I/O.
 */
import type OpenAI from 'openai';
import type { StopReason, Usage } from '../../shared/messages';
import type { StreamEvent, StreamUsage } from '../../shared/stream-events';

export class StreamTranslator {
  private started = false;
  private nextIndex = 0;
  private open: { index: number; kind: 'text' } | { index: number; kind: 'tool'; toolIndex: number } | undefined;

  constructor(
    private readonly model: string,
    /** Used as the message id when the provider sends none (as `callModel` does). */
    private readonly fallbackId: string,
  ) {}

  onChunk(chunk: OpenAI.ChatCompletionChunk): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'message_start',
        message: {
          id: chunk.id || this.fallbackId,
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          container: null,
          context_management: null,
          diagnostics: null,
          stop_details: null,
          stop_reason: null,
          stop_sequence: null,
          usage: usage(0, 0, 0),
        },
      });
    }
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) {
      if (this.open?.kind !== 'text') {
        this.close(out);
        this.open = { index: this.nextIndex++, kind: 'text' };
        out.push({ type: 'content_block_start', index: this.open.index, content_block: { type: 'text', text: '', citations: null } });
      }
      out.push({ type: 'content_block_delta', index: this.open.index, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const tc of delta?.tool_calls ?? []) {
      if (this.open?.kind !== 'tool' || this.open.toolIndex !== tc.index) {
        this.close(out);
        this.open = { index: this.nextIndex++, kind: 'tool', toolIndex: tc.index };
        out.push({
          type: 'content_block_start',
          index: this.open.index,
          content_block: { type: 'tool_use', id: tc.id ?? '', name: tc.function?.name ?? '', input: {} },
        });
      }
      if (tc.function?.arguments) {
        out.push({
          type: 'content_block_delta',
          index: this.open.index,
          delta: { type: 'input_json_delta', partial_json: tc.function.arguments },
        });
      }
    }
    return out;
  }

  /** The events that end a complete reply. */
  finish(stopReason: StopReason, u: Omit<Usage, 'cache_creation_input_tokens'>): StreamEvent[] {
    const out: StreamEvent[] = [];
    this.close(out);
    const {
      cache_creation: _c,
      inference_geo: _g,
      service_tier: _s,
      speed: _sp,
      ...rest
    } = usage(u.input_tokens, u.output_tokens, u.cache_read_input_tokens);
    out.push({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null },
      usage: rest,
      context_management: null,
    });
    out.push({ type: 'message_stop' });
    return out;
  }

  private close(out: StreamEvent[]): void {
    if (this.open) out.push({ type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }
}

function usage(input: number, output: number, cacheRead: number): StreamUsage {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cacheRead,
    cache_creation: null,
    fallback_credit: null,
    inference_geo: null,
    iterations: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: null,
    speed: null,
  };
}
