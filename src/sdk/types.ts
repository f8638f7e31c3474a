/**
 * The Claude Agent SDK's public types, written here in our own code (the SDK is never imported at
 * run time): code typed against `@anthropic-ai/claude-agent-sdk` compiles against these unchanged.
 * test/types/sdk-conformance.ts checks each against the SDK's own `.d.ts`: the SDK's `Options` is
 * accepted by our `Options`, our `Query` is assignable to the SDK's `Query`, and so on.
 */
import type { SessionOptions } from '../shared/config';
import type { CanUseTool } from '../client/permissions';
import type { SandboxOptionInput } from '../shared/sandbox';
import type { QueryMessage, UUID } from '../shared/events';
import type { ConnectOptions, DurableAgentClient } from '../client/client';

/** The SDK's permission modes. `auto` (a classifier decides) is refused: durable-agent has none. */
export type PermissionMode = 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan' | 'dontAsk' | 'auto';

/** A user message as the SDK's streaming input mode yields them (text blocks are used; the role must be `user`). */
export interface SDKUserMessage {
  type: 'user';
  message: { role: string; content: string | { type: string; text?: string }[] };
  parent_tool_use_id: string | null;
  uuid?: UUID;
  session_id?: string;
  isSynthetic?: boolean;
  tool_use_result?: unknown;
  priority?: 'now' | 'next' | 'later';
}

/** The SDK's hook events (those a session fires: src/shared/permissions/settings.ts). */
export type HookEvent =
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'PostToolBatch'
  | 'Notification'
  | 'UserPromptSubmit'
  | 'UserPromptExpansion'
  | 'SessionStart'
  | 'SessionEnd'
  | 'Stop'
  | 'StopFailure'
  | 'SubagentStart'
  | 'SubagentStop'
  | 'PreCompact'
  | 'PostCompact'
  | 'PreModelSwitch'
  | 'PostModelSwitch'
  | 'PermissionRequest'
  | 'PermissionDenied'
  | 'Setup'
  | 'TeammateIdle'
  | 'TaskCreated'
  | 'TaskCompleted'
  | 'Elicitation'
  | 'ElicitationResult'
  | 'ConfigChange'
  | 'WorktreeCreate'
  | 'WorktreeRemove'
  | 'InstructionsLoaded'
  | 'CwdChanged'
  | 'FileChanged'
  | 'DirectoryAdded'
  | 'MessageDisplay';

/** Ours: Claude Code's settings-file hook, run on the tools worker (ARCHITECTURE.md#hooks). */
export interface CommandHook {
  type: 'command';
  command: string;
  timeout?: number;
}

/**
 * `options.hooks`' matchers: the SDK's callbacks (`HookCallback`, called by this process for each
 * `system/hook_request` the session sends: ARCHITECTURE.md#callback-hooks) and our command hooks,
 * run on the tools worker. The callback type is wide so SDK-typed callbacks compile unchanged.
 */
export interface QueryHookMatcher {
  matcher?: string;
  hooks: (CommandHook | ((...args: never[]) => unknown))[];
  /** Seconds the session waits for this matcher's callbacks (default 60); not with command hooks. */
  timeout?: number;
  /**
   * A callback that throws, returns invalid output or does not answer in time: `'continue'` (the
   * default) is a non-blocking error; `'block'` blocks a UserPromptSubmit prompt. A PreToolUse
   * call is denied either way (a guard never fails open here); ignored on Stop and SubagentStop.
   */
  onFailure?: 'continue' | 'block';
}

export type ThinkingConfig =
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' }
  | { type: 'enabled'; budgetTokens?: number; display?: 'summarized' | 'omitted' }
  | { type: 'disabled' };
export type EffortLevel = 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export type SettingSource = 'user' | 'project' | 'local';

export type SystemPromptOption =
  | string
  | string[]
  | { type: 'custom'; prompt: string | string[]; snapshot?: boolean }
  | { type: 'preset'; preset: 'claude_code'; append?: string; excludeDynamicSections?: boolean; snapshot?: boolean };

/**
 * The SDK's `Options`, key for key. README "Options" says, for each, whether it is supported,
 * supported later (and by which issue) or refused and why (src/sdk/option-support.ts).
 * Refused keys are typed `unknown` so that an SDK-typed options object compiles; `query()` refuses
 * them by name before anything starts.
 */
