/**
 * Callback hooks answered by the process that called `query()` (ARCHITECTURE.md#callback-hooks),
 * as `canUseTool` answers permission requests (src/client/permissions.ts): the session holds only
 * their declaration (`clientHooks`); for each `system/hook_request` this client sees, it calls the
 * matcher's callbacks in order with the SDK's `(input, toolUseID, { signal })` and sends what each
 * said with the `respondToHook` update. The request lives in the workflow, so a client that goes
 * away before answering leaves it pending for another (`answerHooks`), until its timeout.
 */
import { onceEachResponder, sendAnswer, sleep, type Responder } from './responder';
import { ConfigError } from '../shared/config-error';
import type { ClientHookMatcher, ClientHooks, HookAnswer, HookCallbackResult, PendingHookRequest } from '../shared/client-hooks';
import { HOOK_EVENTS, type HookEvent } from '../shared/permissions/settings';
import type { HooksSettings } from '../shared/hooks';
import type { CommandHook } from '../shared/permissions/settings';
import type { HookInput } from '../shared/hook-callbacks';
import { decisionFields } from '../shared/hook-output';
import type { HookRequestMessage } from '../shared/events';

/** A callback as the SDK types it (`HookCallback`); what it returns is read as the SDK's `HookJSONOutput`. */
export type HookCallbackFunction = (input: HookInput, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<unknown>;

/** The callbacks of each declared matcher, by event, in the declaration's order. */
export type HookCallbackTable = Partial<Record<HookEvent, HookCallbackFunction[][]>>;

/** `options.hooks` as query() takes it: the SDK's matchers, whose hooks are callbacks or (ours) command hooks. */
export type HooksOption = Partial<
  Record<string, { matcher?: string; hooks: unknown[]; timeout?: number; onFailure?: 'continue' | 'block' }[] | undefined>
>;

/** What a hooks option holds, split: command hooks (run on the tools worker) and callbacks (answered here). */
export interface SplitHooks {
  commands: HooksSettings;
  /** The declaration the session carries: no functions. */
  declaration?: ClientHooks;
  /** The functions, indexed like the declaration. */
  callbacks?: HookCallbackTable;
}

const refuse = (field: string, why: string) => new ConfigError(`option ${field} is not supported by durable-agent: ${why}`, field);

/**
 * Split `options.hooks`. An event the SDK names but durable-agent does not fire is refused by name,
 * for commands and callbacks alike; a matcher may mix both (its `timeout` then bounds the callbacks
 * only, so it is refused: give each command its own).
 */
export function splitHooks(hooks: HooksOption): SplitHooks {
  const commands: Record<string, { matcher?: string; hooks: CommandHook[] }[]> = {};
  const declaration: Record<string, ClientHookMatcher[]> = {};
  const callbacks: Record<string, HookCallbackFunction[][]> = {};
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue;
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      throw refuse(`hooks.${event}`, `durable-agent does not fire ${event}; the hook events it fires are ${HOOK_EVENTS.join(', ')}`);
    }
    for (const [i, m] of (Array.isArray(matchers) ? matchers : []).entries()) {
      const list = Array.isArray(m?.hooks) ? m.hooks : [];
      const fns = list.filter((h): h is HookCallbackFunction => typeof h === 'function');
      const cmds = list.filter((h) => typeof h !== 'function') as CommandHook[];
      const matcher = m.matcher !== undefined ? { matcher: m.matcher } : {};
      if (cmds.length > 0 || fns.length === 0) {
        if (m.timeout !== undefined) throw refuse(`hooks.${event}[${i}].timeout`, 'give each command hook its own timeout');
        (commands[event] ??= []).push({ ...matcher, hooks: cmds });
      }
      if (fns.length > 0) {
        (declaration[event] ??= []).push({
          ...matcher,
          hooks: fns.length,
          ...(m.timeout !== undefined ? { timeout: m.timeout } : {}),
          ...(m.onFailure !== undefined ? { onFailure: m.onFailure } : {}),
        });
        (callbacks[event] ??= []).push(fns);
      }
    }
  }
  const some = Object.keys(declaration).length > 0;
  return {
    commands: commands as HooksSettings,
    ...(some ? { declaration: declaration as ClientHooks, callbacks: callbacks as HookCallbackTable } : {}),
  };
}

