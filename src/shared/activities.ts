/**
 * Activity signatures, shared by the workflow (which proxies them) and the worker (which
 * implements them). Inputs are small by design: the model activity carries no messages (D1).
 */
import type { AssistantReply } from './messages';
import type { RunToolInput, ToolOutcome, ToolSpec } from './tools';

export interface CallModelInput {
  /** Workflow id and run id: the activity reads its prompt from this run through a query. */
  sessionId: string;
  runId: string;
  /** Read messages [0, upTo). */
  upTo: number;
  model: string;
  maxOutputTokens: number;
  maxThinkingTokens: number | null;
  /** Send the tool specs with the request (false for a final summary without tools). */
  withTools: boolean;
  /** For `system/api_retry` events: the retry policy's attempt limit. */
  maxAttempts: number;
  initialIntervalMs: number;
  maximumIntervalMs: number;
  includePartialMessages: boolean;
}

export interface ModelActivities {
  callModel(input: CallModelInput): Promise<AssistantReply>;
}

export interface ToolActivities {
  listTools(): Promise<ToolSpec[]>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
}

/** `ApplicationFailure.type`s the model activity throws; named by who is at fault (STYLE habit 5). */
export const NON_RETRYABLE_MODEL_ERRORS = [
  'ModelBadRequest',
  'ModelAuth',
  'ModelPermission',
  'ModelNotFound',
  'ContextOverflow',
  'ModelUnprocessable',
] as const;