export interface SDKOptions {
  abortController?: AbortController;
  additionalDirectories?: string[];
  allowedTools?: string[];
  disallowedTools?: string[];
  allowDangerouslySkipPermissions?: boolean;
  canUseTool?: CanUseTool;
  continue?: boolean;
  cwd?: string;
  effort?: EffortLevel;
  env?: { [envVar: string]: string | undefined };
  fallbackModel?: string;
  forkSession?: boolean;
  hooks?: Partial<Record<HookEvent, QueryHookMatcher[]>>;
  includePartialMessages?: boolean;
  /** `hook_response` events are always sent; this changes nothing (README "Options"). */
  includeHookEvents?: boolean;
  maxBudgetUsd?: number;
  maxThinkingTokens?: number;
  maxTurns?: number;
  model?: string;
  outputFormat?: { type: 'json_schema'; schema: Record<string, unknown> };
  permissionMode?: PermissionMode;
  permissionPrompts?: 'host' | 'none';
  persistSession?: boolean;
  resume?: string;
  /** With `resume` and `forkSession: true`: fork at the turn holding the message with this uuid. */
  resumeSessionAt?: string;
  /** A mode (`auto`, `required`, `off`) or Claude Code's settings block; fields we do not have are errors naming them. */
  sandbox?: SandboxOptionInput | Record<string, unknown>;
  sessionId?: string;
  settingSources?: SettingSource[];
  settings?: string | Record<string, unknown>;
  stderr?: (data: string) => void;
  systemPrompt?: SystemPromptOption;
  thinking?: ThinkingConfig;
  tools?: string[] | { type: 'preset'; preset: 'claude_code' };
  verbatimPrompts?: boolean;
  /** Run the main thread as this agent from `agents` (its prompt, tools and model). */
  agent?: string;
  // Refused or supported later: see README "Options".
  agentProgressSummaries?: unknown;
  agents?: unknown;
  betas?: unknown;
  debug?: unknown;
  debugFile?: unknown;
  enableFileCheckpointing?: unknown;
  executable?: unknown;
  executableArgs?: unknown;
  extraArgs?: unknown;
  forwardSubagentText?: unknown;
  loadTimeoutMs?: unknown;
  managedSettings?: unknown;
  mcpServers?: unknown;
  mcpServersDelivery?: unknown;
  onElicitation?: unknown;
  onUserDialog?: unknown;
  pathToClaudeCodeExecutable?: unknown;
  perTaskStopAffordance?: unknown;
  permissionPromptToolName?: unknown;
  planModeInstructions?: unknown;
  pluginDelivery?: unknown;
  plugins?: unknown;
  projectConfigRoot?: unknown;
  promptSuggestions?: unknown;
  resumeDropsTurn?: unknown;
  sessionStore?: unknown;
  sessionStoreFlush?: unknown;
  skills?: unknown;
  spawnClaudeCodeProcess?: unknown;
  strictMcpConfig?: unknown;
  supportedDialogKinds?: unknown;
  taskBudget?: unknown;
  title?: unknown;
  toolAliases?: unknown;
  toolConfig?: unknown;
}

/** Session options of ours that the SDK does not have (validated by `parseSessionConfig`). */
export type DurableAgentOptions = Omit<
  SessionOptions,
  keyof SDKOptions | 'prompt' | 'platform' | 'startedAt' | 'batchId' | 'settingsFile' | 'clientHooks' | 'clientTools'
> & {
  /** Where the Temporal server is (default: TEMPORAL_* variables / the default profile). */
  connection?: ConnectOptions;
  /** Use this client instead of connecting (it is not closed). */
  client?: DurableAgentClient;
};

/** `query()`'s options: the SDK's, plus ours. */
export type Options = SDKOptions & DurableAgentOptions;

export interface ModelInfo {
  value: string;
  displayName: string;
  description: string;
}

/** Every field is absent: the model endpoint's credentials live on the workers, not in a client account. */
export interface AccountInfo {
  email?: string;
  organization?: string;
  subscriptionType?: string;
  tokenSource?: string;
  apiKeySource?: string;
}

export interface McpServerStatus {
  name: string;
  status: 'connected' | 'failed' | 'needs-auth' | 'pending' | 'disabled';
  error?: string;
}

