/**
 * The members of the Claude Agent SDK's `SDKMessage` union that durable-agent never sends, declared
 * field for field as the SDK declares them (@anthropic-ai/claude-agent-sdk 0.3.330 and 0.3.332), so
 * that the union `query()` yields (events.ts) has every `type` and `subtype` the SDK's has: SDK
 * code that tests `m.type === 'rate_limit_event'` or `m.subtype === 'status'` and reads the fields
 * of what it finds compiles unchanged, and that branch simply never runs here.
 *
 * Each one says why no durable session sends it. test/types/sdk-conformance.ts checks, against the
 * SDK's own `.d.ts`, that each is assignable to the SDK's type of the same name and has all of its
 * keys, and that together with the messages we do send they cover the SDK's `type`/`subtype` pairs.
 * Nothing here exists at run time.
 */
import type { SDKUserContentBlock, UUID } from './sdk-shapes';

/** Every SDK message carries these. */
interface NeverSent {
  uuid: UUID;
  session_id: string;
}

/** The SDK's `PermissionMode`, `auto` included (a mode durable-agent refuses: there is no classifier). */
type AnySDKPermissionMode = 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan' | 'dontAsk' | 'auto';

/** The SDK's `SDKMessageOrigin`: who a user-role message came from (a peer session, a channel, …). */
export type SDKMessageOrigin =
  | { kind: 'human' }
  | { kind: 'channel'; server: string }
  | {
      kind: 'peer';
      from: string;
      fromMode?: 'bypass' | 'prompting';
      name?: string;
      fromSession?: string;
      senderTaskId?: string;
      body?: string;
      verifiedPeerPid?: number;
    }
  | {
      kind: 'task-notification';
      subkind?: 'scheduled-trigger' | 'peer-send-message' | 'projects-relay' | 'session-inbox' | 'external-event';
      fireReason?: string;
      runId?: string;
    }
  | { kind: 'coordinator' }
  | { kind: 'unclassified' }
  | { kind: 'observer'; from: string; senderTaskId: string }
  | { kind: 'auto-continuation' }
  | { kind: 'observer-activity' };

/**
 * Never sent: Claude Code echoes the user messages of a resumed conversation back (`isReplay`);
 * a resumed durable session is the same workflow's stream, read from where the reader asks.
 */
export interface SDKUserMessageReplay extends NeverSent {
  type: 'user';
  message: { role: 'user'; content: string | SDKUserContentBlock[] };
  parent_tool_use_id: string | null;
  isSynthetic?: boolean;
  tool_use_result?: unknown;
  priority?: 'now' | 'next' | 'later';
  origin?: SDKMessageOrigin;
  shouldQuery?: boolean;
  timestamp?: string;
  client_composed?: true;
  isReplay: true;
  file_attachments?: unknown[];
}

/** Never sent: compaction is reported by `system/compact_boundary`, and a model call by its `stream_event`s. */
export interface SDKStatusMessage extends NeverSent {
  type: 'system';
  subtype: 'status';
  status: 'compacting' | 'requesting' | null;
  permissionMode?: AnySDKPermissionMode;
  compact_result?: 'success' | 'failed';
  compact_error?: string;
}

/** Never sent: control methods are Temporal signals and updates, answered by the workflow itself. */
export interface SDKControlRequestProgressMessage extends NeverSent {
  type: 'system';
  subtype: 'control_request_progress';
  request_id: string;
  status: 'started' | 'api_retry';
  attempt?: number;
  max_retries?: number;
  retry_delay_ms?: number;
  error_status?: number | null;
}

/** Never sent: a model refusal is not retried on another model; a switch to `fallbackModel` is our `model_changed`. */
export interface SDKModelRefusalFallbackMessage extends NeverSent {
  type: 'system';
  subtype: 'model_refusal_fallback';
  trigger: 'refusal';
  direction: 'retry' | 'revert' | 'sticky';
  scope?: 'session' | 'local';
  original_model: string;
  fallback_model: string;
  request_id: string | null;
  api_refusal_category?: string | null;
  api_refusal_explanation?: string | null;
  retracted_message_uuids?: string[];
  refused_user_message_uuid?: string | null;
  content: string;
}

