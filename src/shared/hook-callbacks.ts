/**
 * Code hooks: functions registered on a worker (`createWorker({ hooks })`), typed like the Claude
 * Agent SDK's `HookCallback` — the same input fields, the same output — so a callback written for
 * the SDK can be registered here unchanged. They run on the tools worker, inside the `runHooks`
 * activity; only the decision fields of what they return enter history
 * (ARCHITECTURE.md#secrets-stay-on-workers).
 */
import type { HookEvent } from './permissions/settings';

export interface BaseHookInput {
  session_id: string;
  /** Always '': the transcript is not a file here; it lives in the session (the `transcript` query). */
  transcript_path: string;
  cwd: string;
  permission_mode?: string;
  /** Set when the hook fires inside a subagent: its session id (= workflow id) and its name in `agents`. */
  agent_id?: string;
  agent_type?: string;
}

export type PreToolUseHookInput = BaseHookInput & {
  hook_event_name: 'PreToolUse';
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
};
export type PostToolUseHookInput = BaseHookInput & {
  hook_event_name: 'PostToolUse';
  tool_name: string;
  tool_input: unknown;
  tool_response: unknown;
  tool_use_id: string;
};
export type PostToolUseFailureHookInput = BaseHookInput & {
  hook_event_name: 'PostToolUseFailure';
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
  error: string;
  is_interrupt?: boolean;
};
export type UserPromptSubmitHookInput = BaseHookInput & { hook_event_name: 'UserPromptSubmit'; prompt: string };
export type SessionStartHookInput = BaseHookInput & { hook_event_name: 'SessionStart'; source: 'startup' | 'resume' | 'clear' | 'compact' };
export type ExitReason = 'clear' | 'resume' | 'logout' | 'prompt_input_exit' | 'other';
export type SessionEndHookInput = BaseHookInput & { hook_event_name: 'SessionEnd'; reason: ExitReason };
export type StopHookInput = BaseHookInput & { hook_event_name: 'Stop'; stop_hook_active: boolean };
export type SubagentStartHookInput = BaseHookInput & { hook_event_name: 'SubagentStart'; agent_id: string; agent_type: string };
export type SubagentStopHookInput = BaseHookInput & {
  hook_event_name: 'SubagentStop';
  stop_hook_active: boolean;
  agent_id: string;
  agent_transcript_path: string;
  agent_type: string;
};
export type PreCompactHookInput = BaseHookInput & {
  hook_event_name: 'PreCompact';
  trigger: 'manual' | 'auto';
  custom_instructions: string | null;
};

export type HookInput =
  | PreToolUseHookInput
  | PostToolUseHookInput
  | PostToolUseFailureHookInput
  | UserPromptSubmitHookInput
  | SessionStartHookInput
  | SessionEndHookInput
  | StopHookInput
  | SubagentStartHookInput
  | SubagentStopHookInput
  | PreCompactHookInput;

/** The SDK's "run me in the background" answer: nothing to wait for, no decision. */
export interface AsyncHookJSONOutput {
  async: true;
  asyncTimeout?: number;
}

export interface SyncHookJSONOutput {
  continue?: boolean;
  suppressOutput?: boolean;
  stopReason?: string;
  decision?: 'approve' | 'block';
  systemMessage?: string;
  reason?: string;
  /** Wide on purpose: every event-specific output of the SDK fits; only the fields below are decisions we act on. */
  hookSpecificOutput?: {
    hookEventName: string;
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
    [field: string]: unknown;
  };
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
