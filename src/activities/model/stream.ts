/**
 * One streamed chat completion, shared by `callModel` and `summarize`: read the prompt through
 * the workflow's `prompt` query (ARCHITECTURE.md#transcript-by-reference), stream the reply
 * under the stream watchdog, check that it finished, map its usage, price it, and turn any
 * failure into the `ApplicationFailure` Temporal retries on — telling the session first when a
 * retry will follow (ARCHITECTURE.md#temporal-owns-retries).
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { apiRetrySignal, type ApiRetryNotice } from '../../shared/api';
import { tokenCounts, type Usage } from '../../shared/messages';
import { costOf, DEFAULT_CONTEXT_WINDOW, lookupPrice, type PricingTable } from '../../shared/pricing';
import { mapFinishReason, type PartialToolCall } from './chat-format';
import type { ChatStreamClient } from './chat-stream';
import { DeferredHeartbeat, keepAlive, watchStream, type Beat } from '../heartbeat';
import { withWorkerProcess } from '../sticky';
import type { LiveHub } from '../live/hub';
import { LiveTap } from '../live/tap';
import { classifyModelError, expectedBackoffMs } from './errors';
import type { PromptOffers } from './prompt-offers';
import type { EndpointLimiter, Slot } from './rate-limit';
import type { FleetLimitSync } from './fleet-limit';
import { readPrompt, type Prompt, type PromptRef } from './prompt-reader';
import { abandonedByServer, AttemptSpend, reportAbandoned } from './abandoned';

export interface ModelDeps {
  /** OpenAI-compatible endpoint (`OPENAI_BASE_URL`) and key (`OPENAI_API_KEY`), from the worker's env. */
  baseURL?: string;
  apiKey?: string;
  /** OPENAI_ORG_ID and OPENAI_PROJECT_ID, from the worker's settings: sent as the `openai-organization` / `openai-project` headers. */
  organization?: string;
  project?: string;
  pricing: PricingTable;
  /** Abort a stream that sends nothing for this long (a hung provider), so Temporal retries it. */
  streamIdleTimeoutMs?: number;
  /** How often to heartbeat while waiting on the provider. */
  heartbeatEveryMs?: number;
  /** Where calls that stream live publish (ARCHITECTURE.md#live-tokens); none: nothing is published. */
  live?: LiveHub;
  /** Prompts this process's workflow worker offered (ARCHITECTURE.md#prompt-offer); none: every prompt is read by query. */
  promptOffers?: PromptOffers;
  /** The endpoint's rate limiter (ARCHITECTURE.md#rate-limits); none: calls are never held back. */
  limiter?: EndpointLimiter;
  /** Shares the limiter's blocks with the other workers (ARCHITECTURE.md#rate-limits). */
  fleet?: FleetLimitSync;
}

/** The activity's retry policy, as far as the `api_retry` notice needs it. */
export interface RetryView {
  maxAttempts: number;
  initialIntervalMs: number;
  maximumIntervalMs: number;
}

export type ReasoningEffort = 'low' | 'medium' | 'high';

/** The parts of the request that differ between calls. */
interface ChatRequest {
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  reasoningEffort?: ReasoningEffort;
  /** A JSON schema the reply's text must follow (`response_format`, ARCHITECTURE.md#structured-output). */
  outputSchema?: Record<string, unknown>;
}

export interface ModelCall {
  /** Where the prompt is read: the session's run and the message range. */
  prompt: PromptRef;
  model: string;
  maxOutputTokens: number;
  /** Build the request from the prompt read. */
  request(prompt: Prompt): ChatRequest;
  /** Reject a finished but unusable reply by throwing an `ApplicationFailure`. */
  check?(reply: StreamedReply): void;
  /** For the `api_retry` notice; without it no notice is sent. */
  retry?: RetryView;
  /** Heartbeat details while reading the prompt, waiting for the first chunk, and streaming. */
  phases: { reading: string; waiting: string; streaming?: string };
  /** Names the call in its cancellation failure. */
  name: string;
  /** Publish the reply as it streams (ARCHITECTURE.md#live-tokens). */
  live?: boolean;
}