/** Never sent: a model refusal is an ordinary assistant message here (see `SDKModelRefusalFallbackMessage`). */
export interface SDKModelRefusalNoFallbackMessage extends NeverSent {
  type: 'system';
  subtype: 'model_refusal_no_fallback';
  original_model: string;
  request_id: string | null;
  api_refusal_category?: string | null;
  api_refusal_explanation?: string | null;
  refused_user_message_uuid?: string | null;
  content: string;
}

/** Never sent: there are no local slash commands (prompts are always sent verbatim). */
export interface SDKLocalCommandOutputMessage extends NeverSent {
  type: 'system';
  subtype: 'local_command_output';
  content: string;
}

/** Never sent: a hook is reported once, when it has run, by `system/hook_response` (also with `includeHookEvents`). */
export interface SDKHookStartedMessage extends NeverSent {
  type: 'system';
  subtype: 'hook_started';
  hook_id: string;
  hook_name: string;
  hook_event: string;
}

/** Never sent: a hook's output comes whole, in its `system/hook_response`. */
export interface SDKHookProgressMessage extends NeverSent {
  type: 'system';
  subtype: 'hook_progress';
  hook_id: string;
  hook_name: string;
  hook_event: string;
  stdout: string;
  stderr: string;
  output: string;
}

/** Never sent: there are no Claude Code plugins. */
export interface SDKPluginInstallMessage extends NeverSent {
  type: 'system';
  subtype: 'plugin_install';
  status: 'started' | 'installed' | 'failed' | 'completed';
  name?: string;
  error?: string;
}

/** Never sent: the model endpoint's credentials live on the workers; a client never signs in. */
export interface SDKAuthStatusMessage extends NeverSent {
  type: 'auth_status';
  isAuthenticating: boolean;
  output: string[];
  error?: string;
}

/** The SDK's `SDKMcpResourceLink`. */
export interface SDKMcpResourceLink {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
}

/**
 * Never sent, nor the other `task_*` messages and `background_tasks_changed`: there are no
 * background tasks. A subagent is a child workflow whose messages join the stream with their
 * `parent_tool_use_id`.
 */
export interface SDKTaskNotificationMessage extends NeverSent {
  type: 'system';
  subtype: 'task_notification';
  task_id: string;
  run_id?: string;
  tool_use_id?: string;
  status: 'completed' | 'failed' | 'stopped';
  reason?: 'worker_restart';
  output_file: string;
  summary: string;
  usage?: { total_tokens: number; tool_uses: number; duration_ms: number };
  resource_links?: SDKMcpResourceLink[];
  skip_transcript?: boolean;
  ambient?: boolean;
}

/** Never sent: no background tasks (see `SDKTaskNotificationMessage`). */
export interface SDKTaskStartedMessage extends NeverSent {
  type: 'system';
  subtype: 'task_started';
  task_id: string;
  run_id?: string;
  tool_use_id?: string;
  description: string;
  subagent_type?: string;
  is_backgrounded?: boolean;
  spawn_depth?: number;
  parent_task_id?: string;
  task_type?: string;
  workflow_name?: string;
  prompt?: string;
  skip_transcript?: boolean;
  ambient?: boolean;
}

/** Never sent: no background tasks (see `SDKTaskNotificationMessage`). */
export interface SDKTaskUpdatedMessage extends NeverSent {
  type: 'system';
  subtype: 'task_updated';
  task_id: string;
  run_id?: string;
  patch: {
    status?: 'pending' | 'running' | 'completed' | 'failed' | 'killed' | 'paused';
    description?: string;
    end_time?: number;
    total_paused_ms?: number;
    error?: string;
    is_backgrounded?: boolean;
  };
}

/** Never sent: no background tasks (see `SDKTaskNotificationMessage`). */
export interface SDKTaskProgressMessage extends NeverSent {
  type: 'system';
  subtype: 'task_progress';
  task_id: string;
  run_id?: string;
  tool_use_id?: string;
  description: string;
  subagent_type?: string;
  usage: { total_tokens: number; tool_uses: number; duration_ms: number };
  last_tool_name?: string;
  summary?: string;
}

