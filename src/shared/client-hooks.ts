/**
 * Callback hooks answered by a client (ARCHITECTURE.md#callback-hooks): the Claude Agent SDK's
 * `options.hooks` functions live in the process that called `query()`, so the session holds only
 * their declaration — per event, each matcher, its timeout and how many callbacks it has, never a
 * function. When a matcher matches, the workflow records a pending request (the SDK's hook input),
 * emits `system/hook_request`, and waits durably for the `respondToHook` update; no answer within
 * the matcher's timeout is a stated result (`clientHookRuns`). Pure: the workflow, its update
 * validator and the client share it.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { hookMatcherMatches, type HookEvent } from './permissions/settings';
import { CLIENT_HOOK_DEFAULT_TIMEOUT_S, type ClientHookMatcher, type ClientHooks } from './client-hooks-config';
import type { HookInput } from './hook-callbacks';
import type { HookOutput, HookPayload, HookRun } from './hooks';
import { capText, decisionFields } from './hook-output';

export { ClientHookMatcher, ClientHooks } from './client-hooks-config';

/** A hook request waiting for a client's answer, in the workflow's state. */
export interface PendingHookRequest {
  /** Unique within the session: `hook-1`, `hook-2`, … */
  requestId: string;
  event: HookEvent;
  /** Which of the event's matchers in `clientHooks` (its callbacks answer). */
  matcherIndex: number;
  /** The callbacks' first argument, as the SDK defines it for the event. */
  input: HookInput;
  /** Their second argument: the tool call's id for tool events. */
  toolUseId?: string;
  /** How many callbacks the matcher declared. */
  callbacks: number;
  timeoutMs: number;
  requestedAtMs: number;
}

/** What one callback said: its output's decision fields, or why it failed (it threw, or returned something invalid). */
export type HookCallbackResult = { output: HookOutput } | { error: string };

/** The answer to a hook request: one result per callback of the matcher, in order. */
export interface HookAnswer {
  requestId: string;
  results: HookCallbackResult[];
}

/** An error's text kept in history: short, since it is the client's own message. */
const HOOK_ERROR_MAX_CHARS = 1_000;

/** Answer a pending hook request. Rejected (nothing applied) for an unknown or already-answered id, or an invalid result. */
export const respondToHookUpdate = defineUpdate<{ applied: true }, [HookAnswer]>('respondToHook');
/** The session's hook requests waiting for a client (a reconnecting client answers these). */
export const pendingHookRequestsQuery = defineQuery<PendingHookRequest[]>('pendingHookRequests');

/** Why an answer cannot be applied, or null. Pure: the update's validator and clients share it. */
export function hookAnswerProblem(answer: unknown, pending: readonly PendingHookRequest[]): string | null {
  if (!answer || typeof answer !== 'object') return 'respondToHook: the answer must be an object';
  const a = answer as Partial<HookAnswer>;
  if (typeof a.requestId !== 'string' || !a.requestId) return 'respondToHook: `requestId` must be a non-empty string';
  const request = pending.find((p) => p.requestId === a.requestId);
  if (!request) {
    const ids = pending.map((p) => p.requestId);
    return `respondToHook: no pending hook request ${a.requestId} (${ids.length ? `pending: ${ids.join(', ')}` : 'none is pending'}); it may have been answered already, or timed out`;
  }
  if (!Array.isArray(a.results) || a.results.length < 1 || a.results.length > request.callbacks) {
    return `respondToHook: \`results\` must be an array of 1 to ${request.callbacks} results (one per callback of the matcher)`;
  }
  for (const [i, r] of a.results.entries()) {
    const problem = resultProblem(r);
    if (problem) return `respondToHook: results[${i}]${problem}`;
  }
  return null;
}

function resultProblem(r: unknown): string | null {
  if (!r || typeof r !== 'object' || Array.isArray(r)) return ': must be {output} or {error}';
  const has = (k: string) => Object.prototype.hasOwnProperty.call(r, k);
  if (has('output') === has('error')) return ': must have exactly one of `output` and `error`';
  if (has('error')) return typeof (r as { error: unknown }).error === 'string' ? null : '.error: must be a string';
  const filtered = decisionFields((r as { output: unknown }).output);
  return 'problem' in filtered ? `.output: ${filtered.problem}` : null;
}

/** The answer as recorded in state: decision fields only, texts capped. Call after `hookAnswerProblem` said null. */
export function recordedAnswer(answer: HookAnswer): HookAnswer {
  return {
    requestId: answer.requestId,
    results: answer.results.map((r) => {
      if ('error' in r) return { error: capText(r.error, HOOK_ERROR_MAX_CHARS) };
      const filtered = decisionFields(r.output);
      return 'output' in filtered ? { output: filtered.output } : { error: `invalid output: ${filtered.problem}` };
    }),
  };
}

/** The indexes of the event's matchers that match `value` (tool name, source, trigger, agent type). */
export function matchingClientHooks(hooks: ClientHooks | undefined, event: HookEvent, value: string | undefined): number[] {
  const out: number[] = [];
  (hooks?.[event] ?? []).forEach((m, i) => {
    const all = m.matcher === undefined || m.matcher === '' || m.matcher === '*';
    if (all || (value !== undefined && hookMatcherMatches(m.matcher, value))) out.push(i);
  });
  return out;
}

