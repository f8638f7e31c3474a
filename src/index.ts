/**
 * The library's public surface: start and steer durable sessions, run workers, register tools.
 * `query()` and the types named as the Claude Agent SDK names them (SDKMessage, Options, Query, …)
 * are written in our own code and checked against the SDK's by test/types/sdk-conformance.ts, so
 * code typed against `@anthropic-ai/claude-agent-sdk` compiles against this package unchanged.
 */
export { DurableAgentClient, SessionHandle, SessionExistsError, SessionNotFoundError } from './client/client';
export type { ConnectOptions, ListFilter, SessionSummary } from './client/client';
export { query, AbortError, NotSupportedError } from './sdk/query';
export { listSessions } from './client/list-sessions';
export type { ListSessionsOptions, SDKSessionInfo } from './client/list-sessions';
export { answerPermissions } from './client/permissions';
export type { CanUseTool, PermissionResult, PermissionUpdate, PermissionRuleValue } from './client/permissions';
export type { PendingPermission, PermissionAnswer } from './shared/approvals';
/** Hook callbacks' input and output, the SDK's shapes (code hooks on the worker take them). */
export type {
  AsyncHookJSONOutput,
  BackgroundTaskSummary,
  BaseHookInput,
  CodeHooks,
  ConfigChangeHookInput,
  CwdChangedHookInput,
  CwdChangedHookSpecificOutput,
  DirectoryAddedHookInput,
  ElicitationHookInput,
  ElicitationHookSpecificOutput,
  ElicitationResultHookInput,
  ElicitationResultHookSpecificOutput,
  ExitReason,
  FileChangedHookInput,
  FileChangedHookSpecificOutput,
  HookCallback,
  HookCallbackMatcher,
  HookInput,
  HookJSONOutput,
  HookPermissionDecision,
  InstructionsLoadedHookInput,
  McpServerProvenance,
  MessageDisplayHookInput,
  MessageDisplayHookSpecificOutput,
  NotificationHookInput,
  NotificationHookSpecificOutput,
  PermissionDeniedHookInput,
  PermissionDeniedHookSpecificOutput,
  PermissionRequestHookInput,
  PermissionRequestHookSpecificOutput,
  PostCompactHookInput,
  PostModelSwitchHookInput,
  PostModelSwitchHookSpecificOutput,
  PostToolBatchHookInput,
  PostToolBatchHookSpecificOutput,
  PostToolBatchToolCall,
  PostToolUseFailureHookInput,
  PostToolUseFailureHookSpecificOutput,
  PostToolUseHookInput,
  PostToolUseHookSpecificOutput,
  PreCompactHookInput,
  PreModelSwitchHookInput,
  PreModelSwitchHookSpecificOutput,
  PreToolUseHookInput,
  PreToolUseHookSpecificOutput,
  SDKAssistantMessageError,
  SessionCronSummary,
  SessionEndHookInput,
  SessionStartHookInput,
  SessionStartHookSpecificOutput,
  SetupHookInput,
  SetupHookSpecificOutput,
  StopFailureHookInput,
  StopHookInput,
  StopHookSpecificOutput,
  SubagentStartHookInput,
  SubagentStartHookSpecificOutput,
  SubagentStopHookInput,
  SubagentStopHookSpecificOutput,
  SyncHookJSONOutput,
  TaskCompletedHookInput,
  TaskCreatedHookInput,
  TeammateIdleHookInput,
  UserPromptExpansionHookInput,
  UserPromptExpansionHookSpecificOutput,
  UserPromptSubmitHookInput,
  UserPromptSubmitHookSpecificOutput,
  WorktreeCreateHookInput,
  WorktreeCreateHookSpecificOutput,
  WorktreeRemoveHookInput,
} from './shared/hook-callbacks';
export { answerHooks } from './client/hook-callbacks';
export type { HooksOption, HookSession } from './client/hook-callbacks';
export type { ClientHooks, HookAnswer, HookCallbackResult, PendingHookRequest } from './shared/client-hooks';
export { answerTools } from './client/client-tools';
export type { ToolSession } from './client/client-tools';
export type { ClientTool, ClientTools, PendingToolRequest, ToolAnswer } from './shared/client-tools';
export type {
  AccountInfo,
  AgentInfo,
  CommandHook,
  DurableAgentOptions,
  EffortLevel,
  HookEvent,
  InitializationResult,
  McpServerStatus,
  ModelInfo,
  Options,
  PermissionMode,
  Query,
  QueryHookMatcher,
  SDKOptions,
  SDKUserMessage,
  SettingSource,
  SystemPromptOption,
  ThinkingConfig,
} from './sdk/types';
export type { Options as QueryOptions } from './sdk/types';
export { OPTION_SUPPORT } from './sdk/option-support';
export type { OptionSupport } from './sdk/option-support';
export { QUERY_METHOD_SUPPORT } from './sdk/query-method-support';
export type { MethodSupport } from './sdk/query-method-support';
export { createWorker } from './worker/worker';
export { bundleSessionWorkflows } from './worker/bundle';
/** Payload encryption for library users; a prebuilt workflow bundle needs the failure converter path. */
export { createPayloadCodecs, codecFromEnv, ENCRYPTING_FAILURE_CONVERTER_PATH } from './codec';
export type { CodecOptions } from './codec';
export type { AgentWorker, CreateWorkerOptions } from './worker/worker';
export type { ToolDefinition } from './activities/tools';
export { tool, createSdkMcpServer } from './activities/mcp/sdk-server';
export type { SdkMcpToolDefinition, McpSdkServerConfigWithInstance } from './activities/mcp/sdk-server';
export { SessionConfig, ConfigError, parseSessionConfig } from './shared/config';
export type { SessionOptions } from './shared/config';
export { SandboxSettings, parseSandboxOption } from './shared/sandbox';
export type { SandboxMode, SandboxOptionInput, SandboxStatus } from './shared/sandbox';
export { createSandbox } from './activities/sandbox';
export type { Sandbox, SandboxOptions, LaunchRequest, Launch } from './activities/sandbox';
export { asDurableAgentEvent, isDurableAgentEvent } from './shared/events';
export type {
  DurableAgentEvent,
  HookRequestMessage,
  ToolRequestMessage,
  LoopDetectedMessage,
  ModelChangedMessage,
  PermissionRequestMessage,
  PermissionResolvedMessage,
  SDKAPIRetryMessage,
  SDKAssistantMessage,
  SDKCompactBoundaryMessage,
  SDKHookResponseMessage,
  SDKLoggedMessage,
  SDKMessage,
  SentSDKMessage,
  QueryMessage,
  SDKPartialAssistantMessage,
  SDKPermissionDeniedMessage,
  SDKResultError,
  SDKResultMessage,
  SDKResultSuccess,
  SDKSystemMessage,
  SDKToolProgressMessage,
  SessionEvent,
  UUID,
  WarningMessage,
  WorkspaceRestoredMessage,
} from './shared/events';
export type {
  NeverSentSDKMessage,
  SDKAuthStatusMessage,
  SDKBackgroundTasksChangedMessage,
  SDKCommandsChangedMessage,
  SDKControlRequestProgressMessage,
  SDKConversationResetMessage,
  SDKElicitationCompleteMessage,
  SDKFilesPersistedEvent,
  SDKHookProgressMessage,
  SDKHookStartedMessage,
  SDKInformationalMessage,
  SDKLocalCommandOutputMessage,
  SDKMcpResourceLink,
  SDKMemoryRecallMessage,
  SDKMessageOrigin,
  SDKMirrorErrorMessage,
  SDKModelRefusalFallbackMessage,
  SDKModelRefusalNoFallbackMessage,
  SDKNotificationMessage,
  SDKPluginInstallMessage,
  SDKPromptSuggestionMessage,
  SDKRateLimitEvent,
  SDKRateLimitInfo,
  SDKSessionStateChangedMessage,
  SDKSessionWritesLostMessage,
  SDKStatusMessage,
  SDKTaskNotificationMessage,
  SDKTaskProgressMessage,
  SDKTaskStartedMessage,
  SDKTaskUpdatedMessage,
  SDKThinkingTokensMessage,
  SDKToolUseSummaryMessage,
  SDKUserMessageReplay,
  SDKWorkerShuttingDownMessage,
  SlashCommand,
} from './shared/sdk-messages';
export type { StreamEvent } from './shared/stream-events';
export type { StreamMessage, LiveOptions } from './client/live';
/** Names kept from before the SDK names. */
export type { ResultMessage, AssistantMessage, UserMessage } from './shared/events';
export { startScriptedModel } from './testing/scripted-model';
