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

/**
 * The one list of token-usage fields: each count's snake_case name (the Messages API's, our
 * replies' `usage`, the SDK's `usage`) with its camelCase one (the SDK's `ModelUsage`, our `usage`
 * query). Two spellings because the Claude Agent SDK's wire shapes use both; every usage shape
 * (`Usage`, `TokenCounts`, `SDKUsage`, `SDKModelUsage`, `SessionUsage`, `StreamUsage`,
 * `AbandonedCalls`) is derived from this list, so a new count is added here once.
 */
const USAGE_FIELDS = {
  input_tokens: 'inputTokens',
  output_tokens: 'outputTokens',
  cache_read_input_tokens: 'cacheReadInputTokens',
  cache_creation_input_tokens: 'cacheCreationInputTokens',
} as const;
type UsageField = keyof typeof USAGE_FIELDS;

/** A model call's token counts, snake_case; `input_tokens` excludes cached tokens (they are counted apart). */
export type Usage = { [K in UsageField]: number };

/** The same counts in camelCase, as the SDK's `ModelUsage` and our `usage` query spell them. */
export type TokenCounts = { [K in UsageField as (typeof USAGE_FIELDS)[K]]: number };

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

/** `u` in camelCase (same order of fields). */
export function tokenCounts(u: Usage): TokenCounts {
  const out = {} as TokenCounts;
  for (const [snake, camel] of Object.entries(USAGE_FIELDS) as [UsageField, (typeof USAGE_FIELDS)[UsageField]][]) out[camel] = u[snake];
  return out;
}

type Counts<T> = { readonly [K in keyof T]?: number | null };

/**
 * Add `add`'s token counts to `into`'s, in place, field by field (both snake_case or both camelCase);
 * a missing or null count adds 0 (a child's result may lack the cache counts). Other fields of
 * `into` (cost, say) are left alone.
 */
export function addUsage(into: Usage, add: Counts<Usage>): void;
export function addUsage(into: TokenCounts, add: Counts<TokenCounts>): void;
export function addUsage(into: Usage | TokenCounts, add: Counts<Usage> | Counts<TokenCounts>): void {
  const names: readonly string[] = 'input_tokens' in into ? Object.keys(USAGE_FIELDS) : Object.values(USAGE_FIELDS);
  const sums = into as unknown as Record<string, number>;
  const adds = add as Record<string, number | null | undefined>;
  for (const k of names) sums[k] = sums[k]! + (adds[k] ?? 0);
}

/** Per-model totals as the workflow keeps them; the result reports them as the SDK's `ModelUsage` (sdk-shapes.ts). */
export interface ModelUsageEntry extends TokenCounts {
  costUSD: number;
  contextWindow: number;
  costBasis: 'table' | 'unknown';
  /** Set once an attempt of a call to this model was abandoned; not counted in the fields above. */
  abandonedCalls?: AbandonedCalls;
}

/**
 * Model call attempts the server gave up on while they still ran (ARCHITECTURE.md#abandoned-attempts):
 * billed by the provider but not part of the conversation, so counted apart from the model's
 * tokens and cost. Their cost is in the session's `total_cost_usd` (and its budget). Their tokens are
 * `TokenCounts` but cache writes, which are not counted for them.
 */
export interface AbandonedCalls extends Omit<TokenCounts, 'cacheCreationInputTokens'> {
  count: number;
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
