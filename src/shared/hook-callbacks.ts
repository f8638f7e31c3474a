/**
 * Code hooks: functions registered on a worker (`createWorker({ hooks })`), typed like the Claude
 * Agent SDK's `HookCallback` — the same input fields, the same output — so a callback written for
 * the SDK can be registered here unchanged. They run on the tools worker, inside the `runHooks`
 * activity; only the decision fields of what they return enter history
 * (ARCHITECTURE.md#secrets-stay-on-workers).
 */
import type { HookEvent } from './permissions/settings';
import type { PermissionUpdate } from './permission-update';

/*
 * The inputs and outputs are the SDK's, shape for shape (test/types/sdk-conformance.ts checks each
 * both ways), also for the events no session fires (Notification, Setup, …): code written for the
 * SDK narrows on any `hook_event_name` and compiles unchanged. The events a session fires are
 * ARCHITECTURE.md#hooks's; the fields it fills are those of its own inputs.
 */

export interface BaseHookInput {
  session_id: string;
  /** Always '': the transcript is not a file here; it lives in the session (the `transcript` query). */
  transcript_path: string;
  cwd: string;
  prompt_id?: string;
  permission_mode?: string;
  /** Set when the hook fires inside a subagent: its session id (= workflow id) and its name in `agents`. */
  agent_id?: string;
  agent_type?: string;
  effort?: { level: string };
}

/** Where an MCP tool comes from. */
export interface McpServerProvenance {
  name: string;
  source: string;
}

export interface PostToolBatchToolCall {
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
  tool_response?: unknown;
}

export interface BackgroundTaskSummary {
  id: string;
  type: string;
  status: string;
  description: string;
  command?: string;
  agent_type?: string;
  server?: string;
  tool?: string;
  name?: string;
}

export interface SessionCronSummary {
  id: string;
  schedule: string;
  recurring: boolean;
  prompt: string;
}

export type { SDKAssistantMessageError } from './sdk-shapes';
import type { SDKAssistantMessageError } from './sdk-shapes';

export type ExitReason = 'clear' | 'resume' | 'logout' | 'prompt_input_exit' | 'other';

type ToolCall = { tool_name: string; tool_input: unknown; tool_use_id: string; mcp_server?: McpServerProvenance };