export interface StreamedReply {
  /** The provider's completion id ('' if it sent none). */
  id: string;
  text: string;
  /** By the provider's tool-call index (may have holes). */
  toolCalls: PartialToolCall[];
  finishReason: string;
  usage: Usage;
  costUsd: number;
  costBasis: 'table' | 'unknown';
  contextWindow: number;
  /** When the request was sent (epoch ms), and how long until the reply was complete. */
  startedAt: number;
  durationMs: number;
}

export async function streamModelCall(client: ChatStreamClient, deps: ModelDeps, call: ModelCall): Promise<StreamedReply> {
  const heartbeat = new DeferredHeartbeat();
  const spend = new AttemptSpend();
  try {
    return await attempt(client, deps, call, heartbeat.beat, spend);
  } catch (err) {
    heartbeat.flush();
    // Timed out by the server while it streamed: cut off now, and its cost reported (ARCHITECTURE.md#abandoned-attempts).
    if (spend.billed && abandonedByServer()) {
      const { usage, estimated } = spend.usage();
      const p = priced(deps, call.model, usage);
      await reportAbandoned(call.prompt, { model: call.model, ...p }, { outcome: 'cancelled', estimated });
    }
    throw err;
  } finally {
    heartbeat.dispose();
  }
}

async function attempt(
  client: ChatStreamClient,
  deps: ModelDeps,
  call: ModelCall,
  beat: Beat,
  spend: AttemptSpend,
): Promise<StreamedReply> {
  const ctx = Context.current();
  // Live tokens (ARCHITECTURE.md#live-tokens): the session's clients find the attempt's stream from
  // this worker's identity; its heartbeats name it too (clients that predate the identity's mark).
  const run = ctx.info.workflowExecution;
  const tap = call.live
    ? LiveTap.open(
        deps.live,
        call.model,
        run ? { runId: run.runId, activityId: ctx.info.activityId, attempt: ctx.info.attempt } : undefined,
      )
    : undefined;
  // Each names this process too: a retry elsewhere knows the session's sticky queue may be dead (sticky.ts).
  const details = (phase: string) => withWorkerProcess(tap?.details(phase) ?? { phase });
  // Beat while the prompt is read too: after a worker crash that query can wait on the server
  // for the session's workflow task, and a silent attempt would be timed out.
  const stop = keepAlive(details(call.phases.reading), deps.heartbeatEveryMs, beat);
  let prompt: Prompt;
  try {
    prompt = await readPrompt(call.prompt, deps.promptOffers);
  } catch (err) {
    tap?.fail(ctx.cancellationSignal.aborted);
    throw err;
  } finally {
    stop();
  }
  tap?.start(prompt.lastSeq);
  const request = call.request(prompt);
  let slot: Slot | undefined;
  try {
    slot = await waitForLimiter(deps, call, request, details(call.phases.waiting), beat);
    const reply = await stream(client, deps, call, request, tap, details, beat, slot, spend);
    slot?.release(reply.usage.input_tokens + reply.usage.cache_read_input_tokens + reply.usage.output_tokens);
    call.check?.(reply);
    tap?.complete(mapFinishReason(reply.finishReason, reply.toolCalls.length > 0), reply.usage);
    return reply;
  } catch (err) {
    slot?.release();
    tap?.fail(ctx.cancellationSignal.aborted);
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${call.name} cancelled`);
    const c = classifyModelError(err);
    learn(deps, c.status, (err as { headers?: Headers }).headers, slot);
    const retry = call.retry;
    if (c.retryable && retry && ctx.info.attempt < retry.maxAttempts) {
      await notifyRetry(call.prompt, {
        attempt: ctx.info.attempt,
        maxRetries: retry.maxAttempts - 1,
        retryDelayMs: expectedBackoffMs(ctx.info.attempt, retry.initialIntervalMs, retry.maximumIntervalMs, c.retryAfterMs),
        errorStatus: c.status,
        error: c.failure.message,
      });
    }
    throw c.failure;
  }
}

/**
 * Hold the call until the endpoint's limiter lets it start (ARCHITECTURE.md#rate-limits), telling
 * the session why it waits (`system/api_retry` with a `reason`). Returns the slot's release.
 */
async function waitForLimiter(
  deps: ModelDeps,
  call: ModelCall,
  request: ChatRequest,
  details: object,
  beat: Beat,
): Promise<Slot | undefined> {
  const limiter = deps.limiter;
  if (!limiter) return undefined;
  const ctx = Context.current();
  const estTokens = Math.ceil(JSON.stringify(request.messages).length / 4) + call.maxOutputTokens;
  const stop = keepAlive(details, deps.heartbeatEveryMs, beat);
  try {
    // The fleet's block and this worker's share, if not heard within a report interval (bounded).
    await deps.fleet?.fresh(ctx.client);
    return await limiter.acquire(estTokens, {
      signal: ctx.cancellationSignal,
      onWait: (w) => {
        if (!call.retry) return;
        void notifyRetry(call.prompt, {
          attempt: ctx.info.attempt,
          maxRetries: call.retry.maxAttempts - 1,
          retryDelayMs: w.delayMs,
          errorStatus: w.reason === 'rate_limited' ? 429 : null,
          error: `waiting: ${w.message}`,
          reason: w.reason,
        });
      },
    });
  } finally {
    stop();
  }
}

/** Learn from a response's status and headers (a block, a 429 against the learned limit); share a new block with the fleet. */
function learn(deps: ModelDeps, status: number | null, headers: Headers | undefined, slot: Slot | undefined): void {
  const block = deps.limiter?.observe(status, headers, Date.now(), slot?.startedAt);
  if (block) deps.fleet?.share(block);
}

async function stream(
  client: ChatStreamClient,
  deps: ModelDeps,
  call: ModelCall,
  request: ChatRequest,
  tap: LiveTap | undefined,
  details: (phase: string) => object,
  beat: Beat,
  slot: Slot | undefined,
  spend: AttemptSpend,
): Promise<StreamedReply> {
  const { waiting, streaming = waiting } = call.phases;
  const idleMs = deps.streamIdleTimeoutMs ?? 120_000;
  const watchdog = watchStream({ idleMs, maxEveryMs: deps.heartbeatEveryMs, phase: waiting, extra: details(waiting), beat });
  const streamingDetails = details(streaming);
  const startedAt = Date.now();
  try {
    spend.sent(request.messages, request.tools);
    const response = await client.stream(
      {
        model: call.model,
        messages: request.messages,
        ...(request.tools ? { tools: request.tools } : {}),
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: call.maxOutputTokens,
        ...(request.reasoningEffort ? { reasoning_effort: request.reasoningEffort } : {}),
        ...(request.outputSchema
          ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'structured_output', schema: request.outputSchema } } }
          : {}),
      },
      { signal: watchdog.signal },
    );
    learn(deps, response.status, response.headers, slot);
    slot?.served();
    let id = '';
    let text = '';
    let finish: string | null = null;
    const toolCalls: PartialToolCall[] = [];
    let usage: CompletionUsage | undefined;
    for await (const chunk of response.chunks) {
      watchdog.onChunk(streamingDetails);
      tap?.chunk(chunk, startedAt);
      spend.chunk(chunk);
      id ||= chunk.id;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta?.content) text += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        const slot = (toolCalls[tc.index] ??= { id: '', name: '', arguments: '' });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        if (tc.function?.arguments) slot.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (finish === null) throw new Error('the stream ended before a finish_reason (connection dropped mid-response)');
    return { id, text, toolCalls, finishReason: finish, ...priced(deps, call.model, usage), startedAt, durationMs: Date.now() - startedAt };
  } catch (err) {
    throw watchdog.stallError() ?? err;
  } finally {
    watchdog.dispose();
  }
}

/** OpenAI reports cached tokens inside `prompt_tokens`; we count them apart, as input and cache reads. */
function priced(deps: ModelDeps, model: string, usage: CompletionUsage | undefined) {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const u: Usage = {
    input_tokens: (usage?.prompt_tokens ?? 0) - cached,
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
  const price = lookupPrice(model, deps.pricing);
  const costUsd = costOf(tokenCounts(u), price);
  return {
    usage: u,
    costUsd,
    costBasis: price ? ('table' as const) : ('unknown' as const),
    contextWindow: price?.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
  };
}

async function notifyRetry(to: PromptRef, notice: ApiRetryNotice): Promise<void> {
  try {
    await Context.current().client.workflow.getHandle(to.sessionId, to.runId).signal(apiRetrySignal, notice);
  } catch {
    // Best effort: the retry happens whether or not the event is recorded.
  }
}
