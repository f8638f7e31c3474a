/**
 * Per-turn workspace checkpoints and host loss, in the workflow (ARCHITECTURE.md#checkpoints). The
 * tools host does the work (a git commit of the folder in a repository outside it, pushed to the
 * checkpoint remote); the workflow records only each checkpoint's id, decides when to take one,
 * and, when the host its tools are pinned to stops answering, has the folder restored on another
 * host from the last checkpoint the remote holds.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure, patched, workflowInfo } from '@temporalio/workflow';
import { mayChangeWorkspace, type CheckpointActivities, type CheckpointRecord } from '../../shared/checkpoint';
import type { ToolUseBlock } from '../../shared/messages';
import type { SessionActivities } from './activity-stubs';
import { sessionTurn, type EventLog, type LoopState } from './state';
import { checkpointsOn } from '../../shared/batch';
import { PATCHES } from '../../shared/compat';

/** A worker polls its queue at least this often while it lives (a long poll lasts a minute). */
export const POLLER_FRESH_MS = 75_000;

/** The failure type a session ends with when its host is lost and its folder cannot be restored. */
const HOST_LOST = 'WorkspaceHostLost';

export function hostLostFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: HOST_LOST, message, nonRetryable: true });
}

export function isHostLostFailure(e: unknown): e is ApplicationFailure {
  return e instanceof ApplicationFailure && e.type === HOST_LOST;
}

/**
 * At a new session's start: whether it keeps checkpoints. Asked before any activity, so the
 * marker is the first command of a session that takes them.
 */
export function startCheckpoints(state: LoopState): void {
  // A subagent works in its parent's folder: the parent checkpoints it after the Task turn.
  if (state.files.checkpoints || state.config.subagent || !checkpointsOn(state.config)) return;
  // Started by a client that says so: no marker needed. Without it (an earlier client, a recorded
  // history): the marker decides, so a session recorded before checkpoints never takes one.
  if (state.config.checkpoints === undefined && !patched(PATCHES.workspaceCheckpoints.id)) return;
  state.files.checkpoints = { run: workflowInfo().firstExecutionRunId, list: [] };
}

/** A turn whose tools may have changed the folder is checkpointed at its end. */
export function turnChangesWorkspace(calls: ToolUseBlock[]): boolean {
  return calls.some((c) => mayChangeWorkspace(c.name));
}

/**
 * Record the folder as it is now, as the checkpoint of the session's current turn. A checkpoint
 * that cannot be made or pushed does not stop the session: it is reported (a `warning` event, the
 * `checkpoints` query's `failing`), and a host loss then finds nothing newer to restore.
 */
export async function takeCheckpoint(
  state: LoopState,
  log: EventLog,
  checkpointWorkspace: CheckpointActivities['checkpointWorkspace'],
): Promise<void> {
  const cp = state.files.checkpoints;
  if (!cp || state.config.cwd === '') return;
  const turn = sessionTurn(state);
  const last = cp.list[cp.list.length - 1];
  try {
    const r = await checkpointWorkspace({
      sessionId: state.sessionId,
      path: state.config.cwd,
      run: cp.run,
      turn,
      ...(last ? { parent: last.commit } : {}),
    });
    cp.list.push({ turn, commit: r.commit, ref: r.ref, pushed: r.pushed });
    if (r.pushed === 'failed')
      reportFailing(
        state,
        log,
        `the checkpoint of turn ${turn} was kept on the tools host but not pushed: ${r.pushError ?? 'unknown error'}`,
      );
    else delete cp.failing;
  } catch (e) {
    if (!(e instanceof ActivityFailure)) throw e;
    reportFailing(state, log, `the checkpoint of turn ${turn} could not be made: ${e.cause?.message ?? e.message}`);
  }
}

function reportFailing(state: LoopState, log: EventLog, why: string): void {
  const cp = state.files.checkpoints!;
  const first = cp.failing === undefined;
  cp.failing = why;
  // Once per failing streak: a remote that is down would otherwise warn on every turn.
  if (first) log.emit({ type: 'system', subtype: 'warning', message: `Checkpointing is failing: ${why}` });
}

/** How a pinned-host activity failed, when the way it failed may mean the host is gone. */
export function hostTimeout(e: unknown): 'not_started' | 'timed_out' | undefined {
  if (!(e instanceof ActivityFailure)) return undefined;
  const cause = e.cause;
  if (!(cause instanceof TimeoutFailure)) return undefined;
  return cause.timeoutType === 'SCHEDULE_TO_START' ? 'not_started' : 'timed_out';
}

/** The last checkpoint another host can fetch: only those the remote holds. */
export function lastRestorable(state: LoopState): CheckpointRecord | undefined {
  const list = state.files.checkpoints?.list ?? [];
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.pushed === 'remote') return list[i];
  return undefined;
}

/** The activity groups that run on the session's tools host (the rest run anywhere). */
const ON_HOST = ['tools', 'inspect', 'mcp', 'hooks', 'setup', 'workspace'] as const;
/** Workspace activities that run on the shared tools queue, never the pinned host. */
const ANY_HOST: ReadonlySet<string> = new Set(['provisionWorkspace', 'restoreWorkspace']);

/**
 * The session's activities with every call to its tools host run through `onHost`, which handles
 * a lost host; each attempt calls the activities current at that moment (re-pinned after a restore).
 */
export function onLiveHost(current: () => SessionActivities, onHost: <T>(fn: () => Promise<T>) => Promise<T>): SessionActivities {
  const guarded = { ...current() };
  for (const group of ON_HOST) {
    const proxy = new Proxy(
      {},
      {
        get(_target, name) {
          // Not a thenable: an async function returning the group must not call an activity `then`.
          if (typeof name !== 'string' || name === 'then') return undefined;
          const call = (...args: unknown[]) =>
            (current()[group] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!(...args);
          if (group === 'workspace' && ANY_HOST.has(name)) return call;
          return (...args: unknown[]) => onHost(() => call(...args));
        },
      },
    );
    (guarded as Record<string, unknown>)[group] = proxy;
  }
  return guarded;
}
