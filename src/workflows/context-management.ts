/**
 * Keeping a long session inside its model's context window (DESIGN D7, seeds 000 §7, 002, 003):
 * trim old tool output, compact (summarize the older turns) proactively near the window and
 * reactively when the provider reports an overflow, and warn the model when it loops.
 */
import type { ModelActivities } from '../shared/activities';
import type { ToolUseBlock } from '../shared/messages';
import { applyCompaction, planCompaction } from './compaction';
import { contextUsage, estimateTokens, resolveCompaction, shouldCompact, type ResolvedCompaction } from './context';
import { detectLoop, loopWarningText, recordTurn } from './loop-detect';
import type { EventLog, LoopState } from './state';
import { trimOldToolResults } from './trim';

export interface ContextDeps {
  state: LoopState;
  log: EventLog;
  runId: string;
  model: ModelActivities;
}

export function compactionSettings(state: LoopState): ResolvedCompaction {
  const last = Object.entries(state.perModel).find(([m]) => m === state.model);
  return resolveCompaction(state.config.compaction, {
    model: state.model,
    lastReply: last ? { model: last[0], contextWindow: last[1].contextWindow } : undefined,
  });
}

/** Estimated prompt tokens of the next call. */
export function currentContextTokens(state: LoopState): number {
  return contextUsage({
    lastPromptTokens: state.lastPromptTokens,
    lastPromptMessageCount: state.lastPromptMessageCount,
    messages: state.messages,
    fixedTokens: estimateTokens(state.systemPrompt) + estimateTokens(JSON.stringify(state.tools)),
  });
}

/** Before a model call: trim old tool output, then compact if the context is near the window. */
export async function manageContext(deps: ContextDeps): Promise<void> {
  const { state } = deps;
  const settings = compactionSettings(state);
  if (settings.toolResultBudgetChars > 0) {
    const trimmed = trimOldToolResults(state.messages, {
      budgetChars: settings.toolResultBudgetChars,
      keepRecent: settings.keepRecentToolResultTurns,
    });
    if (trimmed.trimmed > 0) state.messages = trimmed.messages;
  }
  if (settings.enabled && shouldCompact(currentContextTokens(state), settings.contextWindow, settings.threshold)) {
    await compact(deps, settings, 'auto');
  }
}

/**
 * Summarize the older part of the transcript and keep the recent turns verbatim. Returns false
 * when there is nothing old enough to summarize.
 */
export async function compact(
  deps: ContextDeps,
  settings: ResolvedCompaction,
  trigger: 'auto' | 'manual',
  keepRecentTokens = settings.keepRecentTokens,
): Promise<boolean> {
  const { state, log } = deps;
  const plan = planCompaction(state.messages, { keepRecentTurns: settings.keepRecentTurns, keepRecentTokens });
  if (!plan) return false;
  const preTokens = currentContextTokens(state);
  const summary = await deps.model.summarize({
    sessionId: state.sessionId,
    runId: deps.runId,
    upTo: plan.summarizeUpTo,
    model: state.config.compaction.summaryModel ?? state.model,
    maxOutputTokens: state.config.compaction.summaryMaxTokens,
  });
  state.messages = applyCompaction(state.messages, summary.summary, plan, { task: state.config.prompt });
  state.costUsd += summary.costUsd;
  state.apiDurationMs += summary.durationMs;
  state.lastPromptMessageCount = 0;
  state.compactions++;
  log.emit({
    type: 'system',
    subtype: 'compact_boundary',
    compact_metadata: { trigger, pre_tokens: preTokens },
    summarized_messages: plan.summarizeUpTo,
    kept_messages: state.messages.length - 1,
  });
  return true;
}

/** After a turn's tools: remember the calls; when the model repeats itself, queue a warning. */
export function checkForLoop(state: LoopState, log: EventLog, calls: ToolUseBlock[]): void {
  const opts = state.config.loopDetection;
  if (!opts.enabled) return;
  state.loopHistory = recordTurn(state.loopHistory, calls, opts.window);
  const match = detectLoop(state.loopHistory, { threshold: opts.threshold, window: opts.window });
  if (!match) return;
  const text = loopWarningText(match, { window: opts.window });
  state.pendingNotices.push(text);
  log.emit({ type: 'system', subtype: 'loop_detected', message: text, count: match.count });
}
