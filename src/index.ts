/**
 * The library's public surface: start and steer durable sessions, run workers, register tools.
 * (Sources are TypeScript, run through tsx or a TypeScript-aware bundler; there is no build step yet.)
 */
export { DurableAgentClient, SessionHandle, SessionExistsError, SessionNotFoundError } from './client/client';
export type { ConnectOptions, ListFilter, SessionSummary } from './client/client';
export { query } from './client/query';
export type { Query, QueryOptions } from './client/query';
export { createWorker } from './worker/worker';
export type { AgentWorker, CreateWorkerOptions } from './worker/worker';
export type { ToolDefinition } from './activities/tools';
export { SessionConfig, ConfigError, parseSessionConfig } from './shared/config';
export type { SessionOptions, PermissionMode } from './shared/config';
export type { SDKMessage, ResultMessage, AssistantMessage, UserMessage } from './shared/events';
export { startScriptedModel } from './testing/scripted-model';
