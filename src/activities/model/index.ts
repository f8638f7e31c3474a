/**
 * The model activities: `callModel` (one assistant reply) and `summarize` (compaction), both
 * one streamed call through `streamModelCall`. Their inputs carry no messages; the prompt is
 * read from the workflow (ARCHITECTURE.md#transcript-by-reference).
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { CallModelInput, ModelActivities, ModelCatalogActivities, ModelListing } from '../../shared/activities';
import type { AssistantReply, ContentBlock } from '../../shared/messages';
import { classifyModelError } from './errors';
import { ChatStreamClient } from './chat-stream';
import { mapFinishReason, toChatMessages, toChatTools, toToolUseBlocks } from './chat-format';
import { streamModelCall, type ModelDeps, type ReasoningEffort } from './stream';
import { summarize } from './summarize';
import { completeAttempt } from './abandoned';
import { DEFAULT_CONTEXT_WINDOW, lookupPrice } from '../../shared/pricing';
import { checkStructuredOutput, outputSchemaProblem } from './output-schema';

export type { ModelDeps } from './stream';

export function createModelActivities(deps: ModelDeps): ModelActivities & ModelCatalogActivities {
  // Temporal owns retries (ARCHITECTURE.md#temporal-owns-retries): the client never retries on its own.
  // Each turn's streamed call goes through our own client (chat-stream.ts); the model list, rarely read, through `openai`'s.
  const chat = chatStreamClientFor(deps);
  const client = new OpenAI({
    baseURL: deps.baseURL,
    apiKey: deps.apiKey ?? 'not-set',
    organization: deps.organization,
    project: deps.project,
    maxRetries: 0,
    timeout: 10 * 60_000,
  });
  return {
    // Each attempt completes itself, so one the server gave up on sees it (ARCHITECTURE.md#abandoned-attempts).
    callModel: async (input) => {
      const reply = await callModel(chat, deps, input);
      return completeAttempt(input, reply, reply);
    },
    summarize: async (input) => {
      const r = await summarize(chat, deps, input);
      const contextWindow = lookupPrice(r.model, deps.pricing)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
      return completeAttempt(input, r, { ...r, contextWindow });
    },
    listModels: () => listModels(client),
  };
}

/** The endpoint as the `openai` client would find it: OPENAI_BASE_URL, OPENAI_ORG_ID and OPENAI_PROJECT_ID, given by the worker's settings. */
function chatStreamClientFor(deps: Pick<ModelDeps, 'baseURL' | 'apiKey' | 'organization' | 'project'>): ChatStreamClient {
  return new ChatStreamClient({
    baseURL: deps.baseURL,
    apiKey: deps.apiKey ?? 'not-set',
    organization: deps.organization,
    project: deps.project,
  });
}

/** The endpoint's `GET /v1/models`, for `Query.supportedModels()`. */
async function listModels(client: OpenAI): Promise<ModelListing[]> {
  try {
    const out: ModelListing[] = [];
    for await (const m of client.models.list()) out.push({ id: m.id, ...(m.owned_by ? { ownedBy: m.owned_by } : {}) });
    return out;
  } catch (e) {
    throw classifyModelError(e).failure;
  }
}

async function callModel(client: ChatStreamClient, deps: ModelDeps, input: CallModelInput): Promise<AssistantReply> {
  const schemaProblem = input.outputSchema && outputSchemaProblem(input.outputSchema);
  if (schemaProblem)
    throw ApplicationFailure.nonRetryable(`outputFormat.schema: not a usable JSON schema: ${schemaProblem}`, 'BadOutputSchema');
  const reasoningEffort = reasoningEffortFor(input.maxThinkingTokens);
  const r = await streamModelCall(client, deps, {
    prompt: input,
    model: input.model,
    maxOutputTokens: input.maxOutputTokens,
    request: (prompt) => {
      if (input.appendUserText) prompt.messages.push({ role: 'user', content: input.appendUserText });
      return {
        messages: toChatMessages(prompt.system, prompt.messages),
        ...(prompt.tools.length ? { tools: toChatTools(prompt.tools) } : {}),
        ...(reasoningEffort ? { reasoningEffort } : {}),
        ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
      };
    },
    retry: input,
    phases: { reading: 'reading prompt', waiting: 'waiting', streaming: 'streaming' },
    name: 'model call',
    live: true,
  });
  const content: ContentBlock[] = [];
  if (r.text) content.push({ type: 'text', text: r.text });
  content.push(...toToolUseBlocks(r.toolCalls.filter(Boolean)));
  // A final reply (no tool calls) is the structured output: checked here, so the workflow records the verdict.
  const final = input.outputSchema && !content.some((b) => b.type === 'tool_use');
  return {
    ...(final ? { structured: checkStructuredOutput(r.text, input.outputSchema!) } : {}),
    id: r.id || `msg_${r.startedAt}`,
    model: input.model,
    content,
    stop_reason: mapFinishReason(r.finishReason, r.toolCalls.length > 0),
    usage: r.usage,
    durationMs: r.durationMs,
    costUsd: r.costUsd,
    costBasis: r.costBasis,
    contextWindow: r.contextWindow,
  };
}

/**
 * `maxThinkingTokens` as OpenAI-compatible providers take it. They have no thinking budget in
 * tokens, only `reasoning_effort`; the bands follow the budgets people give Claude for light
 * (a few thousand tokens), moderate (up to ~16 K) and deep thinking. Unset or 0 sends nothing:
 * 0 asks for no extended thinking, and a model without reasoning rejects the field with a 400
 * that names it (`ModelBadRequest`), so it goes only where a session asked for thinking.
 */
export function reasoningEffortFor(maxThinkingTokens: number | null | undefined): ReasoningEffort | undefined {
  if (!maxThinkingTokens || maxThinkingTokens <= 0) return undefined;
  if (maxThinkingTokens <= 4_096) return 'low';
  if (maxThinkingTokens <= 16_384) return 'medium';
  return 'high';
}