/** Never sent: no background tasks (see `SDKTaskNotificationMessage`). */
export interface SDKBackgroundTasksChangedMessage extends NeverSent {
  type: 'system';
  subtype: 'background_tasks_changed';
  tasks: {
    task_id: string;
    run_id?: string;
    task_type: string;
    subagent_type?: string;
    description: string;
    parent_task_id?: string;
    ambient?: boolean;
  }[];
}

/** Never sent: reasoning is counted once the call returns, in the assistant message's and the result's `usage`. */
export interface SDKThinkingTokensMessage extends NeverSent {
  type: 'system';
  subtype: 'thinking_tokens';
  estimated_tokens: number;
  estimated_tokens_delta: number;
  user_message_uuid?: string;
}

/** Never sent: a session's status is read from its handle (`client.get(id).state()`, `durable-agent info ID`). */
export interface SDKSessionStateChangedMessage extends NeverSent {
  type: 'system';
  subtype: 'session_state_changed';
  state: 'idle' | 'running' | 'requires_action';
}

/** Never sent: a worker that shuts down is not the session's end; another worker carries it on. */
export interface SDKWorkerShuttingDownMessage extends NeverSent {
  type: 'system';
  subtype: 'worker_shutting_down';
  reason: string;
}

/** The SDK's `SlashCommand`. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint: string;
  aliases?: string[];
  builtin?: boolean;
}

/** Never sent: there are no slash commands. */
export interface SDKCommandsChangedMessage extends NeverSent {
  type: 'system';
  subtype: 'commands_changed';
  commands: SlashCommand[];
}

/** Never sent: Claude Code's UI notifications; what a session has to tell is a `system/warning` (`DurableAgentEvent`). */
export interface SDKNotificationMessage extends NeverSent {
  type: 'system';
  subtype: 'notification';
  key: string;
  text: string;
  priority: 'low' | 'medium' | 'high' | 'immediate';
  color?: string;
  timeout_ms?: number;
}

/** Never sent: no files are uploaded to Anthropic's Files API. */
export interface SDKFilesPersistedEvent extends NeverSent {
  type: 'system';
  subtype: 'files_persisted';
  files: { filename: string; file_id: string }[];
  failed: { filename: string; error: string }[];
  processed_at: string;
}

/** Never sent: tool calls are not summarised; each shows as its `tool_use` block and `tool_result`. */
export interface SDKToolUseSummaryMessage extends NeverSent {
  type: 'tool_use_summary';
  summary: string;
  preceding_tool_use_ids: string[];
}

/** Never sent: there is no memory feature. */
export interface SDKMemoryRecallMessage extends NeverSent {
  type: 'system';
  subtype: 'memory_recall';
  mode: 'select' | 'synthesize';
  memories: { path: string; scope: 'personal' | 'team' | 'organization'; content?: string }[];
}

/** The SDK's `SDKRateLimitInfo`: a Claude subscription's usage limits. */
export interface SDKRateLimitInfo {
  status: 'allowed' | 'allowed_warning' | 'rejected';
  resetsAt?: number;
  rateLimitType?: 'five_hour' | 'seven_day' | 'seven_day_opus' | 'seven_day_sonnet' | 'seven_day_overage_included' | 'overage';
  utilization?: number;
  overageStatus?: 'allowed' | 'allowed_warning' | 'rejected';
  overageResetsAt?: number;
  overageDisabledReason?:
    | 'overage_not_provisioned'
    | 'org_level_disabled'
    | 'org_level_disabled_until'
    | 'out_of_credits'
    | 'seat_tier_level_disabled'
    | 'member_level_disabled'
    | 'seat_tier_zero_credit_limit'
    | 'group_zero_credit_limit'
    | 'member_zero_credit_limit'
    | 'org_service_level_disabled'
    | 'no_limits_configured'
    | 'fetch_error'
    | 'unknown';
  isUsingOverage?: boolean;
  overageInUse?: boolean;
  overageEnabled?: boolean;
  surpassedThreshold?: number;
  limitScope?: 'service' | 'channel' | 'group_pool';
  errorCode?: 'credits_required';
  canUserPurchaseCredits?: boolean;
  hasChargeableSavedPaymentMethod?: boolean;
}