export function clientHookTimeoutMs(m: ClientHookMatcher): number {
  return Math.round((m.timeout ?? CLIENT_HOOK_DEFAULT_TIMEOUT_S) * 1000);
}

/** Where the session is when a hook fires: the fields every SDK hook input has. */
export interface HookInputBase {
  sessionId: string;
  cwd: string;
  permissionMode: string;
  /** In a subagent: its own session id and its name in the parent's `agents`. */
  subagent?: { agentId: string; agentType: string };
}

/** The SDK's hook input for an event, built from the payload command hooks get on stdin. */
export function sdkHookInput(base: HookInputBase, event: HookEvent, payload: HookPayload): HookInput {
  const common = {
    session_id: base.sessionId,
    // The transcript is not a file here: it lives in the session (the `transcript` query).
    transcript_path: '',
    cwd: base.cwd,
    permission_mode: base.permissionMode,
    ...(base.subagent ? { agent_id: base.subagent.agentId, agent_type: base.subagent.agentType } : {}),
  };
  const p = payload;
  const tool = { tool_name: p.tool_name ?? '', tool_input: p.tool_input, tool_use_id: p.tool_use_id ?? '' };
  switch (event) {
    case 'PreToolUse':
      return { ...common, hook_event_name: event, ...tool };
    case 'PostToolUse':
      return { ...common, hook_event_name: event, ...tool, tool_response: p.tool_response };
    case 'PostToolUseFailure':
      return { ...common, hook_event_name: event, ...tool, error: p.error ?? '' };
    case 'UserPromptSubmit':
      return { ...common, hook_event_name: event, prompt: p.prompt ?? '' };
    case 'SessionStart':
      return { ...common, hook_event_name: event, source: p.source === 'resume' ? 'resume' : 'startup' };
    case 'SessionEnd':
      // The SDK's exit reasons: an interactive session closed by its client ended its input; anything else is `other`.
      return { ...common, hook_event_name: event, reason: p.reason === 'closed' ? 'prompt_input_exit' : 'other' };
    case 'Stop':
      return { ...common, hook_event_name: event, stop_hook_active: p.stop_hook_active ?? false };
    case 'SubagentStart':
      return { ...common, hook_event_name: event, agent_id: p.agent_id ?? '', agent_type: p.agent_type ?? '' };
    case 'SubagentStop':
      return {
        ...common,
        hook_event_name: event,
        stop_hook_active: p.stop_hook_active ?? false,
        agent_id: p.agent_id ?? '',
        agent_transcript_path: '',
        agent_type: p.agent_type ?? '',
      };
    case 'PreCompact':
      return { ...common, hook_event_name: event, trigger: p.trigger === 'manual' ? 'manual' : 'auto', custom_instructions: null };
  }
}

/** How a client callback is named in `hook_response` events and messages: `PreToolUse[Bash] callback 1/2 (client)`. */
function clientHookName(event: HookEvent, matcher: ClientHookMatcher, callback?: { index: number }): string {
  const label = `${event}${matcher.matcher ? `[${matcher.matcher}]` : ''}`;
  return callback === undefined ? `${label} callbacks (client)` : `${label} callback ${callback.index + 1}/${matcher.hooks} (client)`;
}

/**
 * What a request's answer — or its absence — counts as, as hook runs folded with the command hooks'
 * (`foldHookRuns`). A callback that failed, or no answer in time, is a non-blocking error, as the
 * SDK treats a failed hook; except that a PreToolUse guard never lets a call through
 * (ARCHITECTURE.md#hooks), and `onFailure: 'block'` blocks a UserPromptSubmit prompt.
 */
export function clientHookRuns(
  request: Pick<PendingHookRequest, 'event' | 'timeoutMs'>,
  matcher: ClientHookMatcher,
  answer: HookAnswer | undefined,
  durationMs: number,
): HookRun[] {
  const { event } = request;
  const blocks = event === 'PreToolUse' || (event === 'UserPromptSubmit' && matcher.onFailure === 'block');
  const failed = (hook: string, why: string) =>
    blocks
      ? event === 'PreToolUse'
        ? `The PreToolUse callback hook ${hook} ${why}, so the call was denied: a guard hook that cannot run never lets a call through.`
        : `the callback hook ${hook} ${why} (onFailure: 'block')`
      : undefined;
  if (!answer) {
    const hook = clientHookName(event, matcher);
    const error = `no client answered within ${request.timeoutMs / 1000} s`;
    const blockReason = failed(hook, `got no answer (${error})`);
    return [{ hook, outcome: 'timeout', exitCode: null, durationMs, error, ...(blockReason ? { blockReason } : {}) }];
  }
  return answer.results.map((r, index) => {
    const hook = clientHookName(event, matcher, { index });
    if ('output' in r)
      return { hook, outcome: 'success', exitCode: null, durationMs, ...(Object.keys(r.output).length ? { output: r.output } : {}) };
    const blockReason = failed(hook, `failed (${r.error})`);
    return { hook, outcome: 'error', exitCode: null, durationMs, error: r.error, ...(blockReason ? { blockReason } : {}) };
  });
}
