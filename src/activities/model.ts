/**
 * `callModel`: one streamed chat completion. Reads its prompt from the workflow through the
 * `prompt` query (its input carries no messages — DESIGN D1), heartbeats while streaming,
 * and returns one assistant reply priced with the worker's pricing table.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { apiRetrySignal, type ApiRetryNotice } from '../shared/api';
import type { CallModelInput, ModelActivities } from '../shared/activities';
import type { AssistantReply, ContentBlock, Message } from '../shared/messages';
import { costOf, DEFAULT_CONTEXT_WINDOW, lookupPrice, type PricingTable } from '../shared/pricing';
import type { ToolSpec } from '../shared/tools';
import { mapFinishReason, toChatMessages, toChatTools, toToolUseBlocks, type PartialToolCall } from './chat-format';
import { classifyModelError, expectedBackoffMs } from './model-errors';
import { readPrompt } from './prompt-reader';
import { keepAlive, watchStream } from './heartbeat';
import { summarize } from './summarize';

export interface ModelDeps {
  /** OpenAI-compatible endpoint (`OPENAI_BASE_URL`) and key (`OPENAI_API_KEY`), from the worker's env. */
  baseURL?: string;
  apiKey?: string;
  pricing: PricingTable;
  /** Abort a stream that sends nothing for this long (a hung provider), so Temporal retries it. */
  streamIdleTimeoutMs?: number;
  /** How often to heartbeat while waiting on the provider. */
  heartbeatEveryMs?: number;
}

export function createModelActivities(deps: ModelDeps): ModelActivities {
  // Temporal owns retries (DESIGN D2): the client must never retry on its own.
  const client = new OpenAI({ baseURL: deps.baseURL, apiKey: deps.apiKey ?? 'not-set', maxRetries: 0, timeout: 10 * 60_000 });
  return {
    async callModel(input: CallModelInput): Promise<AssistantReply> {
      const ctx = Context.current();
      // Beat while the prompt is read too: after a worker crash that query can wait on the
      // server for the session's workflow task, and a silent attempt would be timed out.
      const stop = keepAlive({ phase: 'reading prompt' }, deps.heartbeatEveryMs);
      let prompt: Awaited<ReturnType<typeof readPrompt>>;
      try {
        prompt = await readPrompt(input);
      } finally {
        stop();
      }
      if (input.appendUserText) prompt.messages.push({ role: 'user', content: input.appendUserText });
      const started = Date.now();
      try {
        return await streamCompletion(client, deps, input, prompt, started);
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model call cancelled');
        const c = classifyModelError(err);
        if (c.retryable && ctx.info.attempt < input.maxAttempts) {
          await notifyRetry(input, {
            attempt: ctx.info.attempt,
            maxRetries: input.maxAttempts - 1,
            retryDelayMs: expectedBackoffMs(ctx.info.attempt, input.initialIntervalMs, input.maximumIntervalMs, c.retryAfterMs),
            errorStatus: c.status,
            error: c.failure.message,
          });
        }
        throw c.failure;
      }
    },
    summarize: (input) => summarize(client, deps, input),
  };
}

async function notifyRetry(input: CallModelInput, notice: ApiRetryNotice): Promise<void> {
  try {
    await Context.current().client.workflow.getHandle(input.sessionId, input.runId).signal(apiRetrySignal, notice);
  } catch {
    // Best effort: the retry happens whether or not the event is recorded.
  }
}

async function streamCompletion(
  client: OpenAI,
  deps: ModelDeps,
  input: CallModelInput,
  prompt: { system: string; tools: ToolSpec[]; messages: Message[] },
  started: number,
): Promise<AssistantReply> {
  const watchdog = watchStream({ idleMs: deps.streamIdleTimeoutMs ?? 120_000, maxEveryMs: deps.heartbeatEveryMs, phase: 'waiting' });

  try {
    const tools = prompt.tools.length ? toChatTools(prompt.tools) : undefined;
    const stream = await client.chat.completions.create(
      {
        model: input.model,
        messages: toChatMessages(prompt.system, prompt.messages),
        ...(tools ? { tools } : {}),
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: input.maxOutputTokens,
      },
      { signal: watchdog.signal },
    );
    let id = '';
    let model = input.model;
    let text = '';
    let finish: string | null = null;
    const calls: PartialToolCall[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      watchdog.onChunk({ phase: 'streaming' });
      id ||= chunk.id;
      model = chunk.model || model;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta?.content) text += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        const slot = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        if (tc.function?.arguments) slot.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (finish === null) throw new Error('the stream ended before a finish_reason (connection dropped mid-response)');
    const content: ContentBlock[] = [];
    if (text) content.push({ type: 'text', text });
    content.push(...toToolUseBlocks(calls.filter(Boolean)));
    return priced(deps, {
      id: id || `msg_${started}`,
      model: input.model,
      content,
      stop_reason: mapFinishReason(finish, calls.length > 0),
      usage: {
        input_tokens: (usage?.prompt_tokens ?? 0) - (usage?.prompt_tokens_details?.cached_tokens ?? 0),
        output_tokens: usage?.completion_tokens ?? 0,
        cache_read_input_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        cache_creation_input_tokens: 0,
      },
      durationMs: Date.now() - started,
    });
  } catch (err) {
    throw watchdog.stallError() ?? err;
  } finally {
    watchdog.dispose();
  }
}

function priced(deps: ModelDeps, reply: Omit<AssistantReply, 'costUsd' | 'costBasis' | 'contextWindow'>): AssistantReply {
  const price = lookupPrice(reply.model, deps.pricing);
  const u = reply.usage;
  return {
    ...reply,
    costUsd: costOf(
      {
        inputTokens: u.input_tokens,
        outputTokens: u.output_tokens,
        cacheReadInputTokens: u.cache_read_input_tokens,
        cacheCreationInputTokens: u.cache_creation_input_tokens,
      },
      price,
    ),
    costBasis: price ? 'table' : 'unknown',
    contextWindow: price?.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
  };
}
