/**
 * Firing hooks from the turn (ARCHITECTURE.md#hooks). The workflow knows, from `loadSettings`
 * at start, which events have hooks and their matchers — never their commands — so it calls
 * the `runHooks` activity only when one matches. Every hook run is an event in the stream; a hook
 * that fails is a non-blocking error, never a dead session — except a PreToolUse hook that cannot
 * run at all, which denies the call (the activity says so in `blockReason`; here, when the
 * activity itself fails).
 */
import { ActivityFailure, isCancellation, patched } from '@temporalio/workflow';
import { anyMatcherMatches, foldHookRuns, type HookActivities, type HookEvent, type HookPayload, type HookVerdict } from '../shared/hooks';
import type { EventLog, LoopState } from './state';

export interface HookDeps {
  state: LoopState;
  log: EventLog;
  hooks: HookActivities;
}

/** Marks runs where a failed `runHooks` activity denies the PreToolUse call instead of skipping its hooks. */
export const HOOKS_FAIL_CLOSED_PATCH = 'pretooluse-hooks-fail-closed';

/** Run the event's matching hooks; null when none matches (no activity is called). */
export async function fireHooks(
  deps: HookDeps,
  event: HookEvent,
  matchValue: string | undefined,
  payload: HookPayload,
): Promise<HookVerdict | null> {
  const { state, log } = deps;
  const settings = state.settings;
  if (!settings || !anyMatcherMatches(settings.hookMatchers[event], matchValue)) return null;
  const cfg = state.config;
  let runs;
  try {
    runs = await deps.hooks.runHooks({
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
    });
  } catch (e) {
    if (isCancellation(e) || !(e instanceof ActivityFailure)) throw e;
    const why = e.cause?.message ?? e.message;
    // A gate that could not run never lets the call through (ARCHITECTURE.md#hooks). Sessions
    // recorded before this went on without their PreToolUse hooks; the marker is written only here.
    if (event === 'PreToolUse' && patched(HOOKS_FAIL_CLOSED_PATCH)) {
      log.emit({ type: 'system', subtype: 'warning', message: `PreToolUse hooks could not run; the call is denied: ${why}` });
      return {
        block: `The PreToolUse hooks could not run (${why}), so the call was denied: a guard hook that cannot run never lets a call through.`,
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
  state.pendingNotices.push(...verdict.additionalContext);
  if (verdict.stop !== undefined) state.turn.hookStop ??= verdict.stop;
  return verdict;
}
