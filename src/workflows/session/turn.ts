/**
 * The turn's decisions as pure functions: the workflow (session.ts) is a thin interpreter that
 * performs the step each returns (ARCHITECTURE.md#the-turn). No Temporal APIs here, so every
 * branch is unit-tested without a server.
 *
 * A turn is: `beforeModelCall` → model call → `resolveTurn` → (tools → `afterTools`) → again.
 */
import type { AssistantReply, ToolUseBlock } from '../../shared/messages';
import type { ResultSubtype } from '../../shared/events';
import { BUDGET_REFUSAL } from '../../shared/model-texts';

/** Why a loop ended. */
export type ExitReason =
  | 'end_turn'
  | 'max_turns'
  | 'max_budget'
  | 'max_tokens'
  | 'stop_sequence'
  | 'interrupted'
  | 'aborted'
  | 'model_error'
  /** Setting the session up failed (e.g. the session to resume does not exist). */
  | 'setup_error'
  /** A hook said stop (`continue: false`), or a UserPromptSubmit hook blocked the prompt. */
  | 'stopped_by_hook'
  /** An interactive session answered `maxRounds` user inputs; the next one ends it. */
  | 'max_rounds'
  /** The tools host holding the session's folder was lost and the folder could not be restored. */
  | 'host_lost'
  /** With `outputFormat`: the final reply did not match the schema, again after every retry. */
  | 'max_structured_output_retries';

/**
 * Exits that end the session even when it is interactive: a limit was reached, it was cancelled,
 * or it could not start. Every other exit ends only the user's turn.
 */
const SESSION_ENDING: ReadonlySet<ExitReason> = new Set(['max_turns', 'max_rounds', 'max_budget', 'aborted', 'setup_error', 'host_lost']);

/** Does this exit end the whole session (rather than wait for the next message)? */
export function endsSession(exit: ExitReason, session: { interactive: boolean; closed: boolean }): boolean {
  return !session.interactive || session.closed || SESSION_ENDING.has(exit);
}

export function resultSubtype(exit: ExitReason): ResultSubtype {
  switch (exit) {
    case 'end_turn':
      return 'success';
    case 'max_turns':
    case 'max_rounds':
      return 'error_max_turns';
    case 'max_budget':
      return 'error_max_budget_usd';
    case 'max_structured_output_retries':
      return 'error_max_structured_output_retries';
    default:
      return 'error_during_execution';
  }
}

/** The note an exit adds to the result's `errors`; null for a normal end. */
export function exitNote(exit: ExitReason, limits: { maxTurns?: number; maxRounds?: number; maxBudgetUsd?: number }): string | null {
  switch (exit) {
    case 'interrupted':
      return 'The session was interrupted.';
    case 'aborted':
      return 'The session was cancelled.';
    case 'max_tokens':
      return 'The model hit its output token limit (max_tokens).';
    case 'stop_sequence':
      return 'The model stopped at a stop sequence.';
    case 'max_turns':
      return `Reached the maximum number of turns (${limits.maxTurns}).`;
    case 'max_rounds':
      return `Reached the maximum number of rounds (${limits.maxRounds}): this input was not answered.`;
    case 'max_budget':
      return `Reached the maximum budget ($${limits.maxBudgetUsd}).`;
    case 'max_structured_output_retries':
      return `The final reply did not match the output schema after ${OUTPUT_RETRIES} retries.`;
    default:
      return null;
  }
}

/** What the loop knows when it decides. */
export interface TurnFacts {
  turnCount: number;
  costUsd: number;
  interrupted: boolean;
  /** The turn's cancellation scope was cancelled (interrupt or workflow cancellation). */
  cancelled: boolean;
  maxTurns?: number;
  maxBudgetUsd?: number;
  /** A hook asked to stop (its reason is in the turn's errors). */
  stoppedByHook?: boolean;
}

function overBudget(f: Pick<TurnFacts, 'costUsd' | 'maxBudgetUsd'>): boolean {
  return f.maxBudgetUsd !== undefined && f.costUsd >= f.maxBudgetUsd;
}

function stoppedByUser(f: Pick<TurnFacts, 'interrupted' | 'cancelled'>): ExitReason | null {
  if (f.cancelled) return f.interrupted ? 'interrupted' : 'aborted';
  return f.interrupted ? 'interrupted' : null;
}

