/**
 * The session workflow's public interface (DESIGN §4). Names are part of the contract: clients,
 * the CLI and other languages address the workflow by them.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { PermissionMode } from './config';
import type { EventsPage } from './events';
import type { Message } from './messages';
import type { ToolSpec } from './tools';

export const WORKFLOW_TYPE = 'agentSession';
export const TASK_QUEUES = { workflow: 'agent', model: 'agent-model', tools: 'agent-tools' } as const;

/**
 * The model and tool queues are named after the workflow's own queue (`agent` → `agent-model`,
 * `agent-tools`), so separate deployments (or test runs) sharing a server never cross; a session
 * may pin its tools to a workspace host's queue (`toolsTaskQueue`, DESIGN D8).
 */
export function taskQueuesFor(workflowQueue: string, toolsTaskQueue?: string) {
  return { workflow: workflowQueue, model: `${workflowQueue}-model`, tools: toolsTaskQueue ?? `${workflowQueue}-tools` };
}

export const interruptSignal = defineSignal('interrupt');
export const setModelSignal = defineSignal<[string]>('setModel');
export const setPermissionModeSignal = defineSignal<[PermissionMode]>('setPermissionMode');
export const setMaxThinkingTokensSignal = defineSignal<[number | null]>('setMaxThinkingTokens');
/** A follow-up user message for an interactive session, fire-and-forget. */
export const userMessageSignal = defineSignal<[UserInput]>('userMessage');
/** Ends an interactive session once the current turn is over. */
export const closeSignal = defineSignal('close');

export interface UserInput {
  text: string;
  /** Client-chosen id; a message with an id already seen is accepted once (deduplicated). */
  id?: string;
}

/**
 * A follow-up user message, validated and acknowledged: returns the turn id the message starts
 * (the same id again for a duplicate). Rejected when the session is closed or the text is empty.
 */
export const sendMessageUpdate = defineUpdate<{ turnId: string; duplicate: boolean }, [UserInput]>('sendMessage');

/** Search attributes every session keeps up to date (registered by `durable-agent server`). */
export const SEARCH_ATTRIBUTES = {
  status: 'AgentStatus',
  model: 'AgentModel',
  turns: 'AgentTurns',
  costUsd: 'AgentCostUsd',
  batchId: 'AgentBatchId',
} as const;

/** Typed keys for the attributes above (AgentStatus: running, waiting_for_input, completed, failed). */
export const SEARCH_ATTRIBUTE_KEYS = {
  status: defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD'),
  model: defineSearchAttributeKey(SEARCH_ATTRIBUTES.model, 'KEYWORD'),
  turns: defineSearchAttributeKey(SEARCH_ATTRIBUTES.turns, 'INT'),
  costUsd: defineSearchAttributeKey(SEARCH_ATTRIBUTES.costUsd, 'DOUBLE'),
  batchId: defineSearchAttributeKey(SEARCH_ATTRIBUTES.batchId, 'KEYWORD'),
};

/** Sent by the model activity when an attempt failed and Temporal will retry it. */
export const apiRetrySignal = defineSignal<[ApiRetryNotice]>('apiRetry');

export interface ApiRetryNotice {
  attempt: number;
  maxRetries: number;
  retryDelayMs: number;
  errorStatus: number | null;
  error: string;
}

export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUsd: number;
  perModel: Record<
    string,
    {
      inputTokens: number;
      outputTokens: number;
      cacheReadInputTokens: number;
      cacheCreationInputTokens: number;
      costUsd: number;
      costBasis: 'table' | 'unknown';
    }
  >;
}

export type SessionStatus = 'starting' | 'running' | 'waiting_for_input' | 'completed';

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  activeForm: string;
}

export interface SessionState {
  status: SessionStatus;
  exitReason?: string;
  model: string;
  permissionMode: PermissionMode;
  maxThinkingTokens: number | null;
  turnCount: number;
  pendingTools: { id: string; name: string }[];
  todos: TodoItem[];
  messageCount: number;
}

/** What the model activity reads instead of carrying messages in its input (DESIGN D1). */
export interface PromptPage {
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  /** Index of the first message in `messages`. */
  start: number;
  /** Total number of messages the caller asked for (`upTo`). */
  total: number;
}

export const usageQuery = defineQuery<SessionUsage>('usage');
export const turnCountQuery = defineQuery<number>('turnCount');
export const stateQuery = defineQuery<SessionState>('state');
export const eventsQuery = defineQuery<EventsPage, [{ after?: number; limit?: number }?]>('events');
export const transcriptQuery = defineQuery<Message[], [{ start?: number; limit?: number }?]>('transcript');
export const promptQuery = defineQuery<PromptPage, [{ upTo: number; start: number; maxBytes: number; withTools: boolean }]>(
  'prompt',
);
