/**
 * The texts the model reads that the session itself writes — tool results it makes up instead of
 * running a tool, notices it adds before a model call, prompts — in one place, so they can be read
 * and reworded together. Every one is part of recorded sessions: a change to any byte changes
 * what the model sees (and the replay histories in test/replay/histories/ hold them).
 *
 * Not here: each tool's own messages (Claude Code's exact texts, such as "File does not exist."),
 * which are part of that tool's contract and live with it — src/activities/tools/ for the built-in
 * tools, src/shared/todo.ts for TodoWrite's result, src/shared/done-tool.ts for TaskComplete's
 * description; and texts only users read (result `errors`, `system` warnings).
 */

// ── The turn ─────────────────────────────────────────────────────────────────────────────────

/** The result of every tool call refused because the session reached its maximum budget. */
export const BUDGET_REFUSAL = 'Not run: the session reached its maximum budget.';

/** Sent (as a user message) when the final reply does not match the output schema, with why. */
export function outputRetryNotice(error: string): string {
  return (
    `Your final reply must be only a JSON value that matches the output schema, with no other text. ` +
    `It did not: ${error}. Reply again with only the JSON.`
  );
}

/** Sent when the model replied without a tool call while `requireDoneTool` is on. */
export const DONE_REMINDER =
  'You replied without calling a tool. If the task is complete, call TaskComplete with your report; otherwise continue working with the tools.';

/** The last prompt of a session that reached `maxTurns`: a summary for the user, no tools. */
export const FINAL_SUMMARY_PROMPT =
  'You have reached the maximum number of turns for this session and cannot call tools any more. ' +
  'Summarize for the user what you did, what state the work is in, and what remains to be done.';

/** Sent after a reply was cut off at `max_tokens` with the context nearly full (then compacted). */
export const CUT_OFF_NOTICE =
  'Your previous response was cut off at the output token limit. Continue from where it stopped, in smaller steps.';

/** The result of every call left unanswered when its turn was interrupted (ARCHITECTURE.md#interrupt-cancels-the-turn). */
export const INTERRUPTED_RESULT = 'Interrupted by user: the tool call was cancelled before it finished.';

/** A detected loop of tool calls (context/loop-detection.ts's `LoopMatch`). */
export type LoopWarningMatch =
  | { kind: 'repeat'; signature: string; toolName: string; count: number }
  | { kind: 'cycle'; pattern: readonly string[]; toolNames: readonly string[]; count: number };

/** Sent before the next model call when the model repeats the same tool calls (`window`: calls looked at, 10 by default). */
export function loopWarningText(match: LoopWarningMatch, opts: { window?: number } = {}): string {
  const window = opts.window ?? 10;
  const advice =
    'Doing the same thing again will not give a different result. Stop and reconsider: re-read the latest output, check your assumptions, and take a different approach. If you are blocked, say what is blocking you.';
  if (match.kind === 'repeat') {
    return `Loop warning: you have called ${match.toolName} with the same arguments ${match.count} times in your last ${window} tool calls. ${advice}`;
  }
  return `Loop warning: your last ${match.count * match.pattern.length} tool calls repeat the same sequence (${match.toolNames.join(' → ')}) ${match.count} times. ${advice}`;
}

// ── Compaction and restore ───────────────────────────────────────────────────────────────────

/** Starts the user message that replaces the compacted part of the transcript, before the summary. */
export const CONTINUATION_PREFIX =
  'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n';

/** Follows the summary in that message: the original task, verbatim (`task` already cut to length). */
export function originalRequestText(task: string): string {
  return `\n\nThe user's original request, verbatim:\n${task}`;
}

/** Ends an original task cut to `kept` characters in that message. */
export function cutTaskText(task: string, kept: number): string {
  return `${task.slice(0, kept)}\n[… ${task.length - kept} more characters; see the summary]`;
}

