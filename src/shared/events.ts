/**
 * The session's message stream: SDK-compatible messages (Claude Agent SDK `SDKMessage`), plain
 * JSON, one discriminated union. Kept in the workflow's memory and read by clients through the
 * `events` query (DESIGN D6) — never written to history.
 */
import type { ContentBlock, StopReason, Usage } from './messages';
import type { PermissionMode } from './config';

interface Base {
  uuid: string;
  session_id: string;
  /** Position in the session's stream; continues across continue-as-new. */
  seq: number;
}

export interface SystemInitMessage extends Base {
  type: 'system';
  subtype: 'init';
  cwd: string;
  tools: string[];
  model: string;
  permissionMode: PermissionMode;
  mcp_servers: { name: string; status: string }[];
}

export interface AssistantMessage extends Base {
  type: 'assistant';
  message: {
    id: string;
    type: 'message';
    role: 'assistant';
    model: string;
    content: ContentBlock[];
    stop_reason: StopReason;
    usage: Usage;
  };
  parent_tool_use_id: string | null;
}

export interface UserMessage extends Base {
  type: 'user';
  message: { role: 'user'; content: ContentBlock[] | string };
  parent_tool_use_id: string | null;
  tool_use_result?: unknown;
}

export interface ToolProgressMessage extends Base {
  type: 'tool_progress';
  tool_use_id: string;
  tool_name: string;
  elapsed_time_seconds: number;
  parent_tool_use_id: string | null;
  /** Ours: whether the tool is starting or has finished (the SDK leaves this implicit). */
  status: 'started' | 'completed';
}

export interface ApiRetryMessage extends Base {
  type: 'system';
  subtype: 'api_retry';
  attempt: number;
  max_retries: number;
  retry_delay_ms: number;
  error_status: number | null;
  error: string;
}

export interface PermissionDeniedMessage extends Base {
  type: 'system';
  subtype: 'permission_denied';
  tool_name: string;
  tool_use_id: string;
  message: string;
}

export interface ModelChangedMessage extends Base {
  type: 'system';
  subtype: 'model_changed';
  model: string;
  previous_model: string;
  reason: 'set_model' | 'fallback';
}

export interface CompactBoundaryMessage extends Base {
  type: 'system';
  subtype: 'compact_boundary';
  compact_metadata: { trigger: 'manual' | 'auto'; pre_tokens: number };
  /** Ours: how many messages the summary replaced, and how many were kept verbatim. */
  summarized_messages: number;
  kept_messages: number;
}

export interface LoopDetectedMessage extends Base {
  type: 'system';
  subtype: 'loop_detected';
  message: string;
  count: number;
}

export interface WarningMessage extends Base {
  type: 'system';
  subtype: 'warning';
  message: string;
}

export interface ModelUsageEntry {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUSD: number;
  contextWindow: number;
  costBasis: 'table' | 'unknown';
}

export type ResultSubtype = 'success' | 'error_max_turns' | 'error_max_budget_usd' | 'error_during_execution';

export interface ResultMessage extends Base {
  type: 'result';
  subtype: ResultSubtype;
  is_error: boolean;
  num_turns: number;
  duration_ms: number;
  duration_api_ms: number;
  total_cost_usd: number;
  usage: Usage;
  modelUsage: Record<string, ModelUsageEntry>;
  permission_denials: { tool_name: string; tool_use_id: string; tool_input: unknown }[];
  result?: string;
  errors?: string[];
  stop_reason: StopReason | null;
  /** Ours: the loop's exit reason (seed 002), finer than `subtype`. */
  exit_reason: string;
}

export type SDKMessage =
  | SystemInitMessage
  | AssistantMessage
  | UserMessage
  | ToolProgressMessage
  | ApiRetryMessage
  | PermissionDeniedMessage
  | ModelChangedMessage
  | CompactBoundaryMessage
  | LoopDetectedMessage
  | WarningMessage
  | ResultMessage;

/** An SDK message before the log stamps it. */
export type NewEvent = SDKMessage extends infer M ? (M extends SDKMessage ? Omit<M, 'uuid' | 'session_id' | 'seq'> : never) : never;

export interface EventsPage {
  events: SDKMessage[];
  /** Pass as `after` to get the next page. */
  nextSeq: number;
  /** True once the session has ended and every event has been returned. */
  done: boolean;
}