export type PreToolUseHookInput = BaseHookInput & { hook_event_name: 'PreToolUse' } & ToolCall;
export type PostToolUseHookInput = BaseHookInput & {
  hook_event_name: 'PostToolUse';
  tool_response: unknown;
  duration_ms?: number;
} & ToolCall;
export type PostToolUseFailureHookInput = BaseHookInput & {
  hook_event_name: 'PostToolUseFailure';
  error: string;
  is_interrupt?: boolean;
  duration_ms?: number;
} & ToolCall;
export type PostToolBatchHookInput = BaseHookInput & { hook_event_name: 'PostToolBatch'; tool_calls: PostToolBatchToolCall[] };
export type PermissionDeniedHookInput = BaseHookInput & { hook_event_name: 'PermissionDenied'; reason: string } & ToolCall;
export type NotificationHookInput = BaseHookInput & {
  hook_event_name: 'Notification';
  message: string;
  title?: string;
  notification_type: string;
};
export type UserPromptSubmitHookInput = BaseHookInput & {
  hook_event_name: 'UserPromptSubmit';
  prompt: string;
  source?: 'user' | 'sdk' | 'system' | 'loop_wakeup' | 'schedule_wakeup' | 'poll_event';
  session_title?: string;
};
export type UserPromptExpansionHookInput = BaseHookInput & {
  hook_event_name: 'UserPromptExpansion';
  expansion_type: 'slash_command' | 'mcp_prompt';
  command_name: string;
  command_args: string;
  command_source?: string;
  prompt: string;
};
export type SessionStartHookInput = BaseHookInput & {
  hook_event_name: 'SessionStart';
  source: 'startup' | 'resume' | 'clear' | 'compact' | 'fork';
  agent_type?: string;
  model?: string;
  session_title?: string;
  seconds_since_last_response?: number;
  context_tokens?: number;
  prompt_cache_likely_expired?: boolean;
  estimated_cache_write_usd?: number;
};
export type SessionEndHookInput = BaseHookInput & { hook_event_name: 'SessionEnd'; reason: ExitReason };
export type StopHookInput = BaseHookInput & {
  hook_event_name: 'Stop';
  stop_hook_active: boolean;
  last_assistant_message?: string;
  background_tasks?: BackgroundTaskSummary[];
  session_crons?: SessionCronSummary[];
};
export type StopFailureHookInput = BaseHookInput & {
  hook_event_name: 'StopFailure';
  error: SDKAssistantMessageError;
  error_details?: string;
  last_assistant_message?: string;
};
export type SubagentStartHookInput = BaseHookInput & { hook_event_name: 'SubagentStart'; agent_id: string; agent_type: string };
export type SubagentStopHookInput = BaseHookInput & {
  hook_event_name: 'SubagentStop';
  stop_hook_active: boolean;
  agent_id: string;
  agent_transcript_path: string;
  agent_type: string;
  last_assistant_message?: string;
  background_tasks?: BackgroundTaskSummary[];
  session_crons?: SessionCronSummary[];
};
export type PreCompactHookInput = BaseHookInput & {
  hook_event_name: 'PreCompact';
  trigger: 'manual' | 'auto';
  custom_instructions: string | null;
};
export type PostCompactHookInput = BaseHookInput & { hook_event_name: 'PostCompact'; trigger: 'manual' | 'auto'; compact_summary: string };
interface ModelSwitch {
  from_model: string;
  to_model: string;
  requested_model: string | null;
  context_tokens: number;
  prompt_cache_warm: boolean;
  cache_ttl: '5m' | '1h';
  estimated_cache_write_usd: number;
  pricing: 'configured' | 'catalog' | 'default';
}
export type PreModelSwitchHookInput = BaseHookInput & {
  hook_event_name: 'PreModelSwitch';
  source: 'command' | 'picker' | 'sdk';
} & ModelSwitch;
export type PostModelSwitchHookInput = BaseHookInput & {
  hook_event_name: 'PostModelSwitch';
  source: 'command' | 'picker' | 'sdk' | 'auto' | 'resume';
} & ModelSwitch;
export type PermissionRequestHookInput = BaseHookInput & {
  hook_event_name: 'PermissionRequest';
  tool_name: string;
  tool_input: unknown;
  permission_suggestions?: PermissionUpdate[];
  mcp_server?: McpServerProvenance;
};
export type SetupHookInput = BaseHookInput & { hook_event_name: 'Setup'; trigger: 'init' | 'maintenance' };
export type TeammateIdleHookInput = BaseHookInput & { hook_event_name: 'TeammateIdle'; teammate_name: string; team_name: string };
interface TaskFields {
  task_id: string;
  task_subject: string;
  task_description?: string;
  teammate_name?: string;
  team_name?: string;
}
export type TaskCreatedHookInput = BaseHookInput & { hook_event_name: 'TaskCreated' } & TaskFields;
export type TaskCompletedHookInput = BaseHookInput & { hook_event_name: 'TaskCompleted' } & TaskFields;
export type ElicitationHookInput = BaseHookInput & {
  hook_event_name: 'Elicitation';
  mcp_server_name: string;
  message: string;
  mode?: 'form' | 'url';
  url?: string;
  elicitation_id?: string;
  requested_schema?: Record<string, unknown>;
};
export type ElicitationResultHookInput = BaseHookInput & {
  hook_event_name: 'ElicitationResult';
  mcp_server_name: string;
  elicitation_id?: string;
  mode?: 'form' | 'url';
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
};
export type ConfigChangeHookInput = BaseHookInput & {
  hook_event_name: 'ConfigChange';
  source: 'user_settings' | 'project_settings' | 'local_settings' | 'policy_settings' | 'skills';
  file_path?: string;
};
export type InstructionsLoadedHookInput = BaseHookInput & {
  hook_event_name: 'InstructionsLoaded';
  file_path: string;
  memory_type: 'User' | 'Project' | 'Local' | 'Managed';
  load_reason: 'session_start' | 'nested_traversal' | 'path_glob_match' | 'include' | 'compact';
  globs?: string[];
  trigger_file_path?: string;
  parent_file_path?: string;
};
export type WorktreeCreateHookInput = BaseHookInput & { hook_event_name: 'WorktreeCreate'; name: string };
export type WorktreeRemoveHookInput = BaseHookInput & { hook_event_name: 'WorktreeRemove'; worktree_path: string };
export type CwdChangedHookInput = BaseHookInput & { hook_event_name: 'CwdChanged'; old_cwd: string; new_cwd: string };
export type FileChangedHookInput = BaseHookInput & {
  hook_event_name: 'FileChanged';
  file_path: string;
  event: 'change' | 'add' | 'unlink';
};
export type DirectoryAddedHookInput = BaseHookInput & {
  hook_event_name: 'DirectoryAdded';
  directory: string;
  source: 'slash_command' | 'register_repo_root';
};
export type MessageDisplayHookInput = BaseHookInput & {
  hook_event_name: 'MessageDisplay';
  turn_id: string;
  message_id: string;
  index: number;
  final: boolean;
  delta: string;
};

