/**
 * A scripted turn rendered as OpenAI chat-completions wire objects (pure, no I/O).
 *
 * Typed against the `openai` package's own response types so the fake cannot drift from what
 * the real client parses. Chunking is deterministic, so a test can say "drop after 3 chunks"
 * and know what the client got: one role chunk, one chunk per word of text, per tool call one
 * header chunk (id, name, empty arguments) then its arguments in three pieces, one finish chunk,
 * then (with `stream_options.include_usage`) a usage chunk with `choices: []`.
 */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ScriptedTurn } from './scenario';

export interface RenderedReply {
  id: string;
  created: number;
  model: string;
  text: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  usage: CompletionUsage;
}

export interface RenderContext {
  scenario: string;
  turnIndex: number;
  /** The request's model; replies report the scenario's model if it names one. */
  model: string;
  /** Characters of the request's messages, for the default prompt_tokens. */
  promptChars: number;
  now: number;
}

export function renderReply(turn: ScriptedTurn, ctx: RenderContext): RenderedReply {
  const toolCalls = (turn.tool_calls ?? []).map((call, i) => ({
    id: call.id ?? `call_${ctx.turnIndex}_${i}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const text = turn.text ?? null;
  const outChars = (text ?? '').length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const prompt = turn.usage?.prompt_tokens ?? Math.ceil(ctx.promptChars / 4);
  const completion = turn.usage?.completion_tokens ?? Math.max(1, Math.ceil(outChars / 4));
  return {
    id: `chatcmpl-scripted-${ctx.scenario}-${ctx.turnIndex}`,
    created: Math.floor(ctx.now / 1000),
    model: ctx.model,
    text,
    toolCalls,
    finishReason: turn.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: turn.usage?.cached_tokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  };
}

export function completionObject(reply: RenderedReply): ChatCompletion {
  const message: ChatCompletion.Choice['message'] = { role: 'assistant', content: reply.text, refusal: null };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id: reply.id,
    object: 'chat.completion',
    created: reply.created,
    model: reply.model,
    system_fingerprint: 'fp_scripted',
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage: reply.usage,
  };
}

export function streamChunks(reply: RenderedReply, options: { includeUsage: boolean }): ChatCompletionChunk[] {
  const chunk = (
    delta: ChatCompletionChunk.Choice['delta'],
    finish: ChatCompletionChunk.Choice['finish_reason'] = null,
  ): ChatCompletionChunk => ({
    id: reply.id,
    object: 'chat.completion.chunk',
    created: reply.created,
    model: reply.model,
    system_fingerprint: 'fp_scripted',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    // As OpenAI does: with include_usage every chunk carries `usage: null` but the last.
    ...(options.includeUsage ? { usage: null } : {}),
  });
  const chunks = [chunk({ role: 'assistant', content: reply.text === null ? null : '', refusal: null })];
  for (const word of splitWords(reply.text ?? '')) chunks.push(chunk({ content: word }));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of splitInto(call.arguments, 3)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, reply.finishReason));
  if (options.includeUsage) {
    chunks.push({
      id: reply.id,
      object: 'chat.completion.chunk',
      created: reply.created,
      model: reply.model,
      system_fingerprint: 'fp_scripted',
      choices: [],
      usage: reply.usage,
    });
  }
  return chunks;
}

/** The error body OpenAI sends: `{ error: { message, type, param, code } }`. */
export function errorBody(message: string, type: string, code: string | null = null): unknown {
  return { error: { message, type, param: null, code } };
}

/** Words with their following whitespace; joined they give back `text` exactly. */
function splitWords(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((w) => w.length > 0);
}

/** Up to `n` pieces, cut between code points (never inside a surrogate pair). */
function splitInto(text: string, n: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / n));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}
