/**
 * `agentSession`: one coding-agent session as a workflow. A thin interpreter over the pure
 * decisions in ./decide — every effect is an activity, every piece of conversation content is
 * recorded in history once (the model's reply as the `callModel` result, a tool's output as the
 * `runTool` result, a user message as its update/signal), and the model activity reads its
 * prompt through the `prompt` query (DESIGN D1). Long sessions continue-as-new between turns,
 * carrying one JSON-safe state (D7).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  allHandlersFinished,
  isCancellation,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { ConfigError, parseSessionConfig, type SessionConfig, type SessionOptions } from '../shared/config';
import type { ResultMessage } from '../shared/events';
import type { AssistantReply, ToolResultBlock } from '../shared/messages';
import { buildSystemPrompt } from '../shared/system-prompt';
import { todoWriteSpec } from '../shared/todo';
import { DONE_REMINDER, FINAL_SUMMARY_PROMPT, taskCompleteSpec } from '../shared/done-tool';
import { checkTermination, discardTruncatedToolCalls, resolveReply, visibleTools, type ExitReason } from './decide';
import { activitiesFor, describeModelFailure, retriesExhausted, type SessionActivities } from './activities';
import { installHandlers, type SessionControl } from './handlers';
import { indexSession } from './search-attributes';
import { accountReply, buildResult, EventLog, initialState, type CarriedState, type LoopState } from './state';
import { dispatchToolCalls, INTERRUPTED_RESULT } from './tools';
import { checkForLoop, compact, compactionSettings, currentContextTokens, manageContext } from './context-management';
import { shouldCompact } from './context';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../shared/payload';
import { trimOldToolResults } from './trim';

const CUT_OFF_NOTICE = 'Your previous response was cut off at the output token limit. Continue from where it stopped, in smaller steps.';

/** Events a new run keeps so a slow reader can catch up across continue-as-new. */
const CARRIED_EVENTS = { count: 500, bytes: 256 * 1024 };

export async function agentSession(options: SessionOptions, carried?: CarriedState): Promise<ResultMessage> {
  const info = workflowInfo();
  const state = carried?.state ?? initialState(validate(options), info.workflowId, Date.now());
  const log = new EventLog(state, uuid4, carried?.recentEvents);
  const session = new Session(state, log, info.runId, activitiesFor(state.config, info.taskQueue));
  installHandlers(session);
  return session.run(Boolean(carried));
}

function validate(options: SessionOptions): SessionConfig {
  try {
    return parseSessionConfig(options);
  } catch (e) {
    if (e instanceof ConfigError) throw ApplicationFailure.nonRetryable(e.message, 'InvalidConfig');
    throw e;
  }
}

class Session implements SessionControl {
  turnScope: CancellationScope | undefined;
  status: SessionControl['status'] = 'starting';
  exitReason: ExitReason | undefined;
  readonly pending: { id: string; name: string }[] = [];
  private errors: string[] = [];
  private stopReason: ResultMessage['stop_reason'] = null;
  private doneMessage: string | undefined;
  private turnsThisRun = 0;

  constructor(
    readonly state: LoopState,
    readonly log: EventLog,
    readonly runId: string,
    private readonly acts: SessionActivities,
  ) {}

  async run(resumed: boolean): Promise<ResultMessage> {
    const { state } = this;
    if (!resumed) {
      try {
        await this.setUp();
      } catch (e) {
        if (isCancellation(e)) return this.finish('aborted');
        if (!(e instanceof ActivityFailure)) throw e;
        this.errors.push(`The session could not start: ${e.cause?.message ?? e.message}`);
        return this.finish('setup_error');
      }
    }
    for (;;) {
      if (state.awaitingInput) {
        this.setStatus('waiting_for_input');
        if (!(await this.waitForInput())) {
          this.setStatus('completed');
          return state.lastResult ?? this.finish('end_turn');
        }
      }
      this.setStatus('running');
      const exit = await this.runTurn();
      const result = this.finish(exit);
      const terminal = exit === 'max_turns' || exit === 'max_budget' || exit === 'aborted' || exit === 'setup_error';
      if (!state.config.interactive || terminal || state.closed) return result;
      state.awaitingInput = true;
    }
  }