/** Sent after the session's folder was restored on another tools host from its last checkpoint. */
export function restoredNote(o: { lostHost: string; host: string; path: string; turn: number; commit: string; now: number }): string {
  const after = o.turn === 0 ? 'as the session found it' : `as it was at the end of turn ${o.turn}`;
  return (
    `The tools host that held this session's files (${o.lostHost}) was lost. The folder ${o.path} was restored on ${o.host} ` +
    `from its last checkpoint (${o.commit.slice(0, 12)}), ${after}. Files written and commands run after that checkpoint ` +
    `happened on the lost host and are not in the folder now (turn ${o.now} is the current turn): check the files before relying on earlier results.`
  );
}

// ── Tool calls that cannot run ───────────────────────────────────────────────────────────────

/** The result of a call to a tool the session does not have. */
export function noSuchToolText(name: string, available: readonly string[]): string {
  return `Error: No such tool available: ${name}. Available tools: ${available.join(', ')}`;
}

/** The result of a call whose arguments are not JSON (`excerpt`: the start of what was sent). */
export function invalidJsonArgumentsText(name: string, excerpt: string): string {
  return `InputValidationError: the arguments for ${name} are not valid JSON (${excerpt}). Send a JSON object matching the tool's schema.`;
}

/** The result of a call whose input does not match the tool's schema. */
export function invalidInputText(name: string, problem: string): string {
  return `InputValidationError: ${name} failed due to the following issue: ${problem}`;
}

/** The result of a TaskComplete call without a message. */
export const TASK_COMPLETE_INVALID = 'InputValidationError: TaskComplete needs a non-empty `message`.';

/** The result of a TodoWrite call whose input does not match its schema (its first issue). */
export function todoWriteInvalidText(path: string, message: string): string {
  return `InputValidationError: TodoWrite failed: \`${path}\`: ${message}`;
}

/** The MCP tool result of a client tool call no client answered in time. */
export function noClientAnswer(request: { toolName: string; server: string; timeoutMs: number }): string {
  return (
    `Error: MCP tool ${request.toolName} was not run: no client answered within ${request.timeoutMs / 1000} s ` +
    `(the in-process MCP server "${request.server}" runs in the program that called query(), which is not answering).`
  );
}

// ── Hooks ────────────────────────────────────────────────────────────────────────────────────

/** The result of a call a PreToolUse hook blocked, with the hook's reason. */
export function hookBlockedText(block: string): string {
  return `Blocked by a PreToolUse hook: ${block}`;
}

/** The reason a call is blocked when its PreToolUse hooks could not run (shown through `hookBlockedText`). */
export function hooksFailedBlock(why: string): string {
  return `The PreToolUse hooks could not run (${why}), so the call was denied: a guard hook that cannot run never lets a call through.`;
}

/** The result of a call whose input a PreToolUse hook replaced with one that is not valid. */
export function hookInputInvalidText(problem: string): string {
  return `A PreToolUse hook changed the input to one that is not valid: ${problem}`;
}

/** The result of a call a PreToolUse hook denied without giving a reason. */
export const HOOK_DENIED = 'Denied by a PreToolUse hook.';

/** The question of a PreToolUse hook that asks for approval; with `permissionMode` dontAsk, the start of the denial. */
export function hookAsksText(reason: string | undefined): string {
  return `A PreToolUse hook asks for approval${reason ? `: ${reason}` : '.'}`;
}

/** The result of a call that would have asked (`asked`: the question) under `permissionMode` dontAsk. */
export function neverAsksText(asked: string): string {
  return `${asked} permissionMode dontAsk never asks.`;
}

// ── Permissions ──────────────────────────────────────────────────────────────────────────────

/** The result of a call the user denied without a message. */
export const DEFAULT_DENY_MESSAGE = 'The user denied this tool call.';

/** The result of a call the tools worker could not check against the permission rules. */
export function permissionCheckFailedText(tool: string, cause: string): string {
  return `${tool} was not run: the tools worker could not check it against the permission rules (${cause}).`;
}

