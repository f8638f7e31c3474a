/**
 * Subagents (ARCHITECTURE.md#subagents): the `Task` tool starts a child workflow — the same
 * `agentSession`, with the agent's prompt as its system prompt — whose final text is the tool
 * result. The child forwards its events to the parent's stream (`parent_tool_use_id` set) by
 * signal; its cost is added to the parent's; interrupt and cancel reach it through the turn's
 * cancellation scope.
 */
import {
  ChildWorkflowFailure,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { subagentEventsSignal, WORKFLOW_TYPE, type SubagentEventsBatch, type SubagentRecord } from '../../shared/api';
import type { AgentDefinition, SessionConfig, SessionOptions } from '../../shared/config';
import type { NewEvent, ResultMessage, SessionEvent } from '../../shared/events';
import { addUsage, type ToolResultBlock, type ToolUseBlock } from '../../shared/messages';
import type { ToolSpec } from '../../shared/tools';
import { fireHooks, type HookDeps } from './hooks';
import type { EventLog, LoopState } from './state';
import { addAbandonedCalls, emptyAbandonedCalls } from './abandoned-calls';
import {
  BUDGET_REFUSAL,
  SUBAGENT_SAID_NOTHING,
  subagentFailedText,
  subagentOverBudgetText,
  subagentStoppedText,
  subagentTooDeepText,
  unknownAgentTypeText,
} from '../../shared/model-texts';

export const TASK_TOOL = 'Task';

/** Claude Code's `Task` tool, listing each agent with its description. */
export function taskToolSpec(agents: Record<string, AgentDefinition>): ToolSpec {
  const list = Object.entries(agents)
    .map(([name, a]) => `- ${name}: ${a.description} (Tools: ${a.tools ? a.tools.join(', ') : '*'})`)
    .join('\n');
  return {
    name: TASK_TOOL,
    description:
      'Launch a new agent to handle a complex, multi-step task on its own. It starts with no memory of this conversation: ' +
      'give it everything it needs in `prompt`; its final message comes back as the result. Several Task calls in one ' +
      `message run at the same time.\n\nAvailable agent types (subagent_type):\n${list}`,
    inputSchema: {
      type: 'object',
      properties: {
        description: { type: 'string', description: 'A short (3-5 word) description of the task' },
        prompt: { type: 'string', description: 'The task for the agent to perform' },
        subagent_type: { type: 'string', description: 'The type of agent to use for this task' },
      },
      required: ['description', 'prompt', 'subagent_type'],
      additionalProperties: false,
    },
    // Not a mutation of its own: the child asks its own permissions. Several calls run at once.
    readOnly: true,
  };
}

/** Is `Task` listed to the model: the session has agents and does not disallow it. */
export function taskToolVisible(cfg: Pick<SessionConfig, 'agents' | 'disallowedTools'>): boolean {
  return Object.keys(cfg.agents ?? {}).length > 0 && !cfg.disallowedTools.some((r) => r.trim() === TASK_TOOL);
}

/** The child's workflow id: the parent's and the call's, so a retried turn never starts it twice. */
function subagentWorkflowId(parentId: string, toolUseId: string): string {
  return `${parentId}/task/${toolUseId}`;
}

/** The session's id as recorded in its options (= its workflow id), so a replay elsewhere issues the same commands. */
function recordedSessionId(state: LoopState): string {
  return state.config.sessionId ?? state.sessionId;
}

/** The agent's tools, never more than the parent's. */
function narrowTools(parent: string[] | undefined, agent: string[] | undefined): string[] | undefined {
  if (!agent) return parent;
  return parent ? agent.filter((t) => parent.includes(t) || t === TASK_TOOL) : agent;
}

/** A child session's options: the parent's settings, rules narrowed never widened, the agent's prompt, tools and model. */
function childOptions(
  state: LoopState,
  call: { id: string; prompt: string; agentType: string },
  def: AgentDefinition,
  remainingBudgetUsd: number | undefined,
): SessionOptions {
  const cfg = state.config;
  const tools = narrowTools(cfg.tools, def.tools);
  const noTask = def.tools !== undefined && !def.tools.includes(TASK_TOOL);
  return {
    prompt: call.prompt,
    model: def.model && def.model !== 'inherit' ? def.model : state.model,
    ...(cfg.fallbackModel ? { fallbackModel: cfg.fallbackModel } : {}),
    systemPrompt: def.prompt,
    ...(tools ? { tools } : {}),
    allowedTools: [...cfg.allowedTools, ...state.approvals.sessionAllowRules],
    disallowedTools: [...cfg.disallowedTools, ...(noTask ? [TASK_TOOL] : [])],
    askTools: cfg.askTools,
    cwd: cfg.cwd,
    additionalDirectories: cfg.additionalDirectories,
    permissionMode: state.permissionMode,
    env: cfg.env,
    ...(cfg.sandbox !== undefined ? { sandbox: cfg.sandbox } : {}),
    ...(state.maxThinkingTokens !== null ? { maxThinkingTokens: state.maxThinkingTokens } : {}),
    maxOutputTokens: cfg.maxOutputTokens,
    ...(remainingBudgetUsd !== undefined ? { maxBudgetUsd: remainingBudgetUsd } : {}),
    retry: cfg.retry,
    heartbeatTimeoutMs: cfg.heartbeatTimeoutMs,
    ...(cfg.permissionTimeoutMs !== undefined ? { permissionTimeoutMs: cfg.permissionTimeoutMs } : {}),
    hooks: cfg.hooks,
    // A subagent's callback hooks are answered by the same client: its requests join the parent's stream.
    ...(cfg.clientHooks ? { clientHooks: cfg.clientHooks } : {}),
    settingSources: cfg.settingSources,
    ...(cfg.settingsFile ? { settingsFile: cfg.settingsFile } : {}),
    maxStopHookContinuations: cfg.maxStopHookContinuations,
    ...(cfg.continueAsNewEveryTurns !== undefined ? { continueAsNewEveryTurns: cfg.continueAsNewEveryTurns } : {}),
    searchAttributes: cfg.searchAttributes,
    loopDetection: cfg.loopDetection,
    compaction: cfg.compaction,
    platform: cfg.platform,
    ...(cfg.startedAt ? { startedAt: cfg.startedAt } : {}),
    // A subagent works in its parent's folder, so on the host its parent is pinned to (ARCHITECTURE.md#workspaces).
    ...(state.files.workspace
      ? { toolsTaskQueue: state.files.workspace.hostQueue }
      : state.files.hostPin
        ? { toolsTaskQueue: state.files.hostPin.hostQueue }
        : cfg.toolsTaskQueue
          ? { toolsTaskQueue: cfg.toolsTaskQueue }
          : {}),
    ...(cfg.agents ? { agents: cfg.agents } : {}),
    maxSubagentDepth: cfg.maxSubagentDepth,
    // A child of a session started in one step starts the same way (ARCHITECTURE.md#session-start-in-one-step).
    ...(cfg.setupAtOnce ? { setupAtOnce: true } : {}),
    ...(cfg.setupInOneCall ? { setupInOneCall: true } : {}),
    subagent: {
      parentSessionId: recordedSessionId(state),
      parentToolUseId: call.id,
      agentType: call.agentType,
      depth: (cfg.subagent?.depth ?? 0) + 1,
    },
    sessionId: subagentWorkflowId(recordedSessionId(state), call.id),
  };
}

function errorResult(call: ToolUseBlock, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
}

/** Run one `Task` call as a child workflow; its failures are error results, never a failed parent. */
export async function runTask(deps: HookDeps, call: ToolUseBlock): Promise<ToolResultBlock> {
  const { state } = deps;
  const cfg = state.config;
  const input = call.input as { description: string; prompt: string; subagent_type: string };
  const agents = cfg.agents ?? {};
  const def = Object.prototype.hasOwnProperty.call(agents, input.subagent_type) ? agents[input.subagent_type] : undefined;
  if (!def) {
    return errorResult(call, unknownAgentTypeText(input.subagent_type, Object.keys(agents)));
  }
  const depth = (cfg.subagent?.depth ?? 0) + 1;
  if (depth > cfg.maxSubagentDepth) {
    return errorResult(call, subagentTooDeepText(cfg.maxSubagentDepth, depth - 1));
  }
  let remaining: number | undefined;
  if (cfg.maxBudgetUsd !== undefined) {
    remaining = cfg.maxBudgetUsd - state.spend.costUsd;
    if (remaining <= 0) return errorResult(call, BUDGET_REFUSAL);
  }
  const workflowId = subagentWorkflowId(recordedSessionId(state), call.id);
  const record: SubagentRecord = {
    toolUseId: call.id,
    agentType: input.subagent_type,
    description: input.description,
    workflowId,
    status: 'running',
    costUsd: 0,
  };
  (state.subagents ??= []).push(record);
  await fireHooks(deps, 'SubagentStart', input.subagent_type, { agent_id: workflowId, agent_type: input.subagent_type });

  let result: ResultMessage | undefined;
  let failure: string | undefined;
  try {
    const child = await startChild(WORKFLOW_TYPE, {
      workflowId,
      taskQueue: workflowInfo().taskQueue,
      args: [childOptions(state, { id: call.id, prompt: input.prompt, agentType: input.subagent_type }, def, remaining)],
      // The whole tree ends with its root: a parent closed any way cancels its running children.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
    result = (await child.result()) as ResultMessage;
  } catch (e) {
    if (isCancellation(e)) {
      record.status = 'cancelled';
      throw e;
    }
    if (e instanceof WorkflowExecutionAlreadyStartedError) failure = `a subagent with id ${workflowId} was already started`;
    else if (e instanceof ChildWorkflowFailure) failure = e.cause?.message ?? e.message;
    else throw e;
  }
  if (result) accountChild(state, record, result);
  // A cancelled child (its parent interrupted) still answers, with its `aborted` result and cost.
  record.status = !result ? 'failed' : result.exit_reason === 'aborted' ? 'cancelled' : result.is_error ? 'failed' : 'completed';
  await fireHooks(deps, 'SubagentStop', input.subagent_type, {
    agent_id: workflowId,
    agent_type: input.subagent_type,
    stop_hook_active: false,
  });
  if (!result) return errorResult(call, subagentFailedText(input.subagent_type, failure));
  if (record.stoppedForBudget && result.is_error) return errorResult(call, subagentOverBudgetText(cfg.maxBudgetUsd, result.result));
  if (!result.is_error) return { type: 'tool_result', tool_use_id: call.id, content: result.result || SUBAGENT_SAID_NOTHING };
  const why = 'errors' in result && result.errors?.length ? result.errors.join('\n') : result.subtype;
  return errorResult(call, subagentStoppedText(input.subagent_type, result.subtype, why, result.result));
}

/**
 * Siblings share what remained when they started: as their costs come in, once the parent's own
 * cost plus its running children's reaches its budget, every running child is asked to stop
 * (cancelled), so the tree stops near the budget rather than at one remainder per child.
 */
function watchTreeBudget(state: LoopState, batch: SubagentEventsBatch): void {
  const running = (state.subagents ?? []).filter((r) => r.status === 'running');
  const record = running.find((r) => r.toolUseId === batch.toolUseId);
  if (!record || batch.costUsd === undefined) return;
  record.costUsd = batch.costUsd;
  const max = state.config.maxBudgetUsd;
  if (max === undefined || state.spend.costUsd + running.reduce((sum, r) => sum + r.costUsd, 0) < max) return;
  for (const r of running) {
    if (r.stoppedForBudget) continue;
    r.stoppedForBudget = true;
    // A child that already ended has nothing to cancel.
    getExternalWorkflowHandle(r.workflowId)
      .cancel()
      .catch(() => undefined);
  }
}

/** A child's tokens and cost become the parent's: `usage`, `modelUsage`, `total_cost_usd`, and the budget. */
export function accountChild(state: LoopState, record: SubagentRecord, result: ResultMessage): void {
  record.costUsd = result.total_cost_usd;
  state.spend.costUsd += result.total_cost_usd;
  state.spend.apiDurationMs += result.duration_api_ms;
  addUsage(state.spend.usage, result.usage);
  for (const [model, m] of Object.entries(result.modelUsage)) {
    const mine = (state.spend.perModel[model] ??= {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      costUSD: 0,
      contextWindow: m.contextWindow,
      costBasis: m.costBasis === 'list' ? 'table' : 'unknown',
    });
    addUsage(mine, m);
    mine.costUSD += m.costUSD;
    if (m.abandonedCalls) addAbandonedCalls((mine.abandonedCalls ??= emptyAbandonedCalls()), m.abandonedCalls);
  }
}

/**
 * In a subagent: send every event to the parent's stream. Events emitted in one activation go
 * as one signal (a microtask later); signals are chained so they arrive in order. `drain` waits
 * for the last one, so the child's result never leaves before its events.
 */
export function forwardEventsToParent(
  log: EventLog,
  link: { parentSessionId: string; parentToolUseId: string },
  costUsd: () => number,
): () => Promise<void> {
  const parent = getExternalWorkflowHandle(link.parentSessionId);
  let buffer: SessionEvent[] = [];
  let chain: Promise<void> = Promise.resolve();
  log.onEmit = (e) => {
    if (buffer.length === 0) {
      chain = chain
        .then(() => Promise.resolve())
        .then(async () => {
          const events = buffer;
          buffer = [];
          await parent.signal(subagentEventsSignal, { toolUseId: link.parentToolUseId, events, costUsd: costUsd() });
        })
        // The parent is gone (cancelled, terminated): the child's own log still has everything.
        .catch(() => undefined);
    }
    buffer.push(e);
  };
  return () => chain;
}

/** In a parent: a child's events join the stream, marked with the Task call that started them. */
export function acceptSubagentEvents(state: LoopState, log: EventLog, batch: SubagentEventsBatch): void {
  watchTreeBudget(state, batch);
  for (const e of batch.events) {
    // A child's result is the Task call's tool result; a grandchild's events keep their own parent id.
    if (e.type === 'result') continue;
    const { uuid: _u, session_id: _s, seq: _q, ...rest } = e as SessionEvent & { parent_tool_use_id?: string | null };
    const parentId = (rest as { parent_tool_use_id?: string | null }).parent_tool_use_id ?? batch.toolUseId;
    log.emit({ ...rest, parent_tool_use_id: parentId } as NewEvent);
  }
}