/** A function among `hooks` (session options, not query()): the event and matcher it is in, or undefined. */
export function firstCallback(hooks: unknown): string | undefined {
  if (!hooks || typeof hooks !== 'object') return undefined;
  for (const [event, matchers] of Object.entries(hooks)) {
    for (const [i, m] of (Array.isArray(matchers) ? matchers : []).entries()) {
      const list = (m as { hooks?: unknown } | null)?.hooks;
      if (Array.isArray(list) && list.some((h) => typeof h === 'function')) return `hooks.${event}[${i}]`;
    }
  }
  return undefined;
}

/** One request as the responder needs it: which session holds it, and what the callbacks get. */
export interface HookRequestLike {
  sessionId: string;
  requestId: string;
  event: HookEvent;
  matcherIndex: number;
  input: HookInput;
  toolUseId?: string;
  timeoutMs: number;
}

export function hookRequestFromEvent(m: HookRequestMessage): HookRequestLike {
  return {
    sessionId: m.request_session_id,
    requestId: m.request_id,
    event: m.hook_event,
    matcherIndex: m.matcher_index,
    input: m.hook_input,
    ...(m.tool_use_id !== undefined ? { toolUseId: m.tool_use_id } : {}),
    timeoutMs: m.timeout_ms,
  };
}

function hookRequestFromPending(sessionId: string, p: PendingHookRequest): HookRequestLike {
  return {
    sessionId,
    requestId: p.requestId,
    event: p.event,
    matcherIndex: p.matcherIndex,
    input: p.input,
    ...(p.toolUseId !== undefined ? { toolUseId: p.toolUseId } : {}),
    // What is left of its wait is not known here (clocks differ): the whole timeout bounds the callbacks.
    timeoutMs: p.timeoutMs,
  };
}

/** What a callback returned, as the result sent for it: its decision fields, or why they cannot be used. */
export function callbackResult(returned: unknown): HookCallbackResult {
  if (returned === undefined || returned === null) return { output: {} };
  if (typeof returned !== 'object' || Array.isArray(returned)) return { error: 'returned something other than an object' };
  // `{async: true}`: the SDK runs it in the background and waits for no decision.
  if ((returned as { async?: unknown }).async === true) return { output: {} };
  const filtered = decisionFields(withoutDefer(returned as Record<string, unknown>));
  return 'output' in filtered ? { output: filtered.output } : { error: `returned invalid output: ${filtered.problem}` };
}

/** The SDK's `permissionDecision: 'defer'` leaves the call to the permission rules, as no decision does. */
function withoutDefer(out: Record<string, unknown>): Record<string, unknown> {
  const specific = out.hookSpecificOutput as Record<string, unknown> | undefined;
  if (specific?.permissionDecision !== 'defer') return out;
  const { permissionDecision: _d, ...rest } = specific;
  return { ...out, hookSpecificOutput: rest };
}

/** Call the callbacks in order; undefined when `leaving` aborted (this client went away: the request stays pending). */
export async function runCallbacks(
  fns: readonly HookCallbackFunction[],
  request: HookRequestLike,
  leaving: AbortSignal,
): Promise<HookCallbackResult[] | undefined> {
  // The callbacks' signal: aborted when this client goes away, or when the session stops waiting.
  const signal = AbortSignal.any([leaving, AbortSignal.timeout(request.timeoutMs)]);
  const results: HookCallbackResult[] = [];
  for (const fn of fns) {
    try {
      const returned = await fn(request.input, request.toolUseId, { signal });
      if (leaving.aborted) return undefined;
      results.push(callbackResult(returned));
    } catch (e) {
      if (leaving.aborted) return undefined;
      results.push({ error: `threw: ${(e as Error)?.message ?? String(e)}` });
    }
  }
  return results;
}