  private async setUp(): Promise<void> {
    const { state } = this;
    const cfg = state.config;
    if (cfg.resume) {
      const loaded = await this.acts.store.loadTranscript({ sessionId: cfg.resume, excludeRunId: this.runId });
      state.messages = [...loaded.messages, ...state.messages];
    }
    const all = await this.acts.tools.listTools();
    const extra = [todoWriteSpec, ...(cfg.requireDoneTool ? [taskCompleteSpec] : [])];
    state.tools = visibleTools([...all, ...extra], cfg);
    state.systemPrompt = buildSystemPrompt(cfg, {
      cwd: cfg.cwd,
      additionalDirectories: cfg.additionalDirectories,
      platform: cfg.platform,
      date: new Date(state.startedAtMs).toISOString().slice(0, 10),
      toolNames: state.tools.map((t) => t.name),
    });
    this.emitInit();
    if (cfg.includePartialMessages) {
      // Per-token events would have to pass through history (DESIGN D6 forbids it); until a
      // side channel exists, say so rather than silently ignore the option.
      this.log.emit({
        type: 'system',
        subtype: 'warning',
        message: 'includePartialMessages is not supported yet: assistant messages arrive whole, once each model call completes.',
      });
    }
  }

  private emitInit(): void {
    const { state } = this;
    this.log.emit({
      type: 'system',
      subtype: 'init',
      cwd: state.config.cwd,
      tools: state.tools.map((t) => t.name),
      model: state.model,
      permissionMode: state.permissionMode,
      mcp_servers: [],
    });
  }

  /** Interactive sessions: wait for a follow-up, `close`, or the idle timeout. */
  private async waitForInput(): Promise<boolean> {
    const { state } = this;
    for (;;) {
      const woke = await condition(
        () => state.inbox.length > 0 || state.closed || this.shouldContinueAsNew(),
        state.config.idleTimeoutMs,
      );
      if (!woke || (state.closed && state.inbox.length === 0)) return false;
      if (state.inbox.length > 0) break;
      await this.continueAsNewIfDue();
    }
    const inputs = state.inbox.splice(0, state.inbox.length);
    const text = inputs.map((i) => i.text).join('\n\n');
    state.messages.push({ role: 'user', content: text });
    state.awaitingInput = false;
    state.interrupted = false;
    this.errors = [];
    this.doneMessage = undefined;
    this.emitInit();
    this.log.emit({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null });
    return true;
  }

