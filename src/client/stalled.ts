/**
 * Sessions that are running but not progressing, and what each one waits on
 * (ARCHITECTURE.md#stalled-sessions; `durable-agent stalled`, and bench/throughput.ts when a run
 * stalls). For every running session that has recorded nothing in its history for a while: its
 * pending workflow task (scheduled or started, attempt, age, and the sticky queue it is bound to),
 * its pending activities (scheduled or started, attempt, retry backoff, last heartbeat, the worker
 * that last ran it), the history shard it lives in and which server node owns that shard; and for
 * the task queues those wait on, their pollers and backlog. On a cluster, sessions that wait on
 * one node's shards point at that node; a task scheduled on a queue with pollers but never
 * started points at matching; a queue with no pollers at the workers.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import * as api from '../shared/api';
import { encodeMessage, fieldString } from './proto-wire';
import { quote } from './stream';
import { listRuns } from './visibility';
import { pool } from './pool';

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
type Duration = Timestamp;

interface StalledActivity {
  type: string;
  state: 'scheduled' | 'started' | 'cancel requested' | 'paused' | 'unknown';
  attempt: number;
  taskQueue?: string;
  scheduledAgoMs?: number;
  startedAgoMs?: number;
  heartbeatAgoMs?: number;
  /** A retry waiting out its backoff: when its next attempt is due. */
  nextAttemptInMs?: number;
  identity?: string;
  lastFailure?: string;
}

interface StalledWorkflowTask {
  state: 'scheduled' | 'started';
  attempt: number;
  scheduledAgoMs?: number;
  startedAgoMs?: number;
}

export interface StalledSession {
  sessionId: string;
  runId: string;
  /** Our AgentStatus search attribute: running, waiting_for_input, waiting_for_approval, … */
  agentStatus: string;
  /** Since the last event in its history or its activities' last start or heartbeat, whichever is latest. */
  quietMs: number;
  lastEvent: string;
  taskQueue?: string;
  /** The worker queue its workflow tasks go to first (a worker's sticky queue), from the server's mutable state. */
  stickyQueue?: string;
  workflowTask?: StalledWorkflowTask;
  activities: StalledActivity[];
  pendingChildren: number;
  /** Its history shard and the history service host that owns it (the admin API; absent where it is refused). */
  shard?: { id: number; owner: string };
  /** One line: what it waits on. */
  waitingOn: string;
}

interface QueueHealth {
  queue: string;
  type: 'workflow' | 'activity';
  sticky: boolean;
  pollers: number;
  /** The most recent poll by any poller. */
  lastPollAgoMs?: number;
  backlog?: number;
  backlogAgeMs?: number;
  error?: string;
}

export interface StalledReport {
  /** Running sessions looked at. */
  scanned: number;
  quietForMs: number;
  sessions: StalledSession[];
  queues: QueueHealth[];
  /** Why shards are not shown, when the admin API refused. */
  shardsUnavailable?: string;
}

export interface StalledOptions {
  /** A session counts once its history has been quiet this long (default 60 s). */
  quietForMs?: number;
  batchId?: string;
  /** At most this many running sessions are looked at (default 1,000). */
  limit?: number;
  /** Describe calls in flight at once (default 16). */
  concurrency?: number;
  /** Only these sessions (e.g. a benchmark's), instead of listing the running ones. */
  sessionIds?: string[];
}

const ms = (t: Timestamp | Duration): number | undefined =>
  t && t.seconds != null ? Number(t.seconds) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : undefined;