export type HookInput =
  | PreToolUseHookInput
  | PostToolUseHookInput
  | PostToolUseFailureHookInput
  | PostToolBatchHookInput
  | PermissionDeniedHookInput
  | NotificationHookInput
  | UserPromptSubmitHookInput
  | UserPromptExpansionHookInput
  | SessionStartHookInput
  | SessionEndHookInput
  | StopHookInput
  | StopFailureHookInput
  | SubagentStartHookInput
  | SubagentStopHookInput
  | PreCompactHookInput
  | PostCompactHookInput
  | PreModelSwitchHookInput
  | PostModelSwitchHookInput
  | PermissionRequestHookInput
  | SetupHookInput
  | TeammateIdleHookInput
  | TaskCreatedHookInput
  | TaskCompletedHookInput
  | ElicitationHookInput
  | ElicitationResultHookInput
  | ConfigChangeHookInput
  | InstructionsLoadedHookInput
  | WorktreeCreateHookInput
  | WorktreeRemoveHookInput
  | CwdChangedHookInput
  | FileChangedHookInput
  | DirectoryAddedHookInput
  | MessageDisplayHookInput;

/** The SDK's "run me in the background" answer: nothing to wait for, no decision. */
export interface AsyncHookJSONOutput {
  async: true;
  asyncTimeout?: number;
}

export type HookPermissionDecision = 'allow' | 'deny' | 'ask' | 'defer';