  /** The agent loop for one user turn: model → tools → … until a finish reason. */
  private async runTurn(): Promise<ExitReason> {
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
      if (stop === 'max_turns' && state.config.finalSummary) await this.finalSummary();
      if (stop) return stop;
      await this.continueAsNewIfDue();
      try {
        await this.inTurn(() => manageContext(this.contextDeps()));
      } catch (e) {
        if (isCancellation(e)) return state.interrupted ? 'interrupted' : 'aborted';
        if (!(e instanceof ActivityFailure)) throw e;
        log.emit({ type: 'system', subtype: 'warning', message: `Compaction failed; continuing without it: ${describeModelFailure(e)}` });
      }
      this.flushNotices();

      let reply: AssistantReply;
      try {
        reply = await this.inTurn(() => this.callModelCompactingOnOverflow());
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
      this.turnsThisRun++;
      accountReply(state, reply);
      state.lastPromptTokens = reply.usage.input_tokens + reply.usage.cache_read_input_tokens + reply.usage.cache_creation_input_tokens;
      state.lastPromptMessageCount = state.messages.length - 1;
      this.stopReason = reply.stop_reason;
      this.warnIfUnpriced(reply);
      log.emit({
        type: 'assistant',
        message: { id: reply.id, type: 'message', role: 'assistant', model: reply.model, content, stop_reason: reply.stop_reason, usage: reply.usage },
        parent_tool_use_id: null,
      });
      indexSession(state, 'running');

      const step = resolveReply({ stop_reason: reply.stop_reason, content });
      if (step.type === 'finish' && step.exit === 'max_tokens' && (await this.compactAfterCutOff())) continue;
      if (step.type === 'finish') {
        if (step.exit === 'end_turn' && state.config.requireDoneTool) {
          state.pendingNotices.push(DONE_REMINDER);
          continue;
        }
        return step.exit;
      }

      // Budget is checked after every response, before its tools run (seed 000 §9).
      const overBudget = state.config.maxBudgetUsd !== undefined && state.costUsd >= state.config.maxBudgetUsd;
      const results: Record<string, ToolResultBlock> = {};
      if (!overBudget) {
        try {
          await this.inTurn(() =>
            dispatchToolCalls(
              {
                state,
                log,
                specs: state.tools,
                runTool: (i) => this.acts.tools.runTool(i),
                now: () => Date.now(),
                onDone: (m) => (this.doneMessage = m),
              },
              step.calls,
              results,
              this.pending,
            ),
          );
        } catch (e) {
          if (!isCancellation(e)) throw e;
        }
      }
      const unanswered = overBudget ? 'Not run: the session reached its maximum budget.' : INTERRUPTED_RESULT;
      const blocks = step.calls.map((c) => results[c.id] ?? { type: 'tool_result' as const, tool_use_id: c.id, content: unanswered, is_error: true });
      state.messages.push({ role: 'user', content: blocks });
      log.emit({ type: 'user', message: { role: 'user', content: blocks }, parent_tool_use_id: null });
      checkForLoop(state, log, step.calls);
      if (overBudget) return 'max_budget';
      if (state.interrupted) return 'interrupted';
      if (CancellationScope.current().consideredCancelled) return 'aborted';
      if (this.doneMessage !== undefined) return 'end_turn';
    }
  }

  /** Notices (loop warnings, done-tool reminders) reach the model as a user message. */
  private flushNotices(): void {
    const { state } = this;
    if (state.pendingNotices.length === 0) return;
    const text = state.pendingNotices.splice(0).join('\n\n');
    const last = state.messages[state.messages.length - 1]!;
    if (last.role === 'user' && Array.isArray(last.content)) last.content.push({ type: 'text', text });
    else state.messages.push({ role: 'user', content: text });
  }

  private async finalSummary(): Promise<void> {
    try {
      const reply = await this.inTurn(() => this.callModel(false, FINAL_SUMMARY_PROMPT));
      accountReply(this.state, reply);
      this.doneMessage = reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    } catch (e) {
      if (isCancellation(e)) throw e;
      this.errors.push(`The final summary could not be written: ${e instanceof ActivityFailure ? describeModelFailure(e) : String(e)}`);
    }
  }

  /** Run one part of a turn in a scope `interrupt` can cancel without ending the workflow. */
  inTurn<T>(fn: () => Promise<T>): Promise<T> {
    return CancellationScope.cancellable(async () => {
      this.turnScope = CancellationScope.current();
      if (this.state.interrupted) this.turnScope.cancel();
      return fn();
    });
  }