/** What answering needs from a session (SessionHandle has it). */
export interface HookSession {
  readonly sessionId: string;
  pendingHookRequests(): Promise<PendingHookRequest[]>;
  respondToHook(answer: HookAnswer): Promise<unknown>;
  isOpen(): Promise<boolean>;
}

/** Calls a request's callbacks and sends their results (once per request). */
export type HookResponder = Responder<HookRequestLike>;

/** Answers hook requests with `table`'s callbacks until `signal` aborts; then nothing more is sent. */
export function hookResponder(
  sessionFor: (sessionId: string) => Promise<HookSession>,
  table: HookCallbackTable,
  signal: AbortSignal,
): HookResponder {
  const answerOne = async (request: HookRequestLike) => {
    const fns = table[request.event]?.[request.matcherIndex];
    // Not ours (another client's declaration): leave it to that client.
    if (!fns?.length) return;
    const results = await runCallbacks(fns, request, signal);
    if (!results || signal.aborted) return;
    const session = await sessionFor(request.sessionId).catch(() => undefined);
    if (session) await send(session, { requestId: request.requestId, results }, signal);
  };
  return onceEachResponder((r) => `${r.sessionId}\n${r.requestId}`, answerOne, signal);
}

/** Send one answer; refused (answered already, timed out, session gone) is fine. */
function send(session: HookSession, answer: HookAnswer, signal: AbortSignal): Promise<void> {
  return sendAnswer(
    () => session.respondToHook(answer),
    () => session.isOpen(),
    signal,
  );
}

/**
 * Answer a session's pending hook requests — and its running subagents' — with the callbacks of
 * `hooks` (the same `options.hooks` given to `query()`), including requests another client saw and
 * left, until `signal` aborts or the session closes. Polls the `pendingHookRequests` query.
 */
export function answerHooks(
  session: PolledSession,
  hooks: HooksOption,
  opts: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<void> {
  return answerHookRequests(session, splitHooks(hooks).callbacks ?? {}, opts);
}

/** `answerHooks` with the callbacks already split out of `options.hooks`. */
async function answerHookRequests(
  session: PolledSession,
  table: HookCallbackTable,
  opts: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  const known = new Map<string, HookSession>([[session.sessionId, session]]);
  const responder = hookResponder(async (id) => known.get(id) ?? session, table, stop.signal);
  try {
    await pollHookRequests(session, responder, { signal: stop.signal, pollMs: opts.pollMs, seen: known });
    await responder.settled();
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

export type PolledSession = HookSession & { subagentSessions?(): Promise<HookSession[]> };

/**
 * Hand `responder` every pending request of the session and of its running subagents, polling until
 * `signal` aborts or the session closes. A responder that has seen a request (in the stream) does
 * not answer it twice.
 */
export async function pollHookRequests(
  session: PolledSession,
  responder: HookResponder,
  opts: { signal: AbortSignal; pollMs?: number; seen?: Map<string, HookSession> },
): Promise<void> {
  const { signal } = opts;
  while (!signal.aborted) {
    const sessions = [session, ...((await session.subagentSessions?.().catch(() => [])) ?? [])];
    for (const s of sessions) {
      opts.seen?.set(s.sessionId, s);
      try {
        for (const p of await s.pendingHookRequests()) responder.handle(hookRequestFromPending(s.sessionId, p));
      } catch {
        // No worker answered the query in time, or the subagent ended: the requests wait in the workflow; ask again.
      }
    }
    if (!(await session.isOpen().catch(() => true))) return;
    await Promise.race([sleep(opts.pollMs ?? 500), new Promise((r) => signal.addEventListener('abort', r, { once: true }))]);
  }
}
