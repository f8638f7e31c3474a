/**
 * `agentSession`: one coding-agent session as a workflow. A thin interpreter over the pure
 * decisions in ./decide — every effect is an activity, every piece of conversation content is
 * recorded in history once (the model's reply as the `callModel` result, a tool's output as the
 * `runTool` result), and the model activity reads its prompt through the `prompt` query (D1).
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import * as api from '../shared/api';
import { ConfigError, parseSessionConfig, PermissionMode, type SessionOptions } from '../shared/config';
import type { ModelActivities, ToolActivities } from '../shared/activities';
import { NON_RETRYABLE_MODEL_ERRORS } from '../shared/activities';
import type { ResultMessage } from '../shared/events';
import type { AssistantReply, Message, ToolResultBlock, ToolUseBlock } from '../shared/messages';
import type { ToolSpec } from '../shared/tools';
import { buildSystemPrompt } from '../shared/system-prompt';
import { todoWriteSpec } from '../shared/todo';
import { checkTermination, discardTruncatedToolCalls, resolveReply, visibleTools, type ExitReason } from './decide';
import { accountReply, buildResult, EventLog, initialState, usageView, type LoopState } from './state';
import { dispatchToolCalls, INTERRUPTED_RESULT } from './tools';

const QUERY_PAGE_BYTES = 2 * 1024 * 1024; // stay well under the 4 MiB gRPC limit

export async function agentSession(options: SessionOptions): Promise<ResultMessage> {
  const config = validate(options);
  const info = workflowInfo();
  const state = initialState(config, info.workflowId, Date.now());
  const log = new EventLog(state, uuid4);
  const session = new Session(state, log, info.runId);
  session.installHandlers();
  return session.run();
}

function validate(options: SessionOptions) {
  try {
    return parseSessionConfig(options);
  } catch (e) {
    if (e instanceof ConfigError) throw ApplicationFailure.nonRetryable(e.message, 'InvalidConfig');
    throw e;
  }
}

class Session {
  private turnScope: CancellationScope | undefined;
  private status: api.SessionStatus = 'starting';
  private exitReason: ExitReason | undefined;
  private systemPrompt = '';
  private tools: ToolSpec[] = [];
  private readonly pending: { id: string; name: string }[] = [];
  private readonly errors: string[] = [];
  private stopReason: ResultMessage['stop_reason'] = null;
  private readonly modelActs: ModelActivities;
  private readonly toolActs: ToolActivities;

  constructor(
    private readonly state: LoopState,
    private readonly log: EventLog,
    private readonly runId: string,
  ) {
    const cfg = state.config;
    const heartbeatTimeout = cfg.heartbeatTimeoutMs;
    const queues = api.taskQueuesFor(workflowInfo().taskQueue, cfg.toolsTaskQueue);
    this.modelActs = proxyActivities<ModelActivities>({
      taskQueue: queues.model,
      startToCloseTimeout: '15 minutes',
      heartbeatTimeout,
      // Interrupt must not wait for a hung provider: the turn ends at once, the activity hears
      // the cancellation on its next heartbeat.
      cancellationType: ActivityCancellationType.TRY_CANCEL,
      retry: {
        maximumAttempts: cfg.retry.maxAttempts,
        initialInterval: cfg.retry.initialIntervalMs,
        maximumInterval: cfg.retry.maximumIntervalMs,
        backoffCoefficient: 2,
        nonRetryableErrorTypes: [...NON_RETRYABLE_MODEL_ERRORS],
      },
    });
    this.toolActs = proxyActivities<ToolActivities>({
      taskQueue: queues.tools,
      // Bash allows 10 minutes per command; leave room for the kill and the report.
      startToCloseTimeout: '12 minutes',
      heartbeatTimeout,
      // An interrupted Bash command is confirmed dead before the turn's results are written.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { maximumAttempts: 3, initialInterval: '1s', nonRetryableErrorTypes: ['ToolConfigError'] },
    });
  }

  installHandlers(): void {
    const { state, log } = this;
    setHandler(api.interruptSignal, () => {
      state.interrupted = true;
      this.turnScope?.cancel();
    });
    setHandler(api.setModelSignal, (model) => {
      if (typeof model !== 'string' || model.length === 0) {
        log.emit({ type: 'system', subtype: 'warning', message: `setModel ignored: invalid model ${JSON.stringify(model)}` });
        return;
      }
      if (model === state.model) return;
      log.emit({ type: 'system', subtype: 'model_changed', model, previous_model: state.model, reason: 'set_model' });
      state.model = model;
    });
    setHandler(api.setPermissionModeSignal, (mode) => {
      const parsed = PermissionMode.safeParse(mode);
      if (!parsed.success) {
        log.emit({ type: 'system', subtype: 'warning', message: `setPermissionMode ignored: unknown mode ${JSON.stringify(mode)}` });
        return;
      }
      state.permissionMode = parsed.data;
    });
    setHandler(api.setMaxThinkingTokensSignal, (tokens) => {
      state.maxThinkingTokens = typeof tokens === 'number' && tokens >= 0 ? tokens : null;
    });
    setHandler(api.apiRetrySignal, (n) => {
      log.emit({
        type: 'system',
        subtype: 'api_retry',
        attempt: n.attempt,
        max_retries: n.maxRetries,
        retry_delay_ms: n.retryDelayMs,
        error_status: n.errorStatus,
        error: n.error,
      });
    });
    setHandler(api.usageQuery, () => usageView(state));
    setHandler(api.turnCountQuery, () => state.turnCount);
    setHandler(api.stateQuery, () => ({
      status: this.status,
      exitReason: this.exitReason,
      model: state.model,
      permissionMode: state.permissionMode,
      maxThinkingTokens: state.maxThinkingTokens,
      turnCount: state.turnCount,
      pendingTools: [...this.pending],
      todos: state.todos,
      messageCount: state.messages.length,
    }));
    setHandler(api.eventsQuery, (opts) => {
      const events = byteBoundedPage(log.page(opts?.after, opts?.limit ?? 1000));
      const last = events.length ? events[events.length - 1]!.seq : (opts?.after ?? -1);
      return { events, nextSeq: last, done: this.status === 'completed' && last >= state.nextSeq - 1 };
    });
    setHandler(api.transcriptQuery, (opts) => {
      const start = opts?.start ?? 0;
      return byteBoundedPage(state.messages.slice(start, start + (opts?.limit ?? state.messages.length)));
    });
    setHandler(api.promptQuery, ({ upTo, start, maxBytes, withTools }) => ({
      system: this.systemPrompt,
      tools: withTools ? this.tools : [],
      messages: byteBoundedPage(state.messages.slice(start, upTo), Math.min(maxBytes, QUERY_PAGE_BYTES)),
      start,
      total: upTo,
    }));
  }

  async run(): Promise<ResultMessage> {
    const { state, log } = this;
    let exit: ExitReason;
    try {
      const all = await this.toolActs.listTools();
      const cfg = state.config;
      this.tools = visibleTools([...all, todoWriteSpec], cfg);
      this.systemPrompt = buildSystemPrompt(cfg, {
        cwd: cfg.cwd,
        additionalDirectories: cfg.additionalDirectories,
        platform: cfg.platform,
        date: new Date(state.startedAtMs).toISOString().slice(0, 10),
        toolNames: this.tools.map((t) => t.name),
      });
      this.status = 'running';
      log.emit({
        type: 'system',
        subtype: 'init',
        cwd: cfg.cwd,
        tools: this.tools.map((t) => t.name),
        model: state.model,
        permissionMode: state.permissionMode,
        mcp_servers: [],
      });
      exit = await this.loop();
    } catch (e) {
      if (!isCancellation(e)) throw e;
      exit = state.interrupted ? 'interrupted' : 'aborted';
    }
    this.exitReason = exit;
    if (exit === 'interrupted') this.errors.push('The session was interrupted.');
    if (exit === 'aborted') this.errors.push('The session was cancelled.');
    if (exit === 'max_tokens') this.errors.push('The model hit its output token limit (max_tokens).');
    if (exit === 'stop_sequence') this.errors.push('The model stopped at a stop sequence.');
    if (exit === 'max_turns') this.errors.push(`Reached the maximum number of turns (${state.config.maxTurns}).`);
    if (exit === 'max_budget') this.errors.push(`Reached the maximum budget ($${state.config.maxBudgetUsd}).`);
    const result = log.emit(
      buildResult(state, { exit, nowMs: Date.now(), stopReason: this.stopReason, errors: this.errors }),
    ) as ResultMessage;
    this.status = 'completed';
    return result;
  }

  private async loop(): Promise<ExitReason> {
    const { state, log } = this;
    for (;;) {
      const stop = checkTermination({
        turnCount: state.turnCount,
        costUsd: state.costUsd,
        interrupted: state.interrupted,
        cancelled: CancellationScope.current().consideredCancelled,
        maxTurns: state.config.maxTurns,
        maxBudgetUsd: state.config.maxBudgetUsd,
      });
      if (stop) return stop;

      let reply: AssistantReply;
      try {
        reply = await this.inTurn(() => this.callModel());
      } catch (e) {
        if (isCancellation(e)) return state.interrupted ? 'interrupted' : 'aborted';
        if (e instanceof ActivityFailure) {
          this.errors.push(describeModelFailure(e));
          return 'model_error';
        }
        throw e;
      }
      const content = reply.stop_reason === 'max_tokens' ? discardTruncatedToolCalls(reply.content) : reply.content;
      state.messages.push({ role: 'assistant', content });
      state.turnCount++;
      accountReply(state, reply);
      this.stopReason = reply.stop_reason;
      this.warnIfUnpriced(reply);
      log.emit({
        type: 'assistant',
        message: {
          id: reply.id,
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content,
          stop_reason: reply.stop_reason,
          usage: reply.usage,
        },
        parent_tool_use_id: null,
      });

      const step = resolveReply({ stop_reason: reply.stop_reason, content });
      if (step.type === 'finish') return step.exit;

      // Budget is checked after every response, before its tools run (seed 000 §9).
      const overBudget = state.config.maxBudgetUsd !== undefined && state.costUsd >= state.config.maxBudgetUsd;
      const results: Record<string, ToolResultBlock> = {};
      if (!overBudget) {
        try {
          await this.inTurn(() =>
            dispatchToolCalls(
              { state, log, specs: this.tools, runTool: (i) => this.toolActs.runTool(i), now: () => Date.now() },
              step.calls,
              results,
              this.pending,
            ),
          );
        } catch (e) {
          if (!isCancellation(e)) throw e;
        }
      }
      const unanswered = overBudget
        ? 'Not run: the session reached its maximum budget.'
        : INTERRUPTED_RESULT;
      this.appendToolResults(step.calls.map((c) => results[c.id] ?? errorBlock(c, unanswered)));
      if (overBudget) return 'max_budget';
      if (state.interrupted) return 'interrupted';
      if (CancellationScope.current().consideredCancelled) return 'aborted';
    }
  }

  /** Every tool_use gets a tool_result, in call order, in one user message. */
  private appendToolResults(blocks: ToolResultBlock[]): void {
    const message: Message = { role: 'user', content: blocks };
    this.state.messages.push(message);
    this.log.emit({ type: 'user', message: { role: 'user', content: blocks }, parent_tool_use_id: null });
  }

  /** Run one part of a turn in a scope `interrupt` can cancel without ending the workflow. */
  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    return CancellationScope.cancellable(async () => {
      this.turnScope = CancellationScope.current();
      if (this.state.interrupted) this.turnScope.cancel();
      return fn();
    });
  }

  private async callModel(): Promise<AssistantReply> {
    const { state, log } = this;
    const call = (model: string) =>
      this.modelActs.callModel({
        sessionId: state.sessionId,
        runId: this.runId,
        upTo: state.messages.length,
        model,
        maxOutputTokens: state.config.maxOutputTokens,
        maxThinkingTokens: state.maxThinkingTokens,
        withTools: true,
        maxAttempts: state.config.retry.maxAttempts,
        initialIntervalMs: state.config.retry.initialIntervalMs,
        maximumIntervalMs: state.config.retry.maximumIntervalMs,
        includePartialMessages: state.config.includePartialMessages,
      });
    try {
      return await call(state.model);
    } catch (e) {
      const fallback = state.config.fallbackModel;
      if (!fallback || fallback === state.model || !retriesExhausted(e)) throw e;
      this.errors.push(`${state.model}: ${describeModelFailure(e as ActivityFailure)}`);
      log.emit({ type: 'system', subtype: 'model_changed', model: fallback, previous_model: state.model, reason: 'fallback' });
      state.model = fallback;
      return await call(fallback);
    }
  }

  private warnIfUnpriced(reply: AssistantReply): void {
    if (reply.costBasis !== 'unknown' || this.state.warnedModels.includes(reply.model)) return;
    this.state.warnedModels.push(reply.model);
    this.log.emit({
      type: 'system',
      subtype: 'warning',
      message: `No price is known for model ${reply.model}: its cost is counted as $0 (costBasis 'unknown'). Add it to the worker's pricing file.`,
    });
  }
}

function errorBlock(call: ToolUseBlock, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
}

function retriesExhausted(e: unknown): boolean {
  return (
    e instanceof ActivityFailure &&
    (e.retryState === 'MAXIMUM_ATTEMPTS_REACHED' || e.retryState === 'TIMEOUT')
  );
}

function describeModelFailure(e: ActivityFailure): string {
  const cause = e.cause;
  if (cause instanceof ApplicationFailure) {
    return `Model request failed (${cause.type ?? 'error'}): ${cause.message}`;
  }
  return `Model request failed: ${cause?.message ?? e.message}`;
}

/** Trim a page so its JSON stays under `maxBytes` (always at least one item). */
function byteBoundedPage<T>(items: T[], maxBytes = QUERY_PAGE_BYTES): T[] {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += JSON.stringify(items[i]).length;
    if (bytes > maxBytes && i > 0) return items.slice(0, i);
  }
  return items;
}
