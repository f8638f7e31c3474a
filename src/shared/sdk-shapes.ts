/**
 * Our transcript's shapes dressed as the Anthropic Messages API's, for the SDK-typed stream
 * (`events.ts`). Pure: the workflow calls these where it emits a message. Fields the Anthropic API
 * fills and an OpenAI-compatible endpoint has no notion of get their empty value (null, [], 0, ''),
 * never a made-up one.
 */
import type {
  AbandonedCalls,
  AssistantReply,
  ContentBlock,
  ModelUsageEntry,
  StopReason,
  TextBlock,
  TokenCounts,
  ToolResultBlock,
  Usage,
} from './messages';

/** The SDK's `UUID` (node:crypto's template type); the event log stamps every message with one. */
export type UUID = `${string}-${string}-${string}-${string}-${string}`;

/** The categories of a failed model call we tell apart (of the SDK's `SDKAssistantMessageError`). */
export type ApiErrorCategory =
  | 'authentication_failed'
  | 'billing_error'
  | 'rate_limit'
  | 'overloaded'
  | 'invalid_request'
  | 'model_not_found'
  | 'server_error'
  | 'unknown'
  | 'max_output_tokens';

/** The SDK's full list; the ones besides ours name account and credential states we never see. */
export type SDKAssistantMessageError =
  ApiErrorCategory | 'oauth_org_not_allowed' | 'account_on_hold' | 'verification_required' | 'cloud_credential_error';

/** `BetaTextBlock` / `BetaThinkingBlock` / `BetaToolUseBlock`. */
type SDKAssistantContentBlock =
  | { type: 'text'; text: string; citations: null }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; raw_input?: string };

/** The Anthropic Messages API's `BetaMessage`, as far as an OpenAI-compatible reply fills it. */
export interface SDKApiMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: SDKAssistantContentBlock[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: SDKUsage;
  container: null;
  context_management: null;
  diagnostics: null;
  stop_details: null;
}

/** `TextBlockParam` / `ToolResultBlockParam`: what a user message carries. */
export type SDKUserContentBlock = TextBlock | ToolResultBlock;

/**
 * `BetaUsage` with every field present and non-null, so it is also the result's `NonNullableUsage`.
 * Our providers report neither cache-TTL splits nor reasoning tokens nor server tools: those are 0.
 */
export interface SDKUsage extends Usage {
  cache_creation: { ephemeral_1h_input_tokens: number; ephemeral_5m_input_tokens: number };
  server_tool_use: { web_fetch_requests: number; web_search_requests: number };
  output_tokens_details: { thinking_tokens: number };
  iterations: [];
  inference_geo: string;
  service_tier: 'standard';
  speed: 'standard';
  fallback_credit: null;
}

/** The SDK's `ModelUsage` (the result's `modelUsage` entries): camelCase, where `usage` is snake_case. */
export interface SDKModelUsage extends TokenCounts {
  webSearchRequests: number;
  costUSD: number;
  contextWindow: number;
  maxOutputTokens: number;
  /** `list`: priced from the worker's pricing table; `unknown`: not in it (counted as $0). */
  costBasis: 'list' | 'unknown';
  /** Ours: attempts abandoned while they ran, billed apart from the fields above (only when there were any). */
  abandonedCalls?: AbandonedCalls;
}

export function sdkUsage(u: Usage): SDKUsage {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    server_tool_use: { web_fetch_requests: 0, web_search_requests: 0 },
    output_tokens_details: { thinking_tokens: 0 },
    iterations: [],
    inference_geo: '',
    service_tier: 'standard',
    speed: 'standard',
    fallback_credit: null,
  };
}

/** The `message` of an `assistant` event: a reply as the Anthropic Messages API's `BetaMessage`. */
export function sdkApiMessage(
  reply: Pick<AssistantReply, 'id' | 'model' | 'stop_reason' | 'usage'>,
  content: ContentBlock[],
): SDKApiMessage {
  return {
    id: reply.id,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: sdkAssistantContent(content),
    stop_reason: reply.stop_reason,
    stop_sequence: null,
    usage: sdkUsage(reply.usage),
    container: null,
    context_management: null,
    diagnostics: null,
    stop_details: null,
  };
}

/** An assistant message's blocks; a `tool_result` never occurs there and is dropped. */
function sdkAssistantContent(blocks: ContentBlock[]): SDKAssistantContentBlock[] {
  return blocks.flatMap((b): SDKAssistantContentBlock[] => {
    switch (b.type) {
      case 'text':
        return [{ type: 'text', text: b.text, citations: null }];
      // OpenAI-compatible reasoning text carries no signature.
      case 'thinking':
        return [{ type: 'thinking', thinking: b.thinking, signature: '' }];
      case 'tool_use':
        return [b];
      default:
        return [];
    }
  });
}

export function sdkModelUsage(perModel: Record<string, ModelUsageEntry>, maxOutputTokens: number): Record<string, SDKModelUsage> {
  const out: Record<string, SDKModelUsage> = {};
  for (const [model, m] of Object.entries(perModel)) {
    out[model] = {
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cacheReadInputTokens: m.cacheReadInputTokens,
      cacheCreationInputTokens: m.cacheCreationInputTokens,
      webSearchRequests: 0,
      costUSD: m.costUSD,
      contextWindow: m.contextWindow,
      maxOutputTokens,
      costBasis: m.costBasis === 'table' ? 'list' : 'unknown',
      ...(m.abandonedCalls ? { abandonedCalls: { ...m.abandonedCalls } } : {}),
    };
  }
  return out;
}

/** A denied call's input as the SDK types it (validated tool input is always an object). */
export function sdkToolInput(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The SDK's category for a failed model call, from its HTTP status (null: no response). */
export function apiErrorCategory(status: number | null): ApiErrorCategory {
  if (status === null) return 'server_error';
  if (status === 401 || status === 403) return 'authentication_failed';
  if (status === 402) return 'billing_error';
  if (status === 404) return 'model_not_found';
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'invalid_request';
  return 'unknown';
}