/**
 * Never sent: there is no Claude subscription to report on. A call held back by the model
 * endpoint's rate limiter shows as `system/api_retry` with a `reason` (ARCHITECTURE.md#rate-limits).
 */
export interface SDKRateLimitEvent extends NeverSent {
  type: 'rate_limit_event';
  rate_limit_info: SDKRateLimitInfo;
}

/** Never sent: MCP elicitation is not offered to servers (`onElicitation` is refused). */
export interface SDKElicitationCompleteMessage extends NeverSent {
  type: 'system';
  subtype: 'elicitation_complete';
  mcp_server_name: string;
  elicitation_id: string;
}

/** Never sent: there are no prompt suggestions (`promptSuggestions` is refused). */
export interface SDKPromptSuggestionMessage extends NeverSent {
  type: 'prompt_suggestion';
  suggestion: string;
}

/** Never sent: there is no `sessionStore` to mirror to; Temporal history is the session store. */
export interface SDKMirrorErrorMessage extends NeverSent {
  type: 'system';
  subtype: 'mirror_error';
  error: string;
  key: { projectKey: string; sessionId: string; subpath?: string };
}

/** Never sent: what a session has to tell is a `system/warning` (`DurableAgentEvent`). */
export interface SDKInformationalMessage extends NeverSent {
  type: 'system';
  subtype: 'informational';
  content: string;
  level: 'info' | 'notice' | 'suggestion' | 'warning';
  tool_use_id?: string;
  prevent_continuation?: boolean;
  tag?: string;
}

/** Never sent: a session's conversation is never cleared (no `/clear`); a fresh start is a new session. */
export interface SDKConversationResetMessage extends NeverSent {
  type: 'conversation_reset';
  new_conversation_id: UUID;
  trigger?: 'clear' | 'plan_mode_exit' | 'fresh_session' | 'onboarding';
  user_message_uuid?: string;
  timestamp?: string;
}

/** Never sent: there are no transcript files to lose; a session's history is Temporal's. */
export interface SDKSessionWritesLostMessage extends NeverSent {
  type: 'system';
  subtype: 'session_writes_lost';
  error_code: 'ENOSPC' | 'EDQUOT';
  lost: ('transcript' | 'global_config')[];
  transcript_session_ids?: string[];
}

/**
 * The SDK's message types durable-agent never sends. They are in `SDKMessage` (events.ts) so that
 * code narrowing on them compiles; at run time no message of these types arrives.
 */
export type NeverSentSDKMessage =
  | SDKUserMessageReplay
  | SDKStatusMessage
  | SDKControlRequestProgressMessage
  | SDKModelRefusalFallbackMessage
  | SDKModelRefusalNoFallbackMessage
  | SDKLocalCommandOutputMessage
  | SDKHookStartedMessage
  | SDKHookProgressMessage
  | SDKPluginInstallMessage
  | SDKAuthStatusMessage
  | SDKTaskNotificationMessage
  | SDKTaskStartedMessage
  | SDKTaskUpdatedMessage
  | SDKTaskProgressMessage
  | SDKBackgroundTasksChangedMessage
  | SDKThinkingTokensMessage
  | SDKSessionStateChangedMessage
  | SDKWorkerShuttingDownMessage
  | SDKCommandsChangedMessage
  | SDKNotificationMessage
  | SDKFilesPersistedEvent
  | SDKToolUseSummaryMessage
  | SDKMemoryRecallMessage
  | SDKRateLimitEvent
  | SDKElicitationCompleteMessage
  | SDKPromptSuggestionMessage
  | SDKMirrorErrorMessage
  | SDKInformationalMessage
  | SDKConversationResetMessage
  | SDKSessionWritesLostMessage;
