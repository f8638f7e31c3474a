/**
 * The loop's decisions as pure functions (STYLE habit 4): the workflow is a thin interpreter
 * over these. No Temporal APIs here, so they are unit-tested without a server.
 */
import type { AssistantReply, ContentBlock, ToolUseBlock } from '../shared/messages';
import type { ResultSubtype } from '../shared/events';
import type { ToolSpec } from '../shared/tools';
import { checkAgainstSchema } from '../shared/json-schema';

/** Why a loop ended (seed 002 "Exit Reasons"). */
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
  | 'setup_error';

export interface TerminationFacts {
  turnCount: number;
  costUsd: number;
  interrupted: boolean;
  cancelled: boolean;
  maxTurns?: number;
  maxBudgetUsd?: number;
}

/** Checked before every model call; null means go on. */
export function checkTermination(f: TerminationFacts): ExitReason | null {
  if (f.cancelled) return f.interrupted ? 'interrupted' : 'aborted';
  if (f.interrupted) return 'interrupted';
  if (f.maxTurns !== undefined && f.turnCount >= f.maxTurns) return 'max_turns';
  if (f.maxBudgetUsd !== undefined && f.costUsd >= f.maxBudgetUsd) return 'max_budget';
  return null;
}

export function resultSubtype(exit: ExitReason): ResultSubtype {
  switch (exit) {
    case 'end_turn':
      return 'success';
    case 'max_turns':
      return 'error_max_turns';
    case 'max_budget':
      return 'error_max_budget_usd';
    default:
      return 'error_during_execution';
  }
}

export type NextStep = { type: 'finish'; exit: ExitReason } | { type: 'run_tools'; calls: ToolUseBlock[] };

/** What to do with a model reply. `tool_use` with no tool calls counts as `end_turn`. */
export function resolveReply(reply: Pick<AssistantReply, 'stop_reason' | 'content'>): NextStep {
  const calls = reply.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  switch (reply.stop_reason) {
    case 'tool_use':
      return calls.length > 0 ? { type: 'run_tools', calls } : { type: 'finish', exit: 'end_turn' };
    case 'end_turn':
      // Some providers answer `stop` while still returning tool calls; run them rather than drop them.
      return calls.length > 0 ? { type: 'run_tools', calls } : { type: 'finish', exit: 'end_turn' };
    case 'max_tokens':
      return { type: 'finish', exit: 'max_tokens' };
    case 'stop_sequence':
      return { type: 'finish', exit: 'stop_sequence' };
  }
}

/**
 * On `max_tokens`, a tool call cut off mid-arguments cannot be run or answered sensibly:
 * drop it (seed 002 "discardTruncatedToolBlocks").
 */
export function discardTruncatedToolCalls(content: ContentBlock[]): ContentBlock[] {
  return content.filter((b) => !(b.type === 'tool_use' && b.raw_input !== undefined));
}

/**
 * Group calls into batches that keep the model's order: consecutive read-only calls share a
 * batch (run in parallel); each mutating call is a batch of its own (seed 000 §6).
 */
export function scheduleBatches<T extends { readOnly: boolean }>(calls: T[]): T[][] {
  const batches: T[][] = [];
  for (const call of calls) {
    const last = batches[batches.length - 1];
    if (call.readOnly && last && last[0]!.readOnly) last.push(call);
    else batches.push([call]);
  }
  return batches;
}

/** Why a call cannot run, as the error text the model will see; null if it can. */
export function invalidCallReason(call: ToolUseBlock, specs: ToolSpec[]): string | null {
  const spec = specs.find((s) => s.name === call.name);
  if (!spec) {
    return `Error: No such tool available: ${call.name}. Available tools: ${specs.map((s) => s.name).join(', ')}`;
  }
  if (call.raw_input !== undefined) {
    return `InputValidationError: the arguments for ${call.name} are not valid JSON (${truncate(call.raw_input, 200)}). Send a JSON object matching the tool's schema.`;
  }
  const problem = checkAgainstSchema(call.input, spec.inputSchema as never);
  return problem ? `InputValidationError: ${call.name} failed due to the following issue: ${problem}` : null;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** Filter the worker's tools by the session's `tools` / `disallowedTools` (bare names remove a tool). */
export function visibleTools(all: ToolSpec[], opts: { tools?: string[]; disallowedTools: string[] }): ToolSpec[] {
  const removed = new Set(opts.disallowedTools.filter((r) => !r.includes('(')).map((r) => r.trim()));
  return all.filter((s) => (!opts.tools || opts.tools.includes(s.name)) && !removed.has(s.name));
}
