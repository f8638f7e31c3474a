/**
 * The session's message stream: plain JSON, one discriminated union, kept in the workflow's memory
 * and read by clients through the `events` query (ARCHITECTURE.md#events-are-a-query) — never
 * written to history.
 *
 * Two families share the stream, and `query()` yields both (`QueryMessage`). `SDKMessage` is the
 * Claude Agent SDK's message union, every `type` and `subtype` of it: the members we send
 * (`SentSDKMessage`, declared here) and those we never send (`NeverSentSDKMessage`, sdk-messages.ts,
 * there so that SDK code narrowing on them compiles). Each member is assignable to the SDK's own
 * type (test/types/sdk-conformance.ts checks it against the SDK's `.d.ts`). `DurableAgentEvent`
 * holds what only a durable session has (approval requests, model switches, loop warnings, …):
 * their subtypes are none of the SDK's, so narrowing on `type`/`subtype` tells the two apart, as
 * does `isDurableAgentEvent`. The SDK's `stream_event` is sent but never in the log
 * (ARCHITECTURE.md#live-tokens).
 */
import type { StopReason } from './messages';
import type { StreamEvent } from './stream-events';
import type { PermissionMode } from './config';
import type { ApiErrorCategory, SDKApiMessage, SDKModelUsage, SDKUsage, SDKUserContentBlock, UUID } from './sdk-shapes';
import type { NeverSentSDKMessage } from './sdk-messages';
import type { Verdict, VerifyReport, WorkspaceReport } from './workspace';
import type { HookEvent } from './permissions/settings';
import type { HookInput } from './hook-callbacks';

