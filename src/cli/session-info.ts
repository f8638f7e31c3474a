/**
 * One session's facts for scripts (`durable-agent info ID --json`): where it stands (describe and
 * our search attributes), and once it has ended what its result says — cost, turns, its workspace
 * and verdict (ARCHITECTURE.md#workspaces) — and its checkpoints (ARCHITECTURE.md#checkpoints).
 * Never the patch: `durable-agent diff ID` prints that.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import * as api from '../shared/api';
import { buildOf } from '../client/visibility';
import type { SessionOptions } from '../shared/config';
import type { CheckpointRecord, CheckpointsView } from '../shared/checkpoint';
import type { ResultMessage } from '../shared/events';
import type { Verdict, VerifyReport, WorkspaceReport } from '../shared/workspace';

/** A workspace as `info` shows it: everything but the patch. */
type WorkspaceInfo = Omit<WorkspaceReport, 'patch'>;

export interface SessionInfo {
  id: string;
  /** Ours (running, waiting_for_input, completed, failed, …); `interrupted` for a run cancelled, terminated or timed out. */
  status: string;
  /** Temporal's: RUNNING, COMPLETED, FAILED, … */
  executionStatus: string;
  cwd: string | null;
  model: string | null;
  batchId: string | null;
  workspace: WorkspaceInfo | null;
  verdict: Verdict | null;
  verify: VerifyReport | null;
  costUsd: number | null;
  turns: number | null;
  durationMs: number | null;
  error: string | null;
  startTime: string;
  closeTime: string | null;
  /** The workspace checkpoints by turn; null for a session from before checkpoints (or when they cannot be read). */
  checkpoints: CheckpointRecord[] | null;
  /** Why the last checkpoint could not be made or pushed. */
  checkpointsFailing: string | null;
  /** The build of the worker deployment its run is pinned to (ARCHITECTURE.md#deploys); null when unversioned. */
  buildId: string | null;
}

/** What `infoFrom` is built from: the parts of a describe it reads, and the result or failure once closed. */
export interface InfoSources {
  id: string;
  executionStatus: string;
  searchAttributes: Record<string, unknown[] | undefined>;
  memo?: Record<string, unknown>;
  startTime: Date;
  closeTime?: Date;
  result?: ResultMessage;
  /** Why a closed run has no result (failed, terminated, …). */
  failure?: string;
  /** The `cwd` the session was started with, when the memo does not say. */
  startCwd?: string;
  /** Its `checkpoints` query's answer; null or absent for a session without it. */
  checkpoints?: CheckpointsView | null;
  /** The folder its `init` event names: a workspace session's before it has a result. */
  initCwd?: string;
  /** The build its current run is on (versioned workers only). */
  buildId?: string;
}

const INTERRUPTED = new Set(['CANCELLED', 'CANCELED', 'TERMINATED', 'TIMED_OUT']);

export function infoFrom(s: InfoSources): SessionInfo {
  const one = <T>(name: string) => s.searchAttributes[name]?.[0] as T | undefined;
  const r = s.result;
  const { patch: _patch, ...workspace } = r?.workspace ?? ({} as Partial<WorkspaceReport>);
  const memoCwd = typeof s.memo?.cwd === 'string' ? s.memo.cwd : undefined;
  const status = INTERRUPTED.has(s.executionStatus)
    ? 'interrupted'
    : s.executionStatus === 'FAILED'
      ? 'failed'
      : (one<string>(api.SEARCH_ATTRIBUTES.status) ?? (r ? (r.is_error ? 'failed' : 'completed') : 'unknown'));
  const error = r ? (r.is_error ? (r.errors?.join('; ') ?? r.subtype) : null) : (s.failure ?? null);
  return {
    id: s.id,
    status,
    executionStatus: s.executionStatus,
    cwd: r?.workspace?.path || memoCwd || s.startCwd || s.checkpoints?.path || s.initCwd || null,
    model: one<string>(api.SEARCH_ATTRIBUTES.model) ?? (r ? Object.keys(r.modelUsage ?? {})[0] : undefined) ?? null,
    batchId: one<string>(api.SEARCH_ATTRIBUTES.batchId) ?? null,
    workspace: r?.workspace ? (workspace as WorkspaceInfo) : null,
    verdict: r?.verdict ?? null,
    verify: r?.verify ?? null,
    costUsd: r?.total_cost_usd ?? one<number>(api.SEARCH_ATTRIBUTES.costUsd) ?? null,
    turns: r?.num_turns ?? one<number>(api.SEARCH_ATTRIBUTES.turns) ?? null,
    durationMs: r?.duration_ms ?? (s.closeTime ? s.closeTime.getTime() - s.startTime.getTime() : null),
    error,
    startTime: s.startTime.toISOString(),
    closeTime: s.closeTime?.toISOString() ?? null,
    checkpoints: s.checkpoints ? [...s.checkpoints.checkpoints].sort((a, b) => a.turn - b.turn) : null,
    checkpointsFailing: s.checkpoints?.failing ?? null,
    buildId: s.buildId ?? null,
  };
}