/** A subagent `Task` can start: one of the session's `agents`. */
export interface AgentInfo {
  name: string;
  description: string;
  /** The agent's `model`, as given (`inherit`: the session's). */
  model?: string;
}

/** There are none: prompts are sent verbatim (the SDK's shape, src/shared/sdk-messages.ts). */
import type { SlashCommand } from '../shared/sdk-messages';

export interface InitializationResult {
  commands: SlashCommand[];
  agents: AgentInfo[];
  output_style: string;
  available_output_styles: string[];
  models: ModelInfo[];
  account: AccountInfo;
  claude_code_version?: string;
}

/** A control method durable-agent does not have: always rejects, naming itself. */
type Unsupported = (...args: unknown[]) => Promise<never>;

/**
 * The SDK's `Query`: an async generator of messages with control methods. Breaking out of
 * `for await` detaches from the session, which keeps running (ARCHITECTURE.md#the-shape);
 * `close()`, `cancel()` and `abortController.abort()` end it.
 *
 * It yields the SDK's messages and our own events (`QueryMessage`), so it is not assignable to the
 * SDK's `Query`, whose generator yields only the SDK's messages; each of its methods is
 * (test/types/sdk-conformance.ts).
 */
export interface Query extends AsyncGenerator<QueryMessage, void> {
  /** Ours: the session id, once the session has started. */
  readonly sessionId: Promise<string>;
  interrupt(): Promise<{ still_queued: string[]; cancelled?: string[] } | undefined>;
  /**
   * Resolves to `undefined` once the request is in the session's history (a Temporal signal), which
   * both SDK versions allow: 0.3.330 declares `Promise<void>`, 0.3.332 the mode now in effect or
   * `undefined` where the answer names none. A session may still ignore the mode (a settings file
   * disabling `bypassPermissions`): it then sends a `system/warning`.
   */
  setPermissionMode(mode: PermissionMode): Promise<undefined>;
  setModel(model?: string): Promise<void>;
  setMaxThinkingTokens(maxThinkingTokens: number | null, thinkingDisplay?: 'summarized' | 'omitted' | 'highlights' | null): Promise<void>;
  initializationResult(): Promise<InitializationResult>;
  supportedCommands(): Promise<SlashCommand[]>;
  supportedModels(): Promise<ModelInfo[]>;
  /** The session's `agents` that `Task` can start. */
  supportedAgents(): Promise<AgentInfo[]>;
  /** Each server's status; after the session ended, the last one it knew. */
  mcpServerStatus(): Promise<McpServerStatus[]>;
  accountInfo(): Promise<AccountInfo>;
  /** There are no skills: an empty list. */
  reloadSkills(): Promise<{ skills: SlashCommand[] }>;
  /** `default`, the only output style. */
  reloadOutputStyles(): Promise<{ available_output_styles: string[] }>;
  /** There are no plugins (`addPlugins` is refused): what the session has without them. */
  reloadPlugins(options?: { holdOnCacheImpact?: boolean; addPlugins?: unknown[]; refuseIfBusy?: boolean }): Promise<{
    commands: SlashCommand[];
    agents: AgentInfo[];
    plugins: { name: string; path: string; source?: string; version?: string }[];
    mcpServers: McpServerStatus[];
    error_count: number;
  }>;
  /** Cancel the session and end the stream now (the session ends with an `error_during_execution` result). */
  close(): void;
  /** Ours: cancel the session; the stream goes on to its final result. */
  cancel(): Promise<void>;
  /** Feeds more user messages into a session started in streaming-input mode; a message that arrives while a turn runs steers it. */
  streamInput(stream: AsyncIterable<SDKUserMessage>): Promise<void>;
  setMcpPermissionModeOverride: Unsupported;
  applyFlagSettings: Unsupported;
  updateSettings: Unsupported;
  reinitialize: Unsupported;
  getContextUsage: Unsupported;
  usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET: Unsupported;
  readFile: Unsupported;
  rewindFiles: Unsupported;
  seedReadState: Unsupported;
  reconnectMcpServer: Unsupported;
  toggleMcpServer: Unsupported;
  readMcpResource: Unsupported;
  setMcpServers: Unsupported;
  stopTask: Unsupported;
  backgroundTasks: Unsupported;
}