/** The result of a call approved with an input that is not valid. */
export function approvalInputInvalidText(problem: string): string {
  return `The input given with the approval is not valid: ${problem}`;
}

/** The result of a call whose permission request was not answered in time. */
export function permissionTimeoutText(requestId: string, timeoutMs: number | undefined, tool: string): string {
  return `No answer to permission request ${requestId} within ${timeoutMs} ms: ${tool} was not run.`;
}

/** The result of a call that is not read-only in plan mode. */
export function planModeRefusalText(tool: string): string {
  return `${tool} was not run: the session is in plan mode, where only read-only tools run. Present the plan instead.`;
}

/** The result of a call an ask rule covers under `permissionMode` dontAsk (`why`: which rule). */
export function askRuleDontAskText(tool: string, why: string): string {
  return `Permission to use ${tool} was denied: ${why}, and permissionMode dontAsk never asks.`;
}

/** The result of a call a deny rule might cover but cannot be checked against (`unchecked`: why not). */
export function uncheckedDenyText(
  tool: string,
  m: { unchecked: string; subject?: string | undefined; rule: string; source?: string | undefined },
): string {
  return `Permission to use ${tool} has been denied: ${m.unchecked}${m.subject ? ` (\`${m.subject}\`)` : ''}, so it cannot be checked against the deny rule ${m.rule}${m.source ? ` (${m.source})` : ''}. Rewrite the call so it can be checked.`;
}

/** The result of a call a deny rule covers (`rule`: the rule described). */
export function deniedByRuleText(tool: string, rule: string): string {
  return `Permission to use ${tool} has been denied by the rule ${rule}.`;
}

/** The result of a call no rule or mode allows (`what`: what was not granted; `rules`: allow rules that would). */
export function notGrantedText(tool: string, what: string, rules: readonly string[], editTool: boolean): string {
  const modes = editTool ? 'a permissionMode such as acceptEdits or bypassPermissions' : 'permissionMode bypassPermissions';
  return `Permission to use ${tool} has not been granted${what}. Allow it with ${rules.length ? `allowedTools: ${JSON.stringify(rules)} or ` : ''}${modes}.`;
}

// ── Subagents (the Task tool) ────────────────────────────────────────────────────────────────

/** The result of a Task call naming an agent type the session does not have. */
export function unknownAgentTypeText(agentType: string, available: readonly string[]): string {
  return `Error: Agent type '${agentType}' not found. Available agents: ${available.join(', ') || '(none)'}`;
}

/** The result of a Task call in a subagent already at `maxSubagentDepth`. */
export function subagentTooDeepText(maxDepth: number, depth: number): string {
  return (
    `Error: subagents may nest at most ${maxDepth} deep (maxSubagentDepth); this session is at depth ${depth}, ` +
    'so it cannot start another. Do the task yourself.'
  );
}

/** The result of a Task call whose child workflow failed or could not start. */
export function subagentFailedText(agentType: string, failure: string | undefined): string {
  return `Error: the ${agentType} subagent failed: ${failure}`;
}

/** The result of a subagent stopped because the session and its subagents reached the budget (`lastWords`: its result, if any). */
export function subagentOverBudgetText(maxBudgetUsd: number | undefined, lastWords: string | undefined): string {
  const partial = lastWords ? ` Its last words: ${lastWords}` : '';
  return `Not finished: the session and its subagents reached the maximum budget ($${maxBudgetUsd}).${partial}`;
}

/** The result of a subagent that ended with an error (`why`: its errors, or its subtype). */
export function subagentStoppedText(agentType: string, subtype: string, why: string, lastWords: string | undefined): string {
  const partial = lastWords ? `\n\nIts last words: ${lastWords}` : '';
  return `Error: the ${agentType} subagent stopped (${subtype}): ${why}${partial}`;
}

/** The result of a subagent that finished without a final text. */
export const SUBAGENT_SAID_NOTHING = '(the subagent said nothing)';