/** The options a session's latest run was started with (the first argument of its first event). */
export async function startConfigOf(client: Client, sessionId: string): Promise<SessionOptions> {
  const res = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: sessionId },
    maximumPageSize: 1,
  });
  const payloads = res.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  const config = payloads ? await decodeFromPayloadsAtIndex<SessionOptions>(client.options.loadedDataConverter, 0, payloads) : undefined;
  if (!config || typeof config !== 'object') throw new Error(`cannot read the options session ${sessionId} was started with`);
  return config;
}

/** A session's facts, and its result when it has one (for `diff`). Throws WorkflowNotFoundError for an unknown id. */
export async function sessionInfo(client: Client, sessionId: string): Promise<{ info: SessionInfo; result?: ResultMessage }> {
  const handle = client.workflow.getHandle(sessionId);
  const d: WorkflowExecutionDescription = await handle.describe();
  let result: ResultMessage | undefined;
  let failure: string | undefined;
  if (d.status.name === 'COMPLETED') result = (await handle.result()) as ResultMessage;
  else if (d.status.name !== 'RUNNING') {
    failure = await handle.result().then(
      () => undefined,
      (e: Error) => chain(e),
    );
  }
  const memo = (d.memo ?? {}) as Record<string, unknown>;
  const needCwd = !result?.workspace?.path && !(typeof memo.cwd === 'string' && memo.cwd);
  const startCwd = needCwd
    ? await startConfigOf(client, sessionId).then(
        (c) => c.cwd || undefined,
        () => undefined,
      )
    : undefined;
  const checkpoints = await checkpointsOf(client, sessionId);
  // A workspace session's folder is made on the tools host after it starts: no memo or start option
  // names it, its `init` event does (read only when nothing else says).
  const initCwd = !result?.workspace?.path && !memo.cwd && !startCwd && !checkpoints?.path ? await initCwdOf(client, sessionId) : undefined;
  const info = infoFrom({
    id: sessionId,
    executionStatus: d.status.name,
    searchAttributes: d.searchAttributes as Record<string, unknown[] | undefined>,
    memo,
    startTime: d.startTime,
    ...(d.closeTime ? { closeTime: d.closeTime } : {}),
    ...(result ? { result } : {}),
    ...(failure ? { failure } : {}),
    ...(startCwd ? { startCwd } : {}),
    ...(checkpoints ? { checkpoints } : {}),
    ...(initCwd ? { initCwd } : {}),
    ...(buildOf(d.raw.workflowExecutionInfo) ? { buildId: buildOf(d.raw.workflowExecutionInfo) } : {}),
  });
  return { info, ...(result ? { result } : {}) };
}

/**
 * How long `info` waits for an answer to its queries: a closed session's are answered by a worker
 * replaying it, and with no worker running `info` should still answer from what the server knows.
 */
const INFO_QUERY_MS = 10_000;

/** The `checkpoints` query; null for a session from before it, or when it cannot be answered in time. */
async function checkpointsOf(client: Client, sessionId: string): Promise<CheckpointsView | null> {
  try {
    return await client.withDeadline(Date.now() + INFO_QUERY_MS, () => client.workflow.getHandle(sessionId).query(api.checkpointsQuery));
  } catch {
    // QueryNotRegisteredError (a session from before checkpoints), or no worker to replay a closed
    // session in time: info answers without them.
    return null;
  }
}

/** The cwd of the session's first `init` event with one (absent when it has not started yet). */
async function initCwdOf(client: Client, sessionId: string): Promise<string | undefined> {
  try {
    const page = await client.withDeadline(Date.now() + INFO_QUERY_MS, () =>
      client.workflow.getHandle(sessionId).query(api.eventsQuery, { limit: 50 }),
    );
    for (const e of page.events) if (e.type === 'system' && e.subtype === 'init' && e.cwd) return e.cwd;
  } catch {
    // An older or unreachable session: no folder to name.
  }
  return undefined;
}

function chain(e: unknown): string {
  let msg = (e as Error)?.message ?? String(e);
  for (let c = (e as { cause?: unknown })?.cause; c; c = (c as { cause?: unknown }).cause) msg = `${msg}: ${(c as Error).message}`;
  return msg;
}
