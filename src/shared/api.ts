/**
 * The session workflow's public interface (ARCHITECTURE.md#the-shape). Names are part of the contract: clients,
 * the CLI and other languages address the workflow by them.
 */
import type { McpServerState } from './mcp';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { PermissionMode } from './config';
import type { EventsPage, SessionEvent } from './events';
import type { AbandonedCalls, Message, TokenCounts, Usage } from './messages';
import type { ToolSpec } from './tools';
import type { PendingPermission } from './approvals';
import type { SessionSettings } from './hooks';

export const WORKFLOW_TYPE = 'agentSession';
/** A short workflow that lists the endpoint's models through the model worker (`Query.supportedModels()`). */
export const LIST_MODELS_WORKFLOW_TYPE = 'agentListModels';
export const TASK_QUEUES = { workflow: 'agent', model: 'agent', tools: 'agent-tools', formerModel: 'agent-model' } as const;

/**
 * Model calls go to the workflow's own queue (its activity side), so a worker that runs both
 * roles takes a session's next model call straight from the completion of the workflow task that
 * scheduled it, with no trip through the server's matching (eager dispatch,
 * ARCHITECTURE.md#model-calls-on-the-workflow-queue). Tools go to a queue named after it (`agent` →
 * `agent-tools`), so separate deployments (or test runs) sharing a server never cross; a session
 * may pin its tools to a workspace host's queue (`toolsTaskQueue`, ARCHITECTURE.md#tools-pinned-to-their-host).
 * `formerModel` (`agent-model`) is where sessions started by earlier versions send theirs; model
 * workers serve it too.
 */
export function taskQueuesFor(workflowQueue: string, toolsTaskQueue?: string) {
  return {
    workflow: workflowQueue,
    model: workflowQueue,
    tools: toolsTaskQueue ?? `${workflowQueue}-tools`,
    formerModel: `${workflowQueue}-model`,
  };
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
  /**
   * Steer the running turn: the message reaches the model before its next call in this turn
   * (after the current tool results), instead of waiting for the turn to end. When no turn is
   * running, an interactive session takes it as a follow-up.
   */
  steer?: boolean;
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

/** Typed keys for the attributes above (AgentStatus: running, waiting_for_approval, waiting_for_input, completed, failed). */
export const SEARCH_ATTRIBUTE_KEYS = {
  status: defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD'),
  model: defineSearchAttributeKey(SEARCH_ATTRIBUTES.model, 'KEYWORD'),
  turns: defineSearchAttributeKey(SEARCH_ATTRIBUTES.turns, 'INT'),
  costUsd: defineSearchAttributeKey(SEARCH_ATTRIBUTES.costUsd, 'DOUBLE'),
  batchId: defineSearchAttributeKey(SEARCH_ATTRIBUTES.batchId, 'KEYWORD'),
};

/** A subagent's events, sent by the child to its parent's stream (ARCHITECTURE.md#subagents). */
export const subagentEventsSignal = defineSignal<[SubagentEventsBatch]>('subagentEvents');

export interface SubagentEventsBatch {
  toolUseId: string;
  events: SessionEvent[];
  /** The child's cost so far (its own and its finished children's): the parent watches the tree's budget with it. */
  costUsd?: number;
}

/** One subagent a session started with `Task`: what `durable-agent show` lists. */
export interface SubagentRecord {
  toolUseId: string;
  agentType: string;
  description: string;
  /** The child workflow's id (= its session id). */
  workflowId: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  costUsd: number;
  /** The tree reached the parent's budget while this child ran: it was asked to stop. */
  stoppedForBudget?: boolean;
}

/** Sent by the model activity when an attempt failed and Temporal will retry it. */
export const apiRetrySignal = defineSignal<[ApiRetryNotice]>('apiRetry');

export interface ApiRetryNotice {
  attempt: number;
  maxRetries: number;
  retryDelayMs: number;
  errorStatus: number | null;
  error: string;
  /** Set when the call is held back by the endpoint's rate limiter rather than failed (ARCHITECTURE.md#rate-limits). */
  reason?: 'rate_limited' | 'max_concurrent' | 'requests_per_minute' | 'tokens_per_minute';
}

/**
 * Sent by a model call attempt that the server had already given up on (timed out, and retried
 * or failed) while it still ran: the provider billed its tokens, but its reply is not the one the
 * session takes (ARCHITECTURE.md#abandoned-attempts). Counted once per attempt.
 */
export const abandonedCallSignal = defineSignal<[AbandonedCallNotice]>('abandonedCall');

export interface AbandonedCallNotice {
  /** The run that scheduled the call, its activity id and the attempt: what makes a notice sent twice count once. */
  runId: string;
  activityId: string;
  attempt: number;
  model: string;
  usage: Usage;
  costUsd: number;
  costBasis: 'table' | 'unknown';
  contextWindow: number;
  /** `completed`: the reply was whole but the server refused it; `cancelled`: cut off once the attempt heard it was gone. */
  outcome: 'completed' | 'cancelled';
  /** The provider sent no usage (the stream was cut): the tokens are estimated from the request and the text received. */
  estimated: boolean;
}

/** The `usage` query's answer: the session's `TokenCounts` in all and per model. */
export interface SessionUsage extends TokenCounts {
  costUsd: number;
  perModel: Record<
    string,
    TokenCounts & {
      costUsd: number;
      costBasis: 'table' | 'unknown';
      /** Attempts abandoned while they ran (ARCHITECTURE.md#abandoned-attempts), not in the fields above. */
      abandonedCalls?: AbandonedCalls;
    }
  >;
}

export type SessionStatus = 'starting' | 'running' | 'waiting_for_approval' | 'waiting_for_input' | 'completed';

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  activeForm: string;
}

