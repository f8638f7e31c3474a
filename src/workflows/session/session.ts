/**
 * `agentSession`: one coding-agent session as a workflow. A thin interpreter over the pure
 * decisions in ./turn — every effect is an activity, every piece of conversation content is
 * recorded in history once (the model's reply as the `callModel` result, a tool's output as the
 * `runTool` result, a user message as its update/signal), and the model activity reads its
 * prompt through the `prompt` query (ARCHITECTURE.md#transcript-by-reference). Long sessions
 * continue-as-new between model calls, carrying one JSON-safe state
 * (ARCHITECTURE.md#continue-as-new).
 *
 * Past 300 lines because it is the one place the steps are sequenced; each step's logic lives in
 * a sibling (turn, model-calls, tool-dispatch, permission-gate, hooks, context/, user-input,
 * continue-as-new, session-start).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { ConfigError, parseSessionConfig, type SessionConfig, type SessionOptions } from '../../shared/config';
import type { ResultMessage } from '../../shared/events';
import { verifySpec, type WorkspaceReport } from '../../shared/workspace';
import type { AssistantReply, ToolResultBlock, ToolUseBlock } from '../../shared/messages';
import { sdkApiMessage } from '../../shared/sdk-shapes';
import { afterTools, beforeModelCall, endsSession, exitNote, resolveTurn, unhandledStep, type ExitReason } from './turn';
import { hasSteers, takeFollowUps, takeSteers } from './user-input';
import { discardTruncatedToolCalls } from './tool-calls';
import { activitiesFor, describeModelFailure, type SessionActivities } from './activity-stubs';
import { callModelCompactingOnOverflow, warnIfUnpriced, writeFinalSummary, type ModelCallDeps } from './model-calls';
import { emitInit, startSession, submitPrompt } from './session-start';
import { fireHooks } from './hooks';
import { installHandlers, type SessionControl } from './handlers';
import { upsertSessionSearchAttributes } from './search-attributes';
import {
  accountReply,
  buildResult,
  EventLog,
  initialState,
  migrateCarriedState,
  newTurnRecord,
  sessionTurn,
  workspaceFields,
  type WorkspaceState,
  type CarriedState,
  type LoopState,
} from './state';
import { dispatchToolCalls } from './tool-dispatch';
import * as context from './context/index';
import { promptTokensOf } from './context/token-accounting';
import { continueAsNewDue, continueAsNewNow } from './continue-as-new';
import { forwardEventsToParent } from './subagents';
import { batchSpendReporter } from './batch-spend';
import {
  hostLostFailure,
  hostTimeout,
  isHostLostFailure,
  lastRestorable,
  onLiveHost,
  POLLER_FRESH_MS,
  startCheckpoints,
  takeCheckpoint,
  turnChangesWorkspace,
} from './checkpoints';
import { DONE_REMINDER, INTERRUPTED_RESULT, outputRetryNotice, restoredNote } from '../../shared/model-texts';

export async function agentSession(options: SessionOptions, carried?: CarriedState): Promise<ResultMessage> {
  const info = workflowInfo();
  if (carried) carried = migrateCarriedState(carried);
  const state = carried?.state ?? initialState(validate(options), info.workflowId, Date.now());
  const log = new EventLog(state, uuid4, carried?.recentEvents);
  // A subagent's events also go to its parent's stream (ARCHITECTURE.md#subagents).
  const forwarded = state.config.subagent ? forwardEventsToParent(log, state.config.subagent, () => state.spend.costUsd) : undefined;
  const session = new Session(state, log, info.runId, activitiesFor(state.config, info.taskQueue, pinnedQueue(state)));
  installHandlers(session);
  try {
    return await session.run(Boolean(carried));
  } finally {
    // Continue-as-new and the result both wait for the last batch to be sent.
    await forwarded?.();
  }
}

/** The queue of the tools host the session's folder is on, once it has one. */
function pinnedQueue(state: LoopState): string | undefined {
  return state.files.workspace?.hostQueue ?? state.files.hostPin?.hostQueue;
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
  /** Counts toward `continueAsNewEveryTurns`; starts again on every run by design. */
  private turnsThisRun = 0;
  /** A batch job's spend goes to its coordinator as it grows (ARCHITECTURE.md#batch-budget). */
  private readonly reportSpend: ((costUsd: number) => void) | undefined;
  /** The activities as proxied; `acts` is the same with host loss handled (ARCHITECTURE.md#checkpoints). */
  private raw!: SessionActivities;
  private acts!: SessionActivities;
  /** One restore at a time: parallel calls that find the host gone wait for the same one. */
  private restoring: Promise<void> | undefined;

  constructor(
    readonly state: LoopState,
    readonly log: EventLog,
    readonly runId: string,
    acts: SessionActivities,
  ) {
    this.reportSpend = batchSpendReporter(state.config);
    this.setActivities(acts);
  }

  private setActivities(raw: SessionActivities): void {
    this.raw = raw;
    this.acts = onLiveHost(
      () => this.raw,
      (fn) => this.onHost(fn),
    );
  }

  async run(resumed: boolean): Promise<ResultMessage> {
    const { state } = this;
    if (!resumed) {
      try {
        startCheckpoints(state);
        await this.makeWorkspace();
        await startSession({
          state,
          log: this.log,
          runId: this.runId,
          tools: this.acts.tools,
          mcp: this.acts.mcp,
          store: this.acts.store,
          hooks: this.acts.hooks,
          setup: this.acts.setup,
        });
        // Checkpoint 0: the folder as the session found it.
        await takeCheckpoint(state, this.log, (i) => this.acts.workspace.checkpointWorkspace(i));
      } catch (e) {
        if (isCancellation(e)) return this.finish('aborted');
        if (isHostLostFailure(e)) return this.hostLost(e);
        // An activity failed (no such session to resume, a bad settings file), or the settings forbid the mode.
        const why =
          e instanceof ActivityFailure ? (e.cause?.message ?? e.message) : e instanceof ApplicationFailure ? e.message : undefined;
        if (why === undefined) throw e;
        // A workspace that could not be made says so first: a batch reports it as a setup error.
        state.turn.errors.push(state.config.workspace && !state.files.workspace ? `setup: ${why}` : `The session could not start: ${why}`);
        return this.finish('setup_error');
      }
    }
    try {
      return await this.loop();
    } catch (e) {
      if (isHostLostFailure(e)) return this.hostLost(e);
      throw e;
    }
  }

  /**
   * The host is gone and its folder could not be restored: the session ends with why. No SessionEnd
   * hooks: they would run on the host that is gone.
   */
  private hostLost(e: ApplicationFailure): ResultMessage {
    this.state.turn.errors.push(e.message);
    return this.finish('host_lost');
  }

  private async loop(): Promise<ResultMessage> {
    const { state } = this;
    for (;;) {
      if (state.input.awaitingInput) {
        this.setStatus('waiting_for_input');
        if (!(await this.waitForInput())) {
          this.setStatus('completed');
          // The last round's result was streamed already; the session's result adds the workspace's.
          await this.concludeWorkspace();
          const last = state.lastResult ? { ...state.lastResult, ...workspaceFields(state) } : this.finish('end_turn');
          return this.end(last, state.closed ? 'closed' : 'idle_timeout');
        }
        const maxRounds = state.config.maxRounds;
        if (maxRounds !== undefined && state.input.roundsCompleted >= maxRounds) {
          await this.concludeWorkspace();
          return this.end(this.finish('max_rounds'), 'max_rounds');
        }
      }
      this.setStatus('running');
      const exit = await this.runTurn();
      const ends = endsSession(exit, { interactive: state.config.interactive, closed: state.closed });
      if (ends) await this.concludeWorkspace();
      const result = this.finish(exit);
      if (ends) return this.end(result, exit);
      state.input.awaitingInput = true;
    }
  }

  /** Interactive sessions: wait for a follow-up, `close`, or the idle timeout. */
  private async waitForInput(): Promise<boolean> {
    const { state } = this;
    for (;;) {
      const woke = await condition(
        () => state.input.inbox.length > 0 || state.closed || this.shouldContinueAsNew(),
        state.config.idleTimeoutMs,
      );
      if (!woke || (state.closed && state.input.inbox.length === 0)) return false;
      if (state.input.inbox.length > 0) break;
      if (this.shouldContinueAsNew()) await continueAsNewNow(this.contextDeps());
    }
    state.input.awaitingInput = false;
    state.interrupted = false;
    state.turn = { ...newTurnRecord(), stopReason: state.turn.stopReason };
    emitInit(state, this.log);
    await submitPrompt(this.hookDeps(), takeFollowUps(state, this.log));
    return true;
  }

  /** The agent loop for one user turn: model → tools → … until a finish reason. */
  private async runTurn(): Promise<ExitReason> {
    const { state } = this;
    for (;;) {
      const stop = beforeModelCall(this.turnFacts());
      if (stop === 'max_turns' && state.config.finalSummary) await writeFinalSummary(this.modelDeps());
      if (stop) return stop;
      // Between model calls only: never while a handler runs, never mid-tool. (Checked inline: each
      // async step a turn goes through costs the SDK a promise and a captured stack trace.)
      if (this.shouldContinueAsNew()) await continueAsNewNow(this.contextDeps());
      // Steers sent while the turn runs reach the model before its next call, after the current tool results.
      const steer = takeSteers(state, this.log);
      if (steer !== null) await this.inTurn(() => submitPrompt(this.hookDeps(), steer));
      const reply = await this.modelStep();
      if (typeof reply === 'string') return reply;

      const step = resolveTurn(reply, {
        ...this.turnFacts(),
        requireDoneTool: state.config.requireDoneTool,
        contextNearlyFull: context.isContextNearlyFull(state),
        ...(state.config.outputFormat ? { output: { retries: state.turn.outputRetries ?? 0 } } : {}),
      });
      switch (step.type) {
        case 'finish':
          if (step.structured) state.turn.structuredOutput = step.structured;
          if (step.exit === 'end_turn' && (hasSteers(state) || (await this.stopHookContinues()))) continue;
          return step.exit;
        case 'retry_output':
          state.turn.outputRetries = (state.turn.outputRetries ?? 0) + 1;
          state.context.pendingNotices.push(outputRetryNotice(step.error));
          continue;
        case 'remind_done':
          state.context.pendingNotices.push(DONE_REMINDER);
          continue;
        case 'compact_and_continue':
          if (await this.inTurn(() => context.afterCutOff(this.contextDeps()))) continue;
          return step.otherwise;
        case 'refuse_tools':
          this.answerCalls(step.calls, {}, step.reason);
          context.afterTools(state, this.log, step.calls);
          return step.exit;
        case 'run_tools': {
          const exit = await this.toolStep(step.calls);
          if (state.files.checkpoints && turnChangesWorkspace(step.calls)) {
            await CancellationScope.nonCancellable(() =>
              takeCheckpoint(state, this.log, (i) => this.acts.workspace.checkpointWorkspace(i)),
            );
          }
          if (exit === 'end_turn' && (hasSteers(state) || (await this.stopHookContinues()))) continue;
          if (exit) return exit;
          break;
        }
        default:
          // Every kind of step is handled above: a new one added to NextStep fails to compile here.
          return unhandledStep(step);
      }
    }
  }

  private turnFacts() {
    const { state } = this;
    return {
      turnCount: state.turnCount,
      costUsd: state.spend.costUsd,
      interrupted: state.interrupted,
      cancelled: CancellationScope.current().consideredCancelled,
      maxTurns: state.config.maxTurns,
      maxBudgetUsd: state.config.maxBudgetUsd,
      stoppedByHook: state.turn.hookStop !== null,
    };
  }

  /**
   * A session with a `workspace` has its folder made first, on a tools host its tools then stay on
   * (ARCHITECTURE.md#workspaces). Idempotent on the host; recorded once here.
   */
  private async makeWorkspace(): Promise<void> {
    const { state } = this;
    const source = state.config.workspace;
    if (!source || state.files.workspace) return;
    const made = await this.acts.workspace.provisionWorkspace({ sessionId: state.sessionId, workspace: source });
    state.files.workspace = { path: made.path, base: made.base, kind: made.kind, host: made.host, hostQueue: made.hostQueue };
    state.config = { ...state.config, cwd: made.path };
    this.setActivities(activitiesFor(state.config, workflowInfo().taskQueue, made.hostQueue));
  }

  /**
   * Run an activity of the session's tools host. When it is not picked up in time
   * (`workspaceHostTimeoutMs`) or times out past its retries, and no worker polls the host's queue
   * any more, the host is lost: the folder is restored on another host from its last checkpoint
   * and the call runs there (ARCHITECTURE.md#checkpoints). A host that still polls is only busy.
   */
  private async onHost<T>(fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        const how = hostTimeout(e);
        const queue = pinnedQueue(this.state) ?? this.state.config.toolsTaskQueue;
        if (how === undefined || queue === undefined) throw e;
        const alive = await this.raw.store.hostAlive({ queue, withinMs: POLLER_FRESH_MS });
        if (alive) {
          if (how === 'not_started') continue;
          throw e;
        }
        this.restoring ??= CancellationScope.nonCancellable(() => this.restoreElsewhere(queue)).finally(() => (this.restoring = undefined));
        await this.restoring;
      }
    }
  }

  private async restoreElsewhere(lostQueue: string): Promise<void> {
    const { state } = this;
    const cfg = state.config;
    const lostHost = state.files.workspace?.host ?? state.files.hostPin?.host ?? lostQueue;
    const from = lastRestorable(state);
    if (!from) {
      throw hostLostFailure(
        `The tools host ${lostHost} holding ${cfg.cwd || 'the session'} is lost (no worker has polled ${lostQueue} for ` +
          `${POLLER_FRESH_MS / 1000} s) and the session has no checkpoint in a checkpoint remote to restore from ` +
          `(set DURABLE_AGENT_CHECKPOINT_REMOTE on the tools workers).`,
      );
    }
    const list = state.files.checkpoints!.list;
    // The first checkpoint: a restored copy's diff base (the folder as the session found it).
    const zero = list[0]!.pushed === 'remote' ? list[0] : undefined;
    const ws = state.files.workspace;
    let restored;
    try {
      restored = await this.raw.restore.restoreWorkspace({
        sessionId: state.sessionId,
        path: cfg.cwd,
        kind: ws?.kind ?? 'cwd',
        ...(cfg.workspace ? { source: cfg.workspace } : {}),
        ...(ws ? { base: ws.base } : {}),
        checkpoint: { commit: from.commit, ref: from.ref },
        ...(zero ? { baseCheckpoint: { commit: zero.commit, ref: zero.ref } } : {}),
      });
    } catch (e) {
      if (!(e instanceof ActivityFailure)) throw e;
      throw hostLostFailure(
        `The tools host ${lostHost} is lost and ${cfg.cwd} could not be restored elsewhere: ${e.cause?.message ?? e.message}`,
      );
    }
    // What the lost host checkpointed after `from` is gone with it.
    state.files.checkpoints!.list = list.slice(0, list.indexOf(from) + 1);
    if (ws) {
      state.files.workspace = {
        ...ws,
        base: restored.base,
        host: restored.host,
        hostQueue: restored.hostQueue,
        restoredFrom: { turn: from.turn, commit: from.commit, lostHost },
      };
    } else {
      state.files.hostPin = { host: restored.host, hostQueue: restored.hostQueue };
    }
    this.setActivities(activitiesFor(cfg, workflowInfo().taskQueue, restored.hostQueue));
    const note = restoredNote({
      lostHost,
      host: restored.host,
      path: restored.path,
      turn: from.turn,
      commit: from.commit,
      now: sessionTurn(state),
    });
    state.context.pendingNotices.push(note);
    this.log.emit({
      type: 'system',
      subtype: 'workspace_restored',
      lost_host: lostHost,
      host: restored.host,
      path: restored.path,
      turn: from.turn,
      commit: from.commit,
      message: note,
    });
  }

  /**
   * After the agent ends, whatever the end: what it changed in its workspace, and the `verify`
   * command's verdict (ARCHITECTURE.md#workspaces). Not for a session that never started.
   */
  private async concludeWorkspace(): Promise<void> {
    const { state } = this;
    const cfg = state.config;
    const ws = state.files.workspace;
    await CancellationScope.nonCancellable(async () => {
      if (ws && !ws.report) ws.report = await this.workspaceReport(ws);
      if (cfg.verify !== undefined && !state.files.verification && cfg.cwd !== '') {
        const { command, timeoutMs } = verifySpec(cfg.verify);
        const base = { command, exitCode: null, durationMs: 0, outputTail: '' };
        try {
          const out = await this.acts.workspace.runVerify({
            sessionId: state.sessionId,
            path: cfg.cwd,
            command,
            timeoutMs,
            env: cfg.env,
            ...(cfg.sandbox !== undefined ? { sandbox: cfg.sandbox } : {}),
            additionalDirectories: cfg.additionalDirectories,
          });
          const report = { command, exitCode: out.exitCode, durationMs: out.durationMs, outputTail: out.outputTail };
          state.files.verification = { verdict: out.verdict, report: out.error ? { ...report, error: out.error } : report };
        } catch (e) {
          if (!(e instanceof ActivityFailure)) throw e;
          state.files.verification = { verdict: 'error', report: { ...base, error: e.cause?.message ?? e.message } };
        }
      }
    });
  }

  private async workspaceReport(ws: WorkspaceState): Promise<WorkspaceReport> {
    const source = this.state.config.workspace!;
    const where = { path: ws.path, host: ws.host, kind: ws.kind, base: ws.base, source };
    try {
      const diff = await this.acts.workspace.workspaceDiff({ sessionId: this.state.sessionId, path: ws.path, base: ws.base });
      // A patch too large for the result is kept in history in parts, for `durable-agent diff`.
      for (let part = 0; part < (diff.patchParts ?? 0); part++) {
        await this.acts.workspace.readPatchPart({ sessionId: this.state.sessionId, part });
      }
      const { base: _base, ...rest } = diff;
      return { ...where, ...rest };
    } catch (e) {
      if (!(e instanceof ActivityFailure)) throw e;
      return { ...where, diffError: e.cause?.message ?? e.message };
    }
  }

  /** SessionEnd hooks run even when the session was cancelled: they are its last word. */
  private async end(result: ResultMessage, reason: string): Promise<ResultMessage> {
    await CancellationScope.nonCancellable(() => fireHooks(this.hookDeps(), 'SessionEnd', undefined, { reason }));
    return result;
  }

  /** Stop hooks may keep a finished turn going with their reason as the next input (bounded). */
  private async stopHookContinues(): Promise<boolean> {
    const { state } = this;
    if (state.turn.stopHookContinuations >= state.config.maxStopHookContinuations) return false;
    const verdict = await this.inTurn(() =>
      fireHooks(this.hookDeps(), 'Stop', undefined, { stop_hook_active: state.turn.stopHookContinuations > 0 }),
    );
    if (verdict?.block === undefined || state.turn.hookStop !== null) return false;
    state.turn.stopHookContinuations++;
    state.context.pendingNotices.push(verdict.block);
    return true;
  }

  private hookDeps() {
    return { state: this.state, log: this.log, hooks: this.acts.hooks };
  }

  /** Context management, then the model call; the reply is appended and accounted. A string is an exit. */
  private async modelStep(): Promise<AssistantReply | ExitReason> {
    const { state, log } = this;
    let reply: AssistantReply;
    try {
      const compaction = context.beforeModelCall(this.contextDeps());
      if (compaction) await this.inTurn(compaction);
      reply = await this.inTurn(() => callModelCompactingOnOverflow(this.modelDeps()));
    } catch (e) {
      if (isCancellation(e)) return state.interrupted ? 'interrupted' : 'aborted';
      if (!(e instanceof ActivityFailure)) throw e;
      state.turn.errors.push(describeModelFailure(e));
      return 'model_error';
    }
    const content = reply.stop_reason === 'max_tokens' ? discardTruncatedToolCalls(reply.content) : reply.content;
    state.messages.push({ role: 'assistant', content });
    state.turnCount++;
    this.turnsThisRun++;
    accountReply(state, reply);
    this.reportSpend?.(state.spend.costUsd);
    state.context.lastPromptTokens = promptTokensOf(reply.usage);
    state.context.lastPromptMessageCount = state.messages.length - 1;
    state.turn.stopReason = reply.stop_reason;
    warnIfUnpriced(state, log, reply);
    const event = log.emit({
      type: 'assistant',
      message: sdkApiMessage(reply, content),
      parent_tool_use_id: null,
    });
    // The turn's place in the transcript, for forks (ARCHITECTURE.md#checkpoints).
    state.turnMarks?.push({ end: state.messages.length, uuids: [event.uuid] });
    upsertSessionSearchAttributes(state, 'running');
    return { ...reply, content };
  }

  /** Run the calls; every call gets a result, in call order, even when the turn is interrupted. */
  private async toolStep(calls: ToolUseBlock[]): Promise<ExitReason | null> {
    const { state, log } = this;
    const results: Record<string, ToolResultBlock> = {};
    try {
      await this.inTurn(() =>
        dispatchToolCalls(
          {
            state,
            log,
            specs: state.tools,
            runTool: (i) => this.acts.tools.runTool(i),
            inspect: (i) => (i.toolName === 'Bash' ? this.acts.inspectBash : this.acts.inspect).inspectToolCall(i),
            mcp: this.acts.mcp,
            now: () => Date.now(),
            onDone: (m) => (state.turn.doneMessage = m),
            hooks: this.acts.hooks,
            onApprovalsChanged: () => this.setStatus(state.approvals.pending.length > 0 ? 'waiting_for_approval' : 'running'),
          },
          calls,
          results,
          this.pending,
        ),
      );
    } catch (e) {
      if (!isCancellation(e)) throw e;
    }
    this.answerCalls(calls, results, INTERRUPTED_RESULT);
    context.afterTools(state, log, calls);
    return afterTools({
      interrupted: state.interrupted,
      cancelled: CancellationScope.current().consideredCancelled,
      doneToolCalled: state.turn.doneMessage !== null,
      stoppedByHook: state.turn.hookStop !== null,
    });
  }

  /** One user message with a tool_result per call; calls without a result get `unanswered`. */
  private answerCalls(calls: ToolUseBlock[], results: Record<string, ToolResultBlock>, unanswered: string): void {
    const blocks = calls.map(
      (c) => results[c.id] ?? { type: 'tool_result' as const, tool_use_id: c.id, content: unanswered, is_error: true },
    );
    this.state.messages.push({ role: 'user', content: blocks });
    const event = this.log.emit({ type: 'user', message: { role: 'user', content: blocks }, parent_tool_use_id: null });
    const mark = this.state.turnMarks?.[this.state.turnMarks.length - 1];
    if (mark) {
      mark.end = this.state.messages.length;
      mark.uuids.push(event.uuid);
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

  private contextDeps(): context.ContextDeps {
    return {
      state: this.state,
      log: this.log,
      runId: this.runId,
      model: this.acts.model,
      beforeCompact: async (trigger) => void (await fireHooks(this.hookDeps(), 'PreCompact', trigger, { trigger })),
    };
  }

  private modelDeps(): ModelCallDeps {
    return { ...this.contextDeps(), inTurn: (fn) => this.inTurn(fn) };
  }

  private shouldContinueAsNew(): boolean {
    return continueAsNewDue(this.state.config.continueAsNewEveryTurns, this.turnsThisRun);
  }

  private finish(exit: ExitReason): ResultMessage {
    const { state } = this;
    this.exitReason = exit;
    const note = exit === 'stopped_by_hook' ? state.turn.hookStop : exitNote(exit, state.config);
    if (note) state.turn.errors.push(note);
    if (exit !== 'max_rounds') state.input.roundsCompleted++;
    const result = this.log.emit(buildResult(state, { exit, nowMs: Date.now() })) as ResultMessage;
    state.lastResult = result;
    this.setStatus(endsSession(exit, { interactive: state.config.interactive, closed: state.closed }) ? 'completed' : 'waiting_for_input');
    return result;
  }

  private setStatus(status: SessionControl['status']): void {
    this.status = status;
    // `failed` exists only as a search attribute, so `ls --status failed` finds error results.
    upsertSessionSearchAttributes(this.state, status === 'completed' && this.state.lastResult?.is_error ? 'failed' : status);
  }
}
