/**
 * Answering permission requests from a program: the Claude Agent SDK's `canUseTool` callback,
 * called for each pending request a client sees and turned into a `respondToPermission` update.
 * The request lives in the workflow (ARCHITECTURE.md#durable-approval), so a client that goes away
 * before answering leaves it pending for any other client; when two clients answer, the first
 * answer is applied and the second is refused, which is not an error here.
 */
import { answerPending, onceEachResponder, sendAnswer, type Responder as GenericResponder } from './responder';
import { answerProblem, type PendingPermission, type PermissionAnswer } from '../shared/approvals';
import type { PermissionRequestMessage } from '../shared/events';

export type { PermissionRuleValue, PermissionUpdate } from '../shared/permission-update';
import type { PermissionRuleValue, PermissionUpdate } from '../shared/permission-update';

export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: Record<string, unknown>; updatedPermissions?: PermissionUpdate[]; toolUseID?: string }
  | { behavior: 'deny'; message: string; interrupt?: boolean; toolUseID?: string };

export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: {
    /** Aborted when this client stops (its query was broken off): the request then stays pending for others. */
    signal: AbortSignal;
    /** Rules that would cover this call, as one `addRules` update for the session. */
    suggestions?: PermissionUpdate[];
    blockedPath?: string;
    /** Why it asks: the rule that matched, or that nothing allows the call in this mode. */
    decisionReason?: string;
    toolUseID: string;
    /** The pending request's id (what `durable-agent approve SESSION REQUEST` takes). */
    requestId: string;
    agentID?: string;
  },
  // The SDK's callbacks may answer null: that is no answer, and the call is denied saying so.
) => Promise<PermissionResult | null>;

/** What answering needs from a session (SessionHandle has it). */
export interface PermissionSession {
  pendingPermissions(): Promise<PendingPermission[]>;
  respond(answer: PermissionAnswer): Promise<unknown>;
  isOpen(): Promise<boolean>;
}

export type PermissionRequestLike = Pick<PendingPermission, 'requestId' | 'toolName' | 'toolUseId' | 'input' | 'message' | 'suggestions'>;

export function requestFromEvent(m: PermissionRequestMessage): PermissionRequestLike {
  return {
    requestId: m.request_id,
    toolName: m.tool_name,
    toolUseId: m.tool_use_id,
    input: m.tool_input,
    message: m.message,
    suggestions: m.suggestions,
  };
}

/** `Bash(npm test)` → `{toolName: 'Bash', ruleContent: 'npm test'}`. */
function ruleValue(rule: string): PermissionRuleValue {
  const m = /^([^(]+)\(([\s\S]*)\)$/.exec(rule);
  return m ? { toolName: m[1]!, ruleContent: m[2]! } : { toolName: rule };
}

function suggestionsAsUpdates(rules: readonly string[]): PermissionUpdate[] | undefined {
  return rules.length ? [{ type: 'addRules', rules: rules.map(ruleValue), behavior: 'allow', destination: 'session' }] : undefined;
}

/** The SDK's answer as our update's. A malformed answer is a denial that says why, so the session never waits on a bug. */
function answerFor(request: PermissionRequestLike, result: PermissionResult | null): PermissionAnswer {
  const r = result as Partial<PermissionResult> | undefined;
  let answer: PermissionAnswer;
  if (r?.behavior === 'allow') {
    const changed = r.updatedInput !== undefined && JSON.stringify(r.updatedInput) !== JSON.stringify(request.input);
    answer = {
      requestId: request.requestId,
      behavior: 'allow',
      ...(changed ? { updatedInput: r.updatedInput } : {}),
      ...(r.updatedPermissions?.length ? { always: true } : {}),
    };
  } else {
    const d = r as { behavior?: unknown; message?: unknown; interrupt?: unknown } | undefined;
    answer = {
      requestId: request.requestId,
      behavior: 'deny',
      message: d?.message as string,
      ...(d?.interrupt ? { interrupt: true } : {}),
    };
    if (d?.behavior !== 'deny')
      answer.message = `canUseTool returned neither {behavior: 'allow'} nor {behavior: 'deny', message}; ${request.toolName} was not run.`;
  }
  const problem = answerProblem(answer, [request as PendingPermission]);
  return problem
    ? {
        requestId: request.requestId,
        behavior: 'deny',
        message: `canUseTool returned an invalid answer (${problem}); ${request.toolName} was not run.`,
      }
    : answer;
}

/** Calls canUseTool for a request and sends the answer (once per request id). */
export type Responder = GenericResponder<PermissionRequestLike>;

/** Answers requests with `canUseTool` until `signal` aborts; then nothing more is sent. */
export function permissionResponder(session: PermissionSession, canUseTool: CanUseTool, signal: AbortSignal): Responder {
  const answerOne = async (request: PermissionRequestLike) => {
    let result: PermissionResult | null;
    try {
      const input = (request.input && typeof request.input === 'object' ? request.input : {}) as Record<string, unknown>;
      result = await canUseTool(request.toolName, input, {
        signal,
        suggestions: suggestionsAsUpdates(request.suggestions),
        decisionReason: request.message,
        toolUseID: request.toolUseId,
        requestId: request.requestId,
      });
    } catch (e) {
      if (signal.aborted) return;
      result = {
        behavior: 'deny',
        message: `The permission callback failed (${(e as Error)?.message ?? String(e)}); ${request.toolName} was not run.`,
      };
    }
    // This client is going away: leave the request pending for another.
    if (signal.aborted) return;
    await send(session, answerFor(request, result), signal);
  };
  return onceEachResponder((r) => r.requestId, answerOne, signal);
}

/** Send one answer; refused (another client answered first, or the session moved on) is fine. */
function send(session: PermissionSession, answer: PermissionAnswer, signal: AbortSignal): Promise<void> {
  return sendAnswer(
    () => session.respond(answer),
    () => session.isOpen(),
    signal,
  );
}

/**
 * Answer a session's pending requests with `canUseTool` — including ones another client saw and
 * abandoned — until `signal` aborts or the session closes. Polls the `pendingPermissions` query.
 */
export async function answerPermissions(
  session: PermissionSession,
  canUseTool: CanUseTool,
  opts: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  const responder = permissionResponder(session, canUseTool, stop.signal);
  try {
    await answerPending(
      () => session.pendingPermissions(),
      () => session.isOpen(),
      responder,
      { signal: stop.signal, pollMs: opts.pollMs },
    );
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
