/**
 * The transcript's shapes: Anthropic-style content blocks, kept as plain JSON so they survive
 * Temporal's payload converter and continue-as-new unchanged. Converted to chat-completions
 * format only at the model activity.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';

export const TextBlock = sharedSchema('messages.TextBlock', () => z.object({ type: z.literal('text'), text: z.string() }));
export type TextBlock = z.infer<typeof TextBlock>;

const ThinkingBlock = sharedSchema('messages.ThinkingBlock', () => z.object({ type: z.literal('thinking'), thinking: z.string() }));
type ThinkingBlock = z.infer<typeof ThinkingBlock>;

export const ToolUseBlock = sharedSchema('messages.ToolUseBlock', () =>
  z.object({
    type: z.literal('tool_use'),
    id: z.string(),
    name: z.string(),
    input: z.unknown(),
    /** Set when the model's arguments were not valid JSON: the raw text is kept. */
    raw_input: z.string().optional(),
  }),
);
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;

export const ToolResultBlock = sharedSchema('messages.ToolResultBlock', () =>
  z.object({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.string(),
    is_error: z.boolean().optional(),
  }),
);
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

export const ContentBlock = sharedSchema('messages.ContentBlock', () =>
  z.discriminatedUnion('type', [TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock]),
);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const Message = sharedSchema('messages.Message', () =>
  z.object({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), z.array(ContentBlock)]),
  }),
);
export type Message = z.infer<typeof Message>;

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

/** Per-model totals as the workflow keeps them; the result reports them as the SDK's `ModelUsage` (sdk-shapes.ts). */
export interface ModelUsageEntry {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUSD: number;
  contextWindow: number;
  costBasis: 'table' | 'unknown';
  /** Set once an attempt of a call to this model was abandoned; not counted in the fields above. */
  abandonedCalls?: AbandonedCalls;
}

/**
 * Model call attempts the server gave up on while they still ran (ARCHITECTURE.md#abandoned-attempts):
 * billed by the provider but not part of the conversation, so counted apart from the model's
 * tokens and cost. Their cost is in the session's `total_cost_usd` (and its budget).
 */
export interface AbandonedCalls {
  count: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  costUSD: number;
  /** How many of them were cut off before the provider sent usage: their tokens are estimates. */
  estimated: number;
}

/** One model response as the `callModel` activity returns it (recorded in history once). */
export interface AssistantReply {
  id: string;
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason;
  usage: Usage;
  /** Wall time of the API call, for `duration_api_ms`. */
  durationMs: number;
  /** Priced on the worker with its pricing table; `unknown` when the model is not in it. */
  costUsd: number;
  costBasis: 'table' | 'unknown';
  contextWindow: number;
  /**
   * With an output schema and no tool calls: the reply's text parsed and checked against it
   * (`value`), or why it does not match (`error`).
   */
  structured?: { value: unknown } | { error: string };
}

export function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

export function toolUsesOf(content: Message['content']): ToolUseBlock[] {
  return typeof content === 'string' ? [] : content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}