  private async callModel(withTools: boolean, appendUserText?: string): Promise<AssistantReply> {
    const { state, log } = this;
    const call = (model: string) =>
      this.acts.model.callModel({
        sessionId: state.sessionId,
        runId: this.runId,
        upTo: state.messages.length,
        model,
        maxOutputTokens: state.config.maxOutputTokens,
        maxThinkingTokens: state.maxThinkingTokens,
        withTools,
        ...(appendUserText ? { appendUserText } : {}),
        maxAttempts: state.config.retry.maxAttempts,
        initialIntervalMs: state.config.retry.initialIntervalMs,
        maximumIntervalMs: state.config.retry.maximumIntervalMs,
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

  private contextDeps() {
    return { state: this.state, log: this.log, runId: this.runId, model: this.acts.model };
  }

  /** Reactive compaction: a provider's context overflow is answered by compacting and retrying once. */
  private async callModelCompactingOnOverflow(): Promise<AssistantReply> {
    try {
      return await this.callModel(true);
    } catch (e) {
      const overflow = e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'ContextOverflow';
      if (!overflow || !this.state.config.compaction.enabled) throw e;
      const settings = compactionSettings(this.state);
      if (!(await compact(this.contextDeps(), settings, 'auto', Math.floor(settings.contextWindow / 8)))) throw e;
      this.flushNotices();
      return await this.callModel(true);
    }
  }

  /** On max_tokens, compact and carry on when the context is what ran out (seed 002). */
  private async compactAfterCutOff(): Promise<boolean> {
    const { state } = this;
    const settings = compactionSettings(state);
    if (!settings.enabled || !shouldCompact(currentContextTokens(state), settings.contextWindow, settings.threshold)) return false;
    try {
      if (!(await this.inTurn(() => compact(this.contextDeps(), settings, 'auto')))) return false;
    } catch (e) {
      if (isCancellation(e) || !(e instanceof ActivityFailure)) throw e;
      return false;
    }
    state.pendingNotices.push(CUT_OFF_NOTICE);
    return true;
  }

  private shouldContinueAsNew(): boolean {
    const every = this.state.config.continueAsNewEveryTurns;
    return workflowInfo().continueAsNewSuggested || (every !== undefined && this.turnsThisRun >= every);
  }

  /** Between turns only: never while a handler runs, never mid-tool (D7). */
  private async continueAsNewIfDue(): Promise<void> {
    if (!this.shouldContinueAsNew()) return;
    await condition(allHandlersFinished);
    const { state } = this;
    // Payload guard (D7): the carried state must fit in one payload. Shed old tool output first,
    // then summarize; the event tail goes last (readers can still page the transcript).
    if (jsonBytes(state) > MAX_PAYLOAD_BYTES) state.messages = trimOldToolResults(state.messages, { budgetChars: 1, keepRecent: 1 }).messages;
    if (jsonBytes(state) > MAX_PAYLOAD_BYTES) await compact(this.contextDeps(), compactionSettings(state), 'auto');
    const events = this.log.tail(CARRIED_EVENTS.count, CARRIED_EVENTS.bytes);
    const carried: CarriedState = { state, recentEvents: jsonBytes(state) + jsonBytes(events) > MAX_PAYLOAD_BYTES ? [] : events };
    await continueAsNew<typeof agentSession>(this.state.config, carried);
  }

  private finish(exit: ExitReason): ResultMessage {
    const { state } = this;
    this.exitReason = exit;
    const why: Partial<Record<ExitReason, string>> = {
      interrupted: 'The session was interrupted.',
      aborted: 'The session was cancelled.',
      max_tokens: 'The model hit its output token limit (max_tokens).',
      stop_sequence: 'The model stopped at a stop sequence.',
      max_turns: `Reached the maximum number of turns (${state.config.maxTurns}).`,
      max_budget: `Reached the maximum budget ($${state.config.maxBudgetUsd}).`,
    };
    if (why[exit]) this.errors.push(why[exit]!);
    const result = this.log.emit(
      buildResult(state, { exit, nowMs: Date.now(), stopReason: this.stopReason, errors: this.errors, resultText: this.doneMessage }),
    ) as ResultMessage;
    state.lastResult = result;
    this.setStatus(state.config.interactive && !['max_turns', 'max_budget', 'aborted', 'setup_error'].includes(exit) && !state.closed ? 'waiting_for_input' : 'completed');
    return result;
  }

  private setStatus(status: SessionControl['status']): void {
    this.status = status;
    // `failed` exists only as a search attribute, so `ls --status failed` finds error results.
    indexSession(this.state, status === 'completed' && this.state.lastResult?.is_error ? 'failed' : status);
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