/** `83_000` → `1m23s`. */
export function formatAge(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '?';
  const s = Math.max(0, Math.round(x / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

const ACTIVITY_STATE: Record<number, StalledActivity['state']> = {
  [temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED]: 'scheduled',
  [temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED]: 'started',
  [temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED]: 'cancel requested',
  [temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_PAUSED]: 'paused',
};

/** What a session waits on, in one line, from what the server says is pending. */
export function waitingOn(s: Omit<StalledSession, 'waitingOn'>): string {
  const parts: string[] = [];
  const wft = s.workflowTask;
  if (wft) {
    const where = s.stickyQueue ? `sticky queue ${s.stickyQueue}` : `queue ${s.taskQueue ?? '?'}`;
    parts.push(
      wft.state === 'scheduled'
        ? `workflow task (attempt ${wft.attempt}) scheduled ${formatAge(wft.scheduledAgoMs)} ago on ${where}, not started`
        : `workflow task (attempt ${wft.attempt}) started ${formatAge(wft.startedAgoMs)} ago, not completed`,
    );
  }
  for (const a of s.activities) {
    const failure = a.lastFailure ? ` (last failure: ${a.lastFailure})` : '';
    if (a.state === 'scheduled' && a.nextAttemptInMs !== undefined && a.nextAttemptInMs > 0) {
      parts.push(`${a.type} attempt ${a.attempt} waiting to retry in ${formatAge(a.nextAttemptInMs)}${failure}`);
    } else if (a.state === 'scheduled') {
      parts.push(
        `${a.type} (attempt ${a.attempt}) scheduled ${formatAge(a.scheduledAgoMs)} ago on ${a.taskQueue ?? '?'}, not started${failure}`,
      );
    } else if (a.state === 'started') {
      const beat = a.heartbeatAgoMs === undefined ? 'no heartbeat' : `last heartbeat ${formatAge(a.heartbeatAgoMs)} ago`;
      parts.push(`${a.type} (attempt ${a.attempt}) running for ${formatAge(a.startedAgoMs)} on ${a.identity ?? '?'}, ${beat}`);
    } else {
      parts.push(`${a.type} ${a.state}`);
    }
  }
  if (s.pendingChildren) parts.push(`${s.pendingChildren} subagent session(s)`);
  if (parts.length) return parts.join('; ');
  if (s.agentStatus.startsWith('waiting_for_')) return `a person (${s.agentStatus})`;
  return `nothing pending since ${s.lastEvent} (a timer, or a task the server has not dispatched)`;
}

/** The admin service's DescribeMutableState: shard, owning history host, sticky queue. */
async function describeMutableState(
  connection: unknown,
  namespace: string,
  workflowId: string,
  runId: string,
): Promise<{ shard: number; owner: string; stickyQueue?: string }> {
  // The SDK has no definitions for the admin service; the request and the three fields we read are
  // encoded by hand (temporal/server/api/adminservice/v1/request_response.proto, persistence/v1).
  const request = encodeMessage([
    [1, namespace],
    [
      2,
      [
        [1, workflowId],
        [2, runId],
      ],
    ],
    [3, true], // skip_force_reload: read what the owning host has, without reloading it
  ]);
  const grpc = (connection as unknown as { client: UnaryClient }).client;
  const reply = await new Promise<Buffer>((resolve, reject) =>
    grpc.makeUnaryRequest(
      '/temporal.server.api.adminservice.v1.AdminService/DescribeMutableState',
      (x: Buffer) => x,
      (x: Buffer) => x,
      request,
      { deadline: new Date(Date.now() + 10_000) },
      (err, value) => (err || !value ? reject(err ?? new Error('no reply')) : resolve(value)),
    ),
  );
  // cache_mutable_state (3) when the host has it in memory, else database_mutable_state (4); then
  // execution_info (7) → sticky_task_queue (33).
  const sticky = fieldString(reply, [3, 7, 33]) ?? fieldString(reply, [4, 7, 33]);
  return { shard: Number(fieldString(reply, [1])), owner: fieldString(reply, [2]) ?? '?', ...(sticky ? { stickyQueue: sticky } : {}) };
}

interface UnaryClient {
  makeUnaryRequest(
    method: string,
    serialize: (x: Buffer) => Buffer,
    deserialize: (x: Buffer) => Buffer,
    argument: Buffer,
    options: { deadline: Date },
    callback: (err: Error | null, value?: Buffer) => void,
  ): unknown;
}

/** Running sessions whose history has been quiet for `quietForMs`, with what each waits on. */
export async function findStalledSessions(client: Client, opts: StalledOptions = {}): Promise<StalledReport> {
  const quietForMs = opts.quietForMs ?? 60_000;
  const namespace = client.options.namespace;
  const service = client.workflowService;
  const targets: { workflowId: string; runId?: string; agentStatus?: string }[] = [];
  if (opts.sessionIds) targets.push(...opts.sessionIds.map((workflowId) => ({ workflowId })));
  else {
    const clauses = [`WorkflowType = ${quote(api.WORKFLOW_TYPE)}`, `ExecutionStatus = 'Running'`];
    if (opts.batchId) clauses.push(`${api.SEARCH_ATTRIBUTES.batchId} = ${quote(opts.batchId)}`);
    const limit = opts.limit ?? 1000;
    for await (const w of listRuns(client, clauses.join(' AND '), { pageSize: Math.min(limit, 1000) })) {
      const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
      targets.push({ workflowId: w.workflowId, runId: w.runId, agentStatus: sa[api.SEARCH_ATTRIBUTES.status]?.[0] as string | undefined });
      if (targets.length >= limit) break;
    }
  }

  let shardsUnavailable: string | undefined;
  const described = await pool(targets, opts.concurrency ?? 16, async (t): Promise<StalledSession | undefined> => {
    const execution = { workflowId: t.workflowId, ...(t.runId ? { runId: t.runId } : {}) };
    let d: temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;
    try {
      d = await service.describeWorkflowExecution({ namespace, execution });
    } catch {
      return undefined; // gone (closed and past retention) between the listing and now
    }
    const info = d.workflowExecutionInfo;
    if (info?.status !== temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) return undefined;
    const runId = info.execution?.runId ?? t.runId ?? '';
    const last = (await service.getWorkflowExecutionHistoryReverse({ namespace, execution: { ...execution, runId }, maximumPageSize: 1 }))
      .history?.events?.[0];
    const now = Date.now();
    // Progress is an event in history or, for an activity that runs long (a model stream, a Bash
    // command), a heartbeat: those are not written to history until the attempt ends.
    const progress = [
      ms(last?.eventTime),
      ...(d.pendingActivities ?? []).flatMap((a) => [ms(a.lastHeartbeatTime), ms(a.lastStartedTime)]),
    ].filter((x): x is number => x !== undefined);
    const quietMs = progress.length ? now - Math.max(...progress) : 0;
    if (quietMs < quietForMs) return undefined;
    const ago = (x: Timestamp) => {
      const at = ms(x);
      return at === undefined ? undefined : now - at;
    };
    const wft = d.pendingWorkflowTask;
    const sa = info.searchAttributes?.indexedFields?.[api.SEARCH_ATTRIBUTES.status]?.data;
    const agentStatus = t.agentStatus ?? (sa ? (JSON.parse(Buffer.from(sa).toString('utf8')) as string) : 'unknown');
    const session: Omit<StalledSession, 'waitingOn'> = {
      sessionId: t.workflowId,
      runId,
      agentStatus,
      quietMs,
      lastEvent: temporal.api.enums.v1.EventType[last?.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? '?',
      ...(info.taskQueue ? { taskQueue: info.taskQueue } : {}),
      ...(wft
        ? {
            workflowTask: {
              state:
                wft.state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED ? 'started' : 'scheduled',
              attempt: wft.attempt ?? 1,
              scheduledAgoMs: ago(wft.originalScheduledTime ?? wft.scheduledTime),
              ...(wft.startedTime ? { startedAgoMs: ago(wft.startedTime) } : {}),
            },
          }
        : {}),
      activities: (d.pendingActivities ?? []).map((a) => {
        const next = ms(a.nextAttemptScheduleTime);
        return {
          type: a.activityType?.name ?? '?',
          state: ACTIVITY_STATE[a.state ?? 0] ?? 'unknown',
          attempt: a.attempt ?? 1,
          ...(a.activityOptions?.taskQueue?.name ? { taskQueue: a.activityOptions.taskQueue.name } : {}),
          ...(a.scheduledTime ? { scheduledAgoMs: ago(a.scheduledTime) } : {}),
          ...(a.lastStartedTime ? { startedAgoMs: ago(a.lastStartedTime) } : {}),
          ...(a.lastHeartbeatTime ? { heartbeatAgoMs: ago(a.lastHeartbeatTime) } : {}),
          ...(next !== undefined ? { nextAttemptInMs: next - now } : {}),
          ...(a.lastWorkerIdentity ? { identity: a.lastWorkerIdentity } : {}),
          ...(a.lastFailure?.message ? { lastFailure: a.lastFailure.message.split('\n')[0]!.slice(0, 160) } : {}),
        };
      }),
      pendingChildren: (d.pendingChildren ?? []).length,
    };
    if (!shardsUnavailable) {
      try {
        const m = await describeMutableState(client.connection, namespace, t.workflowId, runId);
        session.shard = { id: m.shard, owner: m.owner };
        if (m.stickyQueue) session.stickyQueue = m.stickyQueue;
      } catch (e) {
        shardsUnavailable = `the server's admin API refused DescribeMutableState: ${(e as Error).message.split('\n')[0]}`;
      }
    }
    return { ...session, waitingOn: waitingOn(session) };
  });
  const sessions = described.filter((s): s is StalledSession => s !== undefined).sort((a, b) => b.quietMs - a.quietMs);

  // The queues those sessions wait on: who polls them and what is queued there.
  const wanted = new Map<string, { queue: string; type: 'workflow' | 'activity'; sticky: boolean }>();
  const want = (queue: string | undefined, type: 'workflow' | 'activity', sticky = false) => {
    if (queue) wanted.set(`${type}|${queue}`, { queue, type, sticky });
  };
  for (const s of sessions) {
    if (s.workflowTask)
      want(s.workflowTask.state === 'scheduled' && s.stickyQueue ? s.stickyQueue : s.taskQueue, 'workflow', !!s.stickyQueue);
    for (const a of s.activities) want(a.taskQueue, 'activity');
  }
  const queues = await pool([...wanted.values()], 4, (q) => describeQueue(client, q.queue, q.type, q.sticky));
  return { scanned: targets.length, quietForMs, sessions, queues, ...(shardsUnavailable ? { shardsUnavailable } : {}) };
}

async function describeQueue(client: Client, queue: string, type: 'workflow' | 'activity', sticky: boolean): Promise<QueueHealth> {
  const base = { queue, type, sticky };
  const request = {
    namespace: client.options.namespace,
    taskQueue: {
      name: queue,
      kind: sticky
        ? temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY
        : temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
    },
    taskQueueType:
      type === 'workflow'
        ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
        : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  };
  let r: temporal.api.workflowservice.v1.IDescribeTaskQueueResponse;
  try {
    r = await client.workflowService.describeTaskQueue({ ...request, reportStats: true });
  } catch {
    // A server without backlog stats: pollers only.
    try {
      r = await client.workflowService.describeTaskQueue(request);
    } catch (e) {
      return { ...base, pollers: 0, error: (e as Error).message.split('\n')[0]! };
    }
  }
  const now = Date.now();
  const polls = (r.pollers ?? []).map((p) => ms(p.lastAccessTime)).filter((x): x is number => x !== undefined);
  return {
    ...base,
    pollers: (r.pollers ?? []).length,
    ...(polls.length ? { lastPollAgoMs: now - Math.max(...polls) } : {}),
    ...(r.stats ? { backlog: Number(r.stats.approximateBacklogCount ?? 0), backlogAgeMs: ms(r.stats.approximateBacklogAge) ?? 0 } : {}),
  };
}

/** The report as text: a line per session, then counts by what they wait on and by shard owner, then the queues. */
export function renderStalled(r: StalledReport, maxRows = 50): string[] {
  const lines = [
    `${r.sessions.length} of ${r.scanned} running session(s) have recorded nothing for ${formatAge(r.quietForMs)} or more${r.sessions.length ? ':' : '.'}`,
  ];
  if (!r.sessions.length) return lines;
  const rows = [['SESSION', 'QUIET', 'STATUS', 'SHARD', 'SHARD OWNER', 'WAITING ON']];
  for (const s of r.sessions.slice(0, maxRows)) {
    rows.push([s.sessionId, formatAge(s.quietMs), s.agentStatus, s.shard ? String(s.shard.id) : '-', s.shard?.owner ?? '-', s.waitingOn]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) lines.push(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  if (r.sessions.length > maxRows) lines.push(`… and ${r.sessions.length - maxRows} more (--json lists all)`);
  const count = (key: (s: StalledSession) => string) => {
    const m = new Map<string, number>();
    for (const s of r.sessions) m.set(key(s), (m.get(key(s)) ?? 0) + 1);
    return [...m].sort((a, b) => b[1] - a[1]);
  };
  // What they wait on, without the ages and attempts that make each line unique.
  const kind = (s: StalledSession) =>
    s.waitingOn
      .replace(/\d+(h\d+m|m\d+s|s)/g, 'N')
      .replace(/attempt \d+/g, 'attempt N')
      .replace(/ \(last failure: [^)]*\)/g, '');
  lines.push('', 'by what they wait on:');
  for (const [k, n] of count(kind)) lines.push(`  ${n}  ${k}`);
  if (r.sessions.some((s) => s.shard)) {
    lines.push('by shard owner (history host):');
    for (const [k, n] of count((s) => s.shard?.owner ?? '?')) {
      const shards = [...new Set(r.sessions.filter((s) => (s.shard?.owner ?? '?') === k).map((s) => s.shard?.id))].sort((a, b) => a! - b!);
      lines.push(`  ${n}  ${k} (shards ${shards.join(', ')})`);
    }
  }
  if (r.shardsUnavailable) lines.push(`shards: not shown (${r.shardsUnavailable})`);
  if (r.queues.length) {
    lines.push('task queues they wait on:');
    for (const q of r.queues) {
      const polled = q.pollers ? `${q.pollers} poller(s), last poll ${formatAge(q.lastPollAgoMs)} ago` : 'no pollers';
      const backlog = q.backlog === undefined ? '' : `, backlog ${q.backlog}${q.backlog ? ` (oldest ${formatAge(q.backlogAgeMs)})` : ''}`;
      lines.push(
        `  ${q.queue} (${q.sticky ? 'sticky ' : ''}${q.type}): ${q.error ? `describe failed: ${q.error}` : `${polled}${backlog}`}`,
      );
    }
  }
  return lines;
}
