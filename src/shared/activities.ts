/**
 * Activity signatures, shared by the workflow (which proxies them) and the worker (which
 * implements them). Inputs are small by design: the model activity carries no messages (ARCHITECTURE.md#transcript-by-reference).
 */
import type { AssistantReply, Usage } from './messages';
import type { RunToolInput, ToolOutcome, ToolSpec } from './tools';
import type { CallFacts, InspectCallInput } from './permissions/facts';
import type { CallMcpToolInput, ListMcpToolsInput, ListMcpToolsResult } from './mcp';
import type { LoadedSettings, LoadSettingsInput } from './hooks';

/** Run on the tools queue next to the tools: hooks and settings files live on the workspace host. */
export interface CallModelInput {
  /** Workflow id and run id: the activity reads its prompt from this run through a query. */
  sessionId: string;
  runId: string;
  /** Read messages [0, upTo). */
  upTo: number;
  /** The session's newest event when the call was scheduled: names the prompt offered to this worker (ARCHITECTURE.md#prompt-offer). */
  promptSeq?: number;
  model: string;
  maxOutputTokens: number;
  maxThinkingTokens: number | null;
  /** Send the tool specs with the request (false for a final summary without tools). */
  withTools: boolean;
  /** A user message added to this request only, not to the transcript (the final summary). */
  appendUserText?: string;
  /** `outputFormat`'s JSON schema: sent as `response_format`, and a final reply is checked against it. */
  outputSchema?: Record<string, unknown>;
  /** For `system/api_retry` events: the retry policy's attempt limit. */
  maxAttempts: number;
  initialIntervalMs: number;
  maximumIntervalMs: number;
}

export interface SummarizeInput {
  /** Workflow id and run id: the activity reads messages [from, upTo) through the `prompt` query. */
  sessionId: string;
  runId: string;
  /** Default 0. */
  from?: number;
  upTo: number;
  model: string;
  maxOutputTokens: number;
  /**
   * For `system/api_retry` events: the retry policy, as `CallModelInput` carries it. Absent in
   * calls scheduled by earlier versions, which read it from the activity's info — where an
   * eagerly dispatched first attempt has none (ARCHITECTURE.md#model-calls-on-the-workflow-queue).
   */
  maxAttempts?: number;
  initialIntervalMs?: number;
  maximumIntervalMs?: number;
}

/** A summary of part of the transcript (`summarize` activity), recorded in history once. */
export interface SummarizeResult {
  summary: string;
  /** The model hit `maxOutputTokens`: the summary's end is missing. */
  truncated: boolean;
  usage: Usage;
  costUsd: number;
  costBasis: 'table' | 'unknown';
  model: string;
  durationMs: number;
}

export interface ModelActivities {
  callModel(input: CallModelInput): Promise<AssistantReply>;
  /** A model call without tools that summarizes messages [from, upTo) for compaction. */
  summarize(input: SummarizeInput): Promise<SummarizeResult>;
}

/** One model the endpoint serves (`GET /v1/models`). */
export interface ModelListing {
  id: string;
  ownedBy?: string;
}

/** Read on the model worker, where the endpoint's key is (ARCHITECTURE.md#secrets-stay-on-workers). */
export interface ModelCatalogActivities {
  listModels(): Promise<ModelListing[]>;
}

export interface ToolActivities {
  listTools(): Promise<ToolSpec[]>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
  /** What the permission decision needs from the tools host (shared/permissions/facts.ts). */
  inspectToolCall(input: InspectCallInput): Promise<CallFacts>;
}

/**
 * A session's set-up as one activity on the tools worker: its tools and its settings files,
 * `listTools` and `loadSettings` in one answer (ARCHITECTURE.md#session-start-in-one-step).
 */
export interface SetupActivities {
  prepareSession(input: LoadSettingsInput): Promise<PreparedSession>;
}

interface PreparedSession {
  tools: ToolSpec[];
  settings: LoadedSettings;
}

/** MCP servers, on the tools queue: they run where the tools run (ARCHITECTURE.md#mcp). */
export interface McpActivities {
  listMcpTools(input: ListMcpToolsInput): Promise<ListMcpToolsResult>;
  /** `version`: the server connection's version after the call; a change means its tools should be listed again. */
  callMcpTool(input: CallMcpToolInput): Promise<ToolOutcome & { version?: string }>;
}

/** `ApplicationFailure.type`s the model activity throws; named by who is at fault. */
export const NON_RETRYABLE_MODEL_ERRORS = [
  'ModelBadRequest',
  'ModelAuth',
  'ModelPermission',
  'ModelNotFound',
  'ContextOverflow',
  'ModelUnprocessable',
] as const;

export interface LoadTranscriptInput {
  /** The session whose conversation to continue. */
  sessionId: string;
  /** The calling run: when resuming under the same id, the transcript is in the previous run. */
  excludeRunId: string;
  /** A fork at turn N (counted across resumes): the transcript up to the end of that turn. */
  atTurn?: number;
}

export interface LoadedTranscript {
  messages: import('./messages').Message[];
  /** The run it was read from. */
  runId: string;
  /** Old tool results trimmed so the transcript fits in one payload. */
  trimmed: number;
  /** The settings that run used (its `settings` query); absent when it has none (recorded before settings, or before the query). */
  settings?: import('./hooks').SessionSettings;
  /** The resumed session's turn marks (up to `atTurn` for a fork): turns go on counting from there. */
  turnMarks?: import('./checkpoint').TurnMark[];
  /** The resumed session's checkpoints (up to `atTurn` for a fork). */
  checkpoints?: import('./checkpoint').CheckpointRecord[];
}

/** Runs on the model queue (any worker with a client): reading other sessions, for `resume`. */
export interface SessionStoreActivities {
  loadTranscript(input: LoadTranscriptInput): Promise<LoadedTranscript>;
  /** Whether any worker polled an activity queue within `withinMs`: a busy host is not a lost one. */
  hostAlive(input: import('./checkpoint').HostAliveInput): Promise<boolean>;
}
