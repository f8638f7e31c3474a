/**
 * Calling the model from the workflow: one call with the session's settings, the fallback model
 * once the primary's retries are exhausted (ARCHITECTURE.md#temporal-owns-retries), reactive
 * compaction on a context overflow, and the final summary at `maxTurns`. The call itself is the
 * `callModel` activity, which reads its prompt by query (ARCHITECTURE.md#transcript-by-reference).
 */
import { ActivityFailure, ApplicationFailure, isCancellation, proxySinks } from '@temporalio/workflow';
import type { ModelActivities } from '../../shared/activities';
import type { PromptSinks } from '../../shared/prompt-offer';
import type { AssistantReply } from '../../shared/messages';
import { describeModelFailure, retriesExhausted } from './activity-stubs';
import * as context from './context/index';
import { accountReply, type EventLog, type LoopState } from './state';
import { FINAL_SUMMARY_PROMPT } from '../../shared/model-texts';

export interface ModelCallDeps {
  state: LoopState;
  log: EventLog;
  runId: string;
  model: ModelActivities;
  /** Runs a part of the turn in the scope `interrupt` cancels. */
  inTurn<T>(fn: () => Promise<T>): Promise<T>;
}

const { prompts } = proxySinks<PromptSinks>();

/** One model call; on exhausted retries, switch to `fallbackModel` for the rest of the session. */
export async function callModel(deps: ModelCallDeps, withTools: boolean, appendUserText?: string): Promise<AssistantReply> {
  const { state, log } = deps;
  const call = (model: string) => {
    const upTo = state.messages.length;
    const promptSeq = state.nextSeq - 1;
    // The prompt the call would read by query, handed to this worker process (ARCHITECTURE.md#prompt-offer):
    // a sink call, so no command and nothing in history; skipped while replaying.
    prompts.offer({
      runId: deps.runId,
      lastSeq: promptSeq,
      upTo,
      withTools,
      system: state.systemPrompt,
      tools: withTools ? state.tools : [],
      messages: state.messages.slice(0, upTo),
    });
    return deps.model.callModel({
      sessionId: state.sessionId,
      runId: deps.runId,
      upTo,
      promptSeq,
      model,
      maxOutputTokens: state.config.maxOutputTokens,
      maxThinkingTokens: state.maxThinkingTokens,
      withTools,
      ...(appendUserText ? { appendUserText } : {}),
      // Not for the final summary at maxTurns: that result is an error, its text free.
      ...(state.config.outputFormat && withTools ? { outputSchema: state.config.outputFormat.schema } : {}),
      maxAttempts: state.config.retry.maxAttempts,
      initialIntervalMs: state.config.retry.initialIntervalMs,
      maximumIntervalMs: state.config.retry.maximumIntervalMs,
    });
  };
  try {
    return await call(state.model);
  } catch (e) {
    const fallback = state.config.fallbackModel;
    if (!fallback || fallback === state.model || !retriesExhausted(e)) throw e;
    state.turn.errors.push(`${state.model}: ${describeModelFailure(e as ActivityFailure)}`);
    log.emit({ type: 'system', subtype: 'model_changed', model: fallback, previous_model: state.model, reason: 'fallback' });
    state.model = fallback;
    return await call(fallback);
  }
}

/** Reactive compaction: a provider's context overflow is answered by compacting and calling once more. */
export async function callModelCompactingOnOverflow(deps: ModelCallDeps): Promise<AssistantReply> {
  try {
    return await callModel(deps, true);
  } catch (e) {
    const overflow = e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'ContextOverflow';
    if (!overflow || !(await context.onContextOverflow(deps))) throw e;
    return await callModel(deps, true);
  }
}

/** At `maxTurns` with `finalSummary`: one last call without tools writes the result's text. */
export async function writeFinalSummary(deps: ModelCallDeps): Promise<void> {
  const { state } = deps;
  try {
    const reply = await deps.inTurn(() => callModel(deps, false, FINAL_SUMMARY_PROMPT));
    accountReply(state, reply);
    state.turn.doneMessage = reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  } catch (e) {
    if (isCancellation(e)) throw e;
    state.turn.errors.push(`The final summary could not be written: ${e instanceof ActivityFailure ? describeModelFailure(e) : String(e)}`);
  }
}

/** Once per model: a reply the worker could not price is counted as $0, and the user is told. */
export function warnIfUnpriced(state: LoopState, log: EventLog, reply: AssistantReply): void {
  if (reply.costBasis !== 'unknown' || state.spend.warnedModels.includes(reply.model)) return;
  state.spend.warnedModels.push(reply.model);
  log.emit({
    type: 'system',
    subtype: 'warning',
    message: `No price is known for model ${reply.model}: its cost is counted as $0 (costBasis 'unknown'). Add it to the worker's pricing file.`,
  });
}
