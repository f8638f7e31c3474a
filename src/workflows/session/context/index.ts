/**
 * Keeping a long session inside its model's context window (ARCHITECTURE.md#context-management).
 * One entry point per moment of the turn:
 *
 * - `beforeModelCall`: trim old tool output, compact proactively near the window, deliver notices;
 * - `onContextOverflow`: the provider said the prompt is too long — compact harder, once;
 * - `afterCutOff`: a reply hit `max_tokens` with the context nearly full — compact and go on;
 * - `afterTools`: remember the calls; warn the model when it loops;
 * - `beforeContinueAsNew`: make the carried state fit one payload.
 *
 * The pure parts live beside this file: token-accounting (how full the window is),
 * compaction-plan (where to cut), loop-detection; trimming is `shared/trim-tool-results` because
 * an activity uses it too.
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import type { ModelActivities } from '../../../shared/activities';
import type { ToolUseBlock } from '../../../shared/messages';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../../../shared/payload';
import { trimOldToolResults } from '../../../shared/trim-tool-results';
import { describeModelFailure } from '../activity-stubs';
import type { EventLog, LoopState } from '../state';
import { applyCompaction, planCompaction } from './compaction-plan';
import { detectLoop, recordTurn } from './loop-detection';
import { contextUsage, estimateTokens, resolveCompaction, shouldCompact, type ResolvedCompaction } from './token-accounting';
import { CUT_OFF_NOTICE, loopWarningText } from '../../../shared/model-texts';

export interface ContextDeps {
  state: LoopState;
  log: EventLog;
  runId: string;
  model: ModelActivities;
  /** PreCompact hooks. */
  beforeCompact?(trigger: 'auto' | 'manual'): Promise<void>;
}

/**
 * Before a model call: trim old tool output and deliver notices. When the context is near the
 * window, returns the compaction to run first (in the turn's cancellation scope), which delivers
 * the notices after it. Most turns need none, and then no scope or promise is made for this step:
 * the SDK captures a stack trace for every promise a workflow creates (docs/ARCHITECTURE.md#the-turn).
 */
export function beforeModelCall(deps: ContextDeps): (() => Promise<void>) | undefined {
  const { state, log } = deps;
  const settings = compactionSettings(state);
  if (settings.toolResultBudgetChars > 0) {
    const trimmed = trimOldToolResults(state.messages, {
      budgetChars: settings.toolResultBudgetChars,
      keepRecent: settings.keepRecentToolResultTurns,
    });
    if (trimmed.trimmed > 0) state.messages = trimmed.messages;
  }
  if (!isContextNearlyFull(state)) {
    deliverNotices(state);
    return undefined;
  }
  return async () => {
    try {
      await compact(deps, settings, 'auto');
    } catch (e) {
      if (isCancellation(e) || !(e instanceof ActivityFailure)) throw e;
      log.emit({ type: 'system', subtype: 'warning', message: `Compaction failed; continuing without it: ${describeModelFailure(e)}` });
    }
    deliverNotices(state);
  };
}

/**
 * The provider rejected the prompt as too long: compact down to an eighth of the window.
 * Returns false when compaction is off or there is nothing to summarize (the caller rethrows).
 */
export async function onContextOverflow(deps: ContextDeps): Promise<boolean> {
  const settings = compactionSettings(deps.state);
  if (!deps.state.config.compaction.enabled) return false;
  if (!(await compact(deps, settings, 'auto', Math.floor(settings.contextWindow / 8)))) return false;
  deliverNotices(deps.state);
  return true;
}

/** A reply hit `max_tokens` with the context nearly full: compact and ask the model to go on. */
export async function afterCutOff(deps: ContextDeps): Promise<boolean> {
  try {
    if (!(await compact(deps, compactionSettings(deps.state), 'auto'))) return false;
  } catch (e) {
    if (isCancellation(e) || !(e instanceof ActivityFailure)) throw e;
    return false;
  }
  deps.state.context.pendingNotices.push(CUT_OFF_NOTICE);
  return true;
}