/** Checked before every model call; null means call the model. */
export function beforeModelCall(f: TurnFacts): ExitReason | null {
  const stopped = stoppedByUser(f);
  if (stopped) return stopped;
  if (f.stoppedByHook) return 'stopped_by_hook';
  if (f.maxTurns !== undefined && f.turnCount >= f.maxTurns) return 'max_turns';
  if (overBudget(f)) return 'max_budget';
  return null;
}

/** What to do with a model reply. */
export type NextStep =
  /** Run the calls (validation and permission happen per call), then `afterTools`. */
  | { type: 'run_tools'; calls: ToolUseBlock[] }
  /** The budget ran out with this reply: answer every call as not run, then end with `max_budget`. */
  | { type: 'refuse_tools'; calls: ToolUseBlock[]; exit: 'max_budget'; reason: string }
  /** `requireDoneTool` and the model stopped without calling it: remind it and call the model again. */
  | { type: 'remind_done' }
  /**
   * Cut off at the output limit because the context is nearly full: compact, tell the model to
   * continue in smaller steps, call it again. If compaction does nothing, finish with `max_tokens`.
   */
  | { type: 'compact_and_continue'; otherwise: 'max_tokens' }
  /** `outputFormat` and the final reply does not match the schema: say why and call the model again. */
  | { type: 'retry_output'; error: string }
  /** `value`: the structured output of a final reply that matched the schema. */
  | { type: 'finish'; exit: ExitReason; structured?: { value: unknown } };

/**
 * The `default` of a switch over `NextStep`: it compiles only if every kind is handled. Reached
 * anyway (a step from newer code), it fails the workflow task, not the session, so a fixed worker
 * takes the session on.
 */
export function unhandledStep(step: never): never {
  throw new Error(`no handling for the step ${JSON.stringify(step)}`);
}

export interface ReplyFacts extends TurnFacts {
  requireDoneTool: boolean;
  /** The session has `outputFormat`; `retries`: replies of this turn that did not match so far. */
  output?: { retries: number };
  /** Compaction is enabled and the next prompt is estimated past its threshold. */
  contextNearlyFull: boolean;
}

/** Final replies that do not match the output schema, each answered with why, before the turn fails. */
export const OUTPUT_RETRIES = 3;

/** A worker older than `outputFormat` sends no verdict: nothing unchecked passes as the result. */
const UNCHECKED_OUTPUT = 'the model worker did not check the reply against the schema (it predates outputFormat: upgrade it)';

/**
 * The step after a reply. `tool_use` with no tool calls counts as `end_turn`; some providers
 * answer `stop` while still returning tool calls, which are run rather than dropped. The budget
 * is checked after every reply, before its tools run.
 */
export function resolveTurn(reply: Pick<AssistantReply, 'stop_reason' | 'content' | 'structured'>, f: ReplyFacts): NextStep {
  const calls = reply.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  switch (reply.stop_reason) {
    case 'max_tokens':
      return f.contextNearlyFull ? { type: 'compact_and_continue', otherwise: 'max_tokens' } : { type: 'finish', exit: 'max_tokens' };
    case 'stop_sequence':
      return { type: 'finish', exit: 'stop_sequence' };
    case 'tool_use':
    case 'end_turn':
      if (calls.length > 0) {
        return overBudget(f) ? { type: 'refuse_tools', calls, exit: 'max_budget', reason: BUDGET_REFUSAL } : { type: 'run_tools', calls };
      }
      if (f.requireDoneTool) return { type: 'remind_done' };
      return f.output ? finalOutput(reply.structured, f.output.retries) : { type: 'finish', exit: 'end_turn' };
  }
}

function finalOutput(check: AssistantReply['structured'], retries: number): NextStep {
  if (check && 'value' in check) return { type: 'finish', exit: 'end_turn', structured: { value: check.value } };
  if (retries >= OUTPUT_RETRIES) return { type: 'finish', exit: 'max_structured_output_retries' };
  return { type: 'retry_output', error: check?.error ?? UNCHECKED_OUTPUT };
}

/** After a turn's tools have answered; null means call the model again. */
export function afterTools(
  f: Pick<TurnFacts, 'interrupted' | 'cancelled' | 'stoppedByHook'> & { doneToolCalled: boolean },
): ExitReason | null {
  if (f.interrupted) return 'interrupted';
  if (f.cancelled) return 'aborted';
  if (f.stoppedByHook) return 'stopped_by_hook';
  return f.doneToolCalled ? 'end_turn' : null;
}