export type { UUID } from './sdk-shapes';
export type { ModelUsageEntry } from './messages';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Check that `s` is a UUID (the workflow's `uuid4()` always is) and type it as one. */
export function toUuid(s: string): UUID {
  if (!UUID_SHAPE.test(s)) throw new Error(`not a UUID: ${JSON.stringify(s)}`);
  return s as UUID;
}

interface Base {
  uuid: UUID;
  session_id: string;
  /** Ours: position in the session's stream; continues across continue-as-new. */
  seq: number;
}

/** `system/init`, with every field the SDK requires; the Claude Code–only ones are empty. */
export interface SDKSystemMessage extends Base {
  type: 'system';
  subtype: 'init';
  cwd: string;
  tools: string[];
  model: string;
  permissionMode: PermissionMode;
  /** `error`: why a `failed` server could not be used (ours). */
  mcp_servers: { name: string; status: string; error?: string }[];
  /** The worker holds the model endpoint's key (ARCHITECTURE.md#secrets-stay-on-workers): none reaches the session. */
  apiKeySource: 'none';
  /** The SDK's name for the agent runtime's version: here, durable-agent's. */
  claude_code_version: string;
  slash_commands: string[];
  output_style: string;
  skills: string[];
  plugins: { name: string; path: string }[];
}

export interface SDKAssistantMessage extends Base {
  type: 'assistant';
  /** The Anthropic Messages API shape (the SDK's `BetaMessage`). */
  message: SDKApiMessage;
  parent_tool_use_id: string | null;
}

/** A user message in the stream (tool results, follow-ups); assignable to the SDK's `SDKUserMessage`. */
export interface UserMessage extends Base {
  type: 'user';
  message: { role: 'user'; content: string | SDKUserContentBlock[] };
  parent_tool_use_id: string | null;
  tool_use_result?: unknown;
}

export interface SDKToolProgressMessage extends Base {
  type: 'tool_progress';
  tool_use_id: string;
  tool_name: string;
  elapsed_time_seconds: number;
  parent_tool_use_id: string | null;
  /** Ours: whether the tool is starting or has finished (the SDK leaves this implicit). */
  status: 'started' | 'completed';
}

export interface SDKAPIRetryMessage extends Base {
  type: 'system';
  subtype: 'api_retry';
  attempt: number;
  max_retries: number;
  retry_delay_ms: number;
  error_status: number | null;
  error: ApiErrorCategory;
  /** Ours: the failure as the provider described it. */
  error_message: string;
  /** Ours: set when the call is waiting on the endpoint's rate limiter, not retrying a failure. */
  reason?: 'rate_limited' | 'max_concurrent' | 'requests_per_minute' | 'tokens_per_minute';
}

export interface SDKPermissionDeniedMessage extends Base {
  type: 'system';
  subtype: 'permission_denied';
  tool_name: string;
  tool_use_id: string;
  message: string;
}

export interface SDKCompactBoundaryMessage extends Base {
  type: 'system';
  subtype: 'compact_boundary';
  compact_metadata: { trigger: 'manual' | 'auto'; pre_tokens: number };
  /** Ours: how many messages the summary replaced, and how many were kept verbatim. */
  summarized_messages: number;
  kept_messages: number;
}

/** A hook ran. `stdout` holds only its decision fields, never raw output. */
export interface SDKHookResponseMessage extends Base {
  type: 'system';
  subtype: 'hook_response';
  hook_id: string;
  hook_name: string;
  hook_event: string;
  /** The SDK's outcome: a blocking hook (exit 2) and one that timed out are errors; `hook_outcome` says which. */
  outcome: 'success' | 'error' | 'cancelled';
  /** Ours: success, blocked (exit 2), error (non-blocking), timeout. */
  hook_outcome: 'success' | 'blocked' | 'error' | 'timeout';
  exit_code?: number;
  /** `stdout` and `stderr` together, as the SDK reports a hook's output. */
  output: string;
  stdout: string;
  stderr: string;
}

interface SDKPermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

interface ResultBase extends Base {
  type: 'result';
  is_error: boolean;
  num_turns: number;
  duration_ms: number;
  duration_api_ms: number;
  /** Cumulative over the session. */
  total_cost_usd: number;
  usage: SDKUsage;
  modelUsage: Record<string, SDKModelUsage>;
  permission_denials: SDKPermissionDenial[];
  stop_reason: StopReason | null;
  /** Ours: the loop's exit reason, finer than `subtype`. */
  exit_reason: string;
  /** Ours, sessions with a `workspace`: where it is and what the agent changed (ARCHITECTURE.md#workspaces). */
  workspace?: WorkspaceReport;
  /** Ours, sessions with a `verify` command: its outcome; null when it did not run. */
  verdict?: Verdict | null;
  verify?: VerifyReport;
}

export interface SDKResultSuccess extends ResultBase {
  subtype: 'success';
  result: string;
  errors?: never;
  /** With `outputFormat`: the final reply parsed as JSON, checked against the schema on the model worker. */
  structured_output?: unknown;
}

export interface SDKResultError extends ResultBase {
  /** `error_max_structured_output_retries`: with `outputFormat`, the final reply never matched the schema. */
  subtype: 'error_max_turns' | 'error_max_budget_usd' | 'error_during_execution' | 'error_max_structured_output_retries';
  errors: string[];
  /** Ours: the last assistant text, when the turn produced one before it failed. */
  result?: string;
}

export type SDKResultMessage = SDKResultSuccess | SDKResultError;
export type ResultSubtype = SDKResultMessage['subtype'];

/** The messages of the event log that have a counterpart in the Claude Agent SDK. */
export type SDKLoggedMessage =
  | SDKSystemMessage
  | SDKAssistantMessage
  | UserMessage
  | SDKToolProgressMessage
  | SDKAPIRetryMessage
  | SDKPermissionDeniedMessage
  | SDKCompactBoundaryMessage
  | SDKHookResponseMessage
  | SDKResultMessage;

/**
 * The SDK's `stream_event`: one Anthropic stream event of a model call in progress, yielded with
 * `includePartialMessages`. Never in the event log: read from the worker that runs the call
 * (ARCHITECTURE.md#live-tokens). Each attempt of a call streams from its own `message_start`; one
 * that comes before the previous message's `message_stop` (no assistant, user or result message
 * between them) announces a retried call, whose text replaces the partial text.
 */
export interface SDKPartialAssistantMessage {
  type: 'stream_event';
  event: StreamEvent;
  parent_tool_use_id: string | null;
  uuid: UUID;
  session_id: string;
}

/** The members of the SDK's `SDKMessage` that a durable session sends. */
export type SentSDKMessage = SDKLoggedMessage | SDKPartialAssistantMessage;

/**
 * The Claude Agent SDK's `SDKMessage`: every `type` and `subtype` it declares. Those we never
 * send (sdk-messages.ts) are here so that code written for the SDK, which tests for them,
 * compiles; each says why it never arrives.
 */
export type SDKMessage = SentSDKMessage | NeverSentSDKMessage;

/** A tool call waits for a person (answer with `respondToPermission`). */
export interface PermissionRequestMessage extends Base {
  type: 'system';
  subtype: 'permission_request';
  request_id: string;
  tool_name: string;
  tool_use_id: string;
  tool_input: unknown;
  message: string;
  suggestions: string[];
}

/** A pending request was answered (or timed out, or its turn was interrupted). */
export interface PermissionResolvedMessage extends Base {
  type: 'system';
  subtype: 'permission_resolved';
  request_id: string;
  tool_use_id: string;
  behavior: 'allow' | 'deny' | 'timeout' | 'cancelled';
  rules_added: string[];
}

/**
 * A callback hook waits for the client that declared it (`clientHooks`; ARCHITECTURE.md#callback-hooks):
 * call the matcher's callbacks with `hook_input` and `tool_use_id`, and answer with `respondToHook`
 * on the session `request_session_id` — the session's own id, or a subagent's whose events joined
 * this stream. Each callback's outcome then shows as a `hook_response`.
 */
export interface HookRequestMessage extends Base {
  type: 'system';
  subtype: 'hook_request';
  request_id: string;
  /** The session that holds the request and takes the answer. */
  request_session_id: string;
  hook_event: HookEvent;
  /** Which of the event's matchers that have callbacks (counted in `options.hooks[event]` order, command-only matchers skipped). */
  matcher_index: number;
  /** The SDK's hook input for the event: the callbacks' first argument. */
  hook_input: HookInput;
  /** The callbacks' second argument: the tool call's id for tool events. */
  tool_use_id?: string;
  /** How long the session waits for the answer; then the hook counts as failed (a PreToolUse call is denied). */
  timeout_ms: number;
}

/**
 * A call of a tool of an in-process MCP server (`clientTools`; ARCHITECTURE.md#client-mcp-tools)
 * waits for the client that serves it: call `tool` on the server named `server` with `tool_input`,
 * and answer with `respondToTool` on the session `request_session_id`. No answer within
 * `timeout_ms` makes the call an error result.
 */
export interface ToolRequestMessage extends Base {
  type: 'system';
  subtype: 'tool_request';
  request_id: string;
  /** The session that holds the request and takes the answer. */
  request_session_id: string;
  /** The in-process server (its key in `mcpServers`) and its own name for the tool. */
  server: string;
  tool: string;
  /** The name the model called: `mcp__<server>__<tool>`. */
  tool_name: string;
  tool_use_id: string;
  tool_input: unknown;
  /** How long the session waits for the answer; then the call is an error result. */
  timeout_ms: number;
}

/** The session's model changed: `setModel()` (`set_model`), or the primary's retries ran out and `fallbackModel` took over (`fallback`). */
export interface ModelChangedMessage extends Base {
  type: 'system';
  subtype: 'model_changed';
  model: string;
  previous_model: string;
  reason: 'set_model' | 'fallback';
}

/** The model repeated the same tool calls `count` times; `message`, the warning it is given with its next call. */
export interface LoopDetectedMessage extends Base {
  type: 'system';
  subtype: 'loop_detected';
  message: string;
  count: number;
}

/** Something the session's reader should know and that did not stop it (an unpriced model, an ignored setting, …). */
export interface WarningMessage extends Base {
  type: 'system';
  subtype: 'warning';
  message: string;
}

/** The session's tools host was lost and its folder restored on another from a checkpoint. */
export interface WorkspaceRestoredMessage extends Base {
  type: 'system';
  subtype: 'workspace_restored';
  lost_host: string;
  host: string;
  path: string;
  /** The checkpoint restored: its turn and commit. */
  turn: number;
  commit: string;
  message: string;
}

/**
 * Messages only a durable session sends; the SDK has no type for them, and none of their subtypes
 * is one of the SDK's. `query()` yields them among the SDK's messages (`QueryMessage`).
 */
export type DurableAgentEvent =
  | PermissionRequestMessage
  | PermissionResolvedMessage
  | HookRequestMessage
  | ToolRequestMessage
  | ModelChangedMessage
  | LoopDetectedMessage
  | WarningMessage
  | WorkspaceRestoredMessage;

/** What the event log holds and the `events` query returns. */
export type SessionEvent = SDKLoggedMessage | DurableAgentEvent;

/**
 * What `query()` yields: the SDK's messages and our own events. Narrow on `type` and `subtype`
 * (`m.type === 'system' && m.subtype === 'permission_request'`) or with `isDurableAgentEvent(m)`,
 * whose `false` branch is an `SDKMessage`.
 */
export type QueryMessage = SDKMessage | DurableAgentEvent;

const DURABLE_AGENT_SUBTYPES: ReadonlySet<string> = new Set<DurableAgentEvent['subtype']>([
  'permission_request',
  'permission_resolved',
  'hook_request',
  'tool_request',
  'model_changed',
  'loop_detected',
  'warning',
  'workspace_restored',
]);

/**
 * True for a message that only a durable session sends. `query()` yields these among the SDK's
 * messages; where a value must be an SDK message (an `SDKMessage[]`, a function typed with the
 * SDK's types), this guard's `false` branch is one.
 */
export function isDurableAgentEvent(m: unknown): m is DurableAgentEvent {
  const e = m as { type?: unknown; subtype?: unknown } | null;
  return (
    typeof e === 'object' && e !== null && e.type === 'system' && typeof e.subtype === 'string' && DURABLE_AGENT_SUBTYPES.has(e.subtype)
  );
}

/**
 * The message as one of our own events, or undefined. For values typed as the SDK's `SDKMessage`,
 * where a type guard to a type outside that union cannot narrow:
 * `const ours = asDurableAgentEvent(m); if (ours?.subtype === 'permission_request') …`.
 */
export function asDurableAgentEvent(m: unknown): DurableAgentEvent | undefined {
  return isDurableAgentEvent(m) ? m : undefined;
}

/** Internal names kept for the code that predates the SDK names. */
export type ResultMessage = SDKResultMessage;
export type AssistantMessage = SDKAssistantMessage;
export type ApiRetryMessage = SDKAPIRetryMessage;
export type HookResponseMessage = SDKHookResponseMessage;

/** A message before the log stamps it. */
export type NewEvent = SessionEvent extends infer M ? (M extends SessionEvent ? Omit<M, 'uuid' | 'session_id' | 'seq'> : never) : never;

export interface EventsPage {
  events: SessionEvent[];
  /** Pass as `after` to get the next page. */
  nextSeq: number;
  /** True once the session has ended and every event has been returned. */
  done: boolean;
}