/** After a turn's tools: remember the calls; when the model repeats itself, queue a warning. */
export function afterTools(state: LoopState, log: EventLog, calls: ToolUseBlock[]): void {
  const opts = state.config.loopDetection;
  if (!opts.enabled) return;
  state.context.loopHistory = recordTurn(state.context.loopHistory, calls, opts.window);
  const match = detectLoop(state.context.loopHistory, { threshold: opts.threshold, window: opts.window });
  if (!match) return;
  const text = loopWarningText(match, { window: opts.window });
  state.context.pendingNotices.push(text);
  log.emit({ type: 'system', subtype: 'loop_detected', message: text, count: match.count });
}

/**
 * The carried state must fit in one payload (ARCHITECTURE.md#continue-as-new): shed old tool
 * output first, then summarize.
 */
export async function beforeContinueAsNew(deps: ContextDeps): Promise<void> {
  const { state } = deps;
  if (jsonBytes(state) > MAX_PAYLOAD_BYTES) state.messages = trimOldToolResults(state.messages, { budgetChars: 1, keepRecent: 1 }).messages;
  if (jsonBytes(state) > MAX_PAYLOAD_BYTES) await compact(deps, compactionSettings(state), 'auto');
}

/** Compaction is on and the next prompt is estimated past its threshold. Pure. */
export function isContextNearlyFull(state: LoopState): boolean {
  const settings = compactionSettings(state);
  return settings.enabled && shouldCompact(currentContextTokens(state), settings.contextWindow, settings.threshold);
}

function compactionSettings(state: LoopState): ResolvedCompaction {
  const last = Object.entries(state.spend.perModel).find(([m]) => m === state.model);
  return resolveCompaction(state.config.compaction, {
    model: state.model,
    lastReply: last ? { model: last[0], contextWindow: last[1].contextWindow } : undefined,
  });
}

/** Estimated prompt tokens of the next call. */
function currentContextTokens(state: LoopState): number {
  return contextUsage({
    lastPromptTokens: state.context.lastPromptTokens,
    lastPromptMessageCount: state.context.lastPromptMessageCount,
    messages: state.messages,
    fixedTokens: () => estimateTokens(state.systemPrompt) + estimateTokens(JSON.stringify(state.tools)),
  });
}

/** Notices (loop warnings, done-tool reminders, the cut-off note) reach the model as user text. */
function deliverNotices(state: LoopState): void {
  if (state.context.pendingNotices.length === 0) return;
  const text = state.context.pendingNotices.splice(0).join('\n\n');
  const last = state.messages[state.messages.length - 1]!;
  if (last.role === 'user' && Array.isArray(last.content)) last.content.push({ type: 'text', text });
  else state.messages.push({ role: 'user', content: text });
}

/**
 * Summarize the older part of the transcript and keep the recent turns verbatim. Returns false
 * when there is nothing old enough to summarize.
 */
async function compact(
  deps: ContextDeps,
  settings: ResolvedCompaction,
  trigger: 'auto' | 'manual',
  keepRecentTokens = settings.keepRecentTokens,
): Promise<boolean> {
  const { state, log } = deps;
  const plan = planCompaction(state.messages, { keepRecentTurns: settings.keepRecentTurns, keepRecentTokens });
  if (!plan) return false;
  await deps.beforeCompact?.(trigger);
  const preTokens = currentContextTokens(state);
  const summary = await deps.model.summarize({
    sessionId: state.sessionId,
    runId: deps.runId,
    upTo: plan.summarizeUpTo,
    model: state.config.compaction.summaryModel ?? state.model,
    maxOutputTokens: state.config.compaction.summaryMaxTokens,
    ...state.config.retry,
  });
  state.messages = applyCompaction(state.messages, summary.summary, plan, { task: state.config.prompt });
  // Turn marks up to here point into messages that are gone: a fork starts after (ARCHITECTURE.md#checkpoints).
  if (state.turnMarks) state.context.compactedAtTurn = state.turnMarks.length + 1;
  state.spend.costUsd += summary.costUsd;
  state.spend.apiDurationMs += summary.durationMs;
  state.context.lastPromptMessageCount = 0;
  state.context.compactions++;
  log.emit({
    type: 'system',
    subtype: 'compact_boundary',
    compact_metadata: { trigger, pre_tokens: preTokens },
    summarized_messages: plan.summarizeUpTo,
    kept_messages: state.messages.length - 1,
  });
  return true;
}
