/**
 * Firing hooks from the turn (ARCHITECTURE.md#hooks). The workflow knows, from `loadSettings`
 * at start, which events have hooks and their matchers — never their commands — so it calls
 * the `runHooks` activity only when one matches; and, from `clientHooks`, which callback hooks
 * the client holds, so it asks the client only when one of those matches
 * (ARCHITECTURE.md#callback-hooks). Every hook run is an event in the stream; a hook that fails is
 * a non-blocking error, never a dead session — except a PreToolUse hook that cannot run at all,
 * which denies the call (the activity says so in `blockReason`; here, when the activity itself
 * fails, or no client answers).
 */
import { ActivityFailure, isCancellation, patched } from '@temporalio/workflow';
import {
  anyMatcherMatches,
  foldHookRuns,
  type HookActivities,
  type HookEvent,
  type HookPayload,
  type HookRun,
  type HookVerdict,
  type RunHooksInput,
} from '../../shared/hooks';
import {
  clientHookRuns,
  clientHookTimeoutMs,
  matchingClientHooks,
  sdkHookInput,
  type HookAnswer,
  type PendingHookRequest,
} from '../../shared/client-hooks';
import type { EventLog, LoopState } from './state';
import { awaitClientAnswer } from './client-answers';
import { PATCHES } from '../../shared/compat';
import { hooksFailedBlock } from '../../shared/model-texts';

export interface HookDeps {
  state: LoopState;
  log: EventLog;
  hooks: HookActivities;
}

/**
 * Run the event's matching hooks — command and code hooks on the tools worker; callback hooks by
 * asking the client, at the same time (`fireWithClient`) — and fold what they said; null when
 * none matches (nothing is called).
 */
export async function fireHooks(
  deps: HookDeps,
  event: HookEvent,
  matchValue: string | undefined,
  payload: HookPayload,
): Promise<HookVerdict | null> {
  const asks = matchingClientHooks(deps.state.config.clientHooks, event, matchValue);
  if (asks.length > 0) return fireWithClient(deps, event, matchValue, payload, asks);
  // Without callback hooks, the steps (and their awaits) are the ones recorded histories took.
  const { state } = deps;
  const settings = state.settings;
  if (!settings || !anyMatcherMatches(settings.hookMatchers[event], matchValue)) return null;
  let runs;
  try {
    runs = await deps.hooks.runHooks(runHooksInput(state, event, matchValue, payload));
  } catch (e) {
    return workerHooksFailed(deps, event, e);
  }
  return applyRuns(deps, event, runs);
}

async function fireWithClient(
  deps: HookDeps,
  event: HookEvent,
  matchValue: string | undefined,
  payload: HookPayload,
  asks: number[],
): Promise<HookVerdict> {
  const settings = deps.state.settings;
  const onWorker = settings !== null && anyMatcherMatches(settings.hookMatchers[event], matchValue);
  const fromWorker = async (): Promise<HookRun[] | { failed: HookVerdict | null }> => {
    try {
      return await deps.hooks.runHooks(runHooksInput(deps.state, event, matchValue, payload));
    } catch (e) {
      return { failed: workerHooksFailed(deps, event, e) };
    }
  };
  const [worker, client] = await Promise.all([onWorker ? fromWorker() : [], askClient(deps, event, asks, payload)]);
  // A gate that could not run never lets the call through, whatever the callbacks said.
  if ('failed' in worker && worker.failed) return worker.failed;
  return applyRuns(deps, event, [...(Array.isArray(worker) ? worker : []), ...client]);
}

function runHooksInput(state: LoopState, event: HookEvent, matchValue: string | undefined, payload: HookPayload): RunHooksInput {
  const cfg = state.config;
  const settings = state.settings!;
  return {
    event,
    sessionId: state.sessionId,
    cwd: cfg.cwd,
    permissionMode: state.permissionMode,
    ...(matchValue === undefined ? {} : { matchValue }),
    hooks: cfg.hooks,
    settingSources: cfg.settingSources,
    ...(cfg.settingsFile ? { settingsFile: cfg.settingsFile } : {}),
    payload,
    env: cfg.env,
    ...(cfg.sandbox === undefined ? {} : { sandbox: cfg.sandbox }),
    additionalDirectories: cfg.additionalDirectories,
    ...(settings.hooksDigest ? { hooksDigest: settings.hooksDigest } : {}),
  };
}