/** What a client sees of a running session: its status and settings, not its state. */
export interface SessionView {
  status: SessionStatus;
  exitReason?: string;
  model: string;
  permissionMode: PermissionMode;
  maxThinkingTokens: number | null;
  turnCount: number;
  pendingTools: { id: string; name: string }[];
  todos: TodoItem[];
  messageCount: number;
  /** Tool calls waiting for a person's answer. */
  pendingPermissions: PendingPermission[];
  /** Subagents started by `Task` (absent from workflows older than subagents). */
  subagents?: SubagentRecord[];
  /** Each MCP server's status (ARCHITECTURE.md#mcp); absent from sessions without servers. */
  mcpServers?: McpServerState[];
}

/** What the model activity reads instead of carrying messages in its input (ARCHITECTURE.md#transcript-by-reference). */
export interface PromptPage {
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  /** Index of the first message in `messages`. */
  start: number;
  /** Total number of messages the caller asked for (`upTo`). */
  total: number;
  /** The session's newest event when answered (absent from workflows older than live tokens). */
  lastSeq?: number;
}

export const usageQuery = defineQuery<SessionUsage>('usage');
export const turnCountQuery = defineQuery<number>('turnCount');
// Wire name `state` kept so clients of earlier releases still get an answer.
export const sessionViewQuery = defineQuery<SessionView>('state');
export const eventsQuery = defineQuery<EventsPage, [{ after?: number; limit?: number }?]>('events');
export const transcriptQuery = defineQuery<Message[], [{ start?: number; limit?: number }?]>('transcript');
/** The settings the run uses (rules, hook matchers, the files' digests; never hook commands): what a resume keeps while the files differ. */
export const settingsQuery = defineQuery<SessionSettings | null>('settings');
/** A session's checkpoints by turn, and its turn count across resumes (ARCHITECTURE.md#checkpoints). */
export const checkpointsQuery = defineQuery<import('./checkpoint').CheckpointsView>('checkpoints');
/** The turn (counted across resumes) a stream event's uuid belongs to, or null: `resumeSessionAt`. */
export const turnOfMessageQuery = defineQuery<number | null, [string]>('turnOfMessage');
/** Turn marks 1..N (across resumes): a fork's transcript ends at mark N's `end`. */
export const turnMarksQuery = defineQuery<import('./checkpoint').TurnMark[]>('turnMarks');
export const promptQuery = defineQuery<PromptPage, [{ upTo: number; start: number; maxBytes: number; withTools: boolean }]>('prompt');