type Context<E extends string> = { hookEventName: E; additionalContext?: string };
export type PreToolUseHookSpecificOutput = {
  hookEventName: 'PreToolUse';
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
};
export type UserPromptSubmitHookSpecificOutput = Context<'UserPromptSubmit'> & { sessionTitle?: string; suppressOriginalPrompt?: boolean };
export type UserPromptExpansionHookSpecificOutput = Context<'UserPromptExpansion'> & { suppressOriginalPrompt?: boolean };
export type SessionStartHookSpecificOutput = Context<'SessionStart'> & {
  initialUserMessage?: string;
  sessionTitle?: string;
  watchPaths?: string[];
  reloadSkills?: boolean;
};
export type SetupHookSpecificOutput = Context<'Setup'>;
export type PreModelSwitchHookSpecificOutput = {
  hookEventName: 'PreModelSwitch';
  permissionDecision?: 'allow' | 'deny' | 'ask';
  permissionDecisionReason?: string;
};
export type PostModelSwitchHookSpecificOutput = Context<'PostModelSwitch'>;
export type SubagentStartHookSpecificOutput = Context<'SubagentStart'>;
export type PostToolUseHookSpecificOutput = Context<'PostToolUse'> & {
  classifierContext?: string;
  updatedToolOutput?: unknown;
  updatedMCPToolOutput?: unknown;
};
export type PostToolUseFailureHookSpecificOutput = Context<'PostToolUseFailure'>;
export type PostToolBatchHookSpecificOutput = Context<'PostToolBatch'>;
export type StopHookSpecificOutput = Context<'Stop'>;
export type SubagentStopHookSpecificOutput = Context<'SubagentStop'>;
export type PermissionDeniedHookSpecificOutput = { hookEventName: 'PermissionDenied'; retry?: boolean };
export type NotificationHookSpecificOutput = Context<'Notification'>;
export type PermissionRequestHookSpecificOutput = {
  hookEventName: 'PermissionRequest';
  decision:
    | { behavior: 'allow'; updatedInput?: Record<string, unknown>; updatedPermissions?: PermissionUpdate[] }
    | { behavior: 'deny'; message?: string; interrupt?: boolean };
};
type Elicited<E extends string> = { hookEventName: E; action?: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
export type ElicitationHookSpecificOutput = Elicited<'Elicitation'>;
export type ElicitationResultHookSpecificOutput = Elicited<'ElicitationResult'>;
export type CwdChangedHookSpecificOutput = { hookEventName: 'CwdChanged'; watchPaths?: string[] };
export type FileChangedHookSpecificOutput = { hookEventName: 'FileChanged'; watchPaths?: string[] };
export type WorktreeCreateHookSpecificOutput = { hookEventName: 'WorktreeCreate'; worktreePath: string };
export type MessageDisplayHookSpecificOutput = { hookEventName: 'MessageDisplay'; displayContent?: string };

/**
 * What a hook answers. Of it a session acts on the decision fields its hooks know
 * (ARCHITECTURE.md#hooks): `continue`, `stopReason`, `decision`, `reason`, `systemMessage`, and
 * `permissionDecision`(`Reason`), `updatedInput`, `additionalContext` of `hookSpecificOutput`.
 */
export interface SyncHookJSONOutput {
  continue?: boolean;
  suppressOutput?: boolean;
  stopReason?: string;
  decision?: 'approve' | 'block';
  systemMessage?: string;
  terminalSequence?: string;
  reason?: string;
  hookSpecificOutput?:
    | PreToolUseHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput
    | UserPromptExpansionHookSpecificOutput
    | SessionStartHookSpecificOutput
    | SetupHookSpecificOutput
    | PreModelSwitchHookSpecificOutput
    | PostModelSwitchHookSpecificOutput
    | SubagentStartHookSpecificOutput
    | PostToolUseHookSpecificOutput
    | PostToolUseFailureHookSpecificOutput
    | PostToolBatchHookSpecificOutput
    | StopHookSpecificOutput
    | SubagentStopHookSpecificOutput
    | PermissionDeniedHookSpecificOutput
    | NotificationHookSpecificOutput
    | PermissionRequestHookSpecificOutput
    | ElicitationHookSpecificOutput
    | ElicitationResultHookSpecificOutput
    | CwdChangedHookSpecificOutput
    | FileChangedHookSpecificOutput
    | WorktreeCreateHookSpecificOutput
    | MessageDisplayHookSpecificOutput;
}

export type HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput;

export type HookCallback = (input: HookInput, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<HookJSONOutput>;

export interface HookCallbackMatcher {
  /** As in settings files: "*", "" or absent match all; `A|B` exact names; otherwise a regex. */
  matcher?: string;
  hooks: HookCallback[];
  /** Seconds for each hook of this matcher (default 60), as the SDK's. */
  timeout?: number;
}

/** What `createWorker({ hooks })` takes. */
export type CodeHooks = Partial<Record<HookEvent, HookCallbackMatcher[]>>;