/**
 * The `runHooks` activity failed: the verdict that denies a PreToolUse call, or null (a warning
 * says so, and the event goes on without those hooks). Rethrows anything but an activity failure.
 */
function workerHooksFailed(deps: HookDeps, event: HookEvent, e: unknown): HookVerdict | null {
  if (isCancellation(e) || !(e instanceof ActivityFailure)) throw e;
  const { log } = deps;
  const why = e.cause?.message ?? e.message;
  // A gate that could not run never lets the call through (ARCHITECTURE.md#hooks). Sessions
  // recorded before this went on without their PreToolUse hooks; the marker is written only here.
  if (event === 'PreToolUse' && patched(PATCHES.hooksFailClosed.id)) {
    log.emit({ type: 'system', subtype: 'warning', message: `PreToolUse hooks could not run; the call is denied: ${why}` });
    return {
      block: hooksFailedBlock(why),
      additionalContext: [],
      systemMessages: [],
    };
  }
  log.emit({
    type: 'system',
    subtype: 'warning',
    message: `${event} hooks could not run; continuing without them: ${why}`,
  });
  return null;
}

/** Every run is a `hook_response` event; what they decided is folded into the verdict the loop acts on. */
function applyRuns(deps: HookDeps, event: HookEvent, runs: HookRun[]): HookVerdict {
  const { state, log } = deps;
  for (const run of runs) {
    const stdout = run.output ? JSON.stringify(run.output) : '';
    const stderr = run.blockReason ?? run.error ?? '';
    log.emit({
      type: 'system',
      subtype: 'hook_response',
      hook_id: `hook-${state.nextSeq}`,
      hook_name: run.hook,
      hook_event: event,
      outcome: run.outcome === 'success' ? 'success' : 'error',
      hook_outcome: run.outcome,
      exit_code: run.exitCode ?? undefined,
      output: [stdout, stderr].filter(Boolean).join('\n'),
      stdout,
      stderr,
    });
  }
  const verdict = foldHookRuns(runs);
  for (const message of verdict.systemMessages) log.emit({ type: 'system', subtype: 'warning', message });
  // Context a hook adds reaches the model with its next request.
  state.context.pendingNotices.push(...verdict.additionalContext);
  if (verdict.stop !== undefined) state.turn.hookStop ??= verdict.stop;
  return verdict;
}

/**
 * Ask the client for each matching matcher's callbacks (ARCHITECTURE.md#callback-hooks): a pending
 * request in state, a `hook_request` event, and a durable wait for `respondToHook` — through worker
 * crashes and client reconnects — until the matcher's timeout. The requests of one event wait
 * together; cancelling the turn cancels the wait, and the requests are withdrawn either way.
 */
async function askClient(deps: HookDeps, event: HookEvent, matcherIndexes: number[], payload: HookPayload): Promise<HookRun[]> {
  const { state, log } = deps;
  const cfg = state.config;
  const requests = (state.client.hookRequests ??= { pending: [], answers: {}, nextId: 0 });
  const input = sdkHookInput(
    {
      sessionId: state.sessionId,
      cwd: cfg.cwd,
      permissionMode: state.permissionMode,
      ...(cfg.subagent ? { subagent: { agentId: state.sessionId, agentType: cfg.subagent.agentType } } : {}),
    },
    event,
    payload,
  );
  const runs = await Promise.all(
    matcherIndexes.map(async (matcherIndex) => {
      const matcher = cfg.clientHooks![event]![matcherIndex]!;
      const request: PendingHookRequest = {
        requestId: `hook-${++requests.nextId}`,
        event,
        matcherIndex,
        input,
        ...(payload.tool_use_id !== undefined ? { toolUseId: payload.tool_use_id } : {}),
        callbacks: matcher.hooks,
        timeoutMs: clientHookTimeoutMs(matcher),
        requestedAtMs: Date.now(),
      };
      requests.pending.push(request);
      log.emit({
        type: 'system',
        subtype: 'hook_request',
        request_id: request.requestId,
        request_session_id: state.sessionId,
        hook_event: event,
        matcher_index: matcherIndex,
        hook_input: input,
        ...(request.toolUseId !== undefined ? { tool_use_id: request.toolUseId } : {}),
        timeout_ms: request.timeoutMs,
      });
      const answer = await awaitClientAnswer<HookAnswer>(requests, request.requestId, request.timeoutMs);
      return clientHookRuns(request, matcher, answer, Date.now() - request.requestedAtMs);
    }),
  );
  return runs.flat();
}
