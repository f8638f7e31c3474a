/**
 * What the dashboard shows, read through our client only (ARCHITECTURE.md#dashboard): visibility
 * with our search attributes for the lists, queries for a session's state, the event log and live
 * tokens for its conversation, the batch's `progress` query and job results. Nothing is stored
 * here beyond a bounded in-memory note of when each listed session last changed.
 */
import { buildOf } from '../client/visibility';
import { structuredPatch } from 'diff';
import { temporal } from '@temporalio/proto';
import { decodeSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import * as api from '../shared/api';
import { BATCH_WORKFLOW_TYPE, progressQuery, type BatchProgress } from '../shared/batch';
import type { StreamMessage } from '../client/live';
import type { DurableAgentClient, SessionSummary } from '../client/client';
import { batchRows, type JobRow } from '../client/batch-rows';
import { batchReport, type BatchReport } from '../client/batch-report';
import { quote } from '../client/stream';
import { costOf, lookupPrice } from '../shared/pricing';
import { tokenCounts } from '../shared/messages';

/** Statuses the sessions page filters by; `interrupted` is a run cancelled, terminated or timed out. */
const STATUS_FILTERS = ['running', 'waiting_for_approval', 'waiting_for_input', 'completed', 'failed', 'interrupted'] as const;

export class BadRequest extends Error {}

export interface SessionFilter {
  status?: string;
  batch?: string;
  model?: string;
  /** Session id prefix. */
  text?: string;
}

/** A `SessionSummary` as the page receives it: times as ISO strings. */
export interface SessionRow extends Omit<SessionSummary, 'startTime' | 'closeTime'> {
  startTime: string;
  closeTime?: string;
  /** When this row last changed: its close, else the first time this server saw its current figures. */
  lastActivity: string;
}

export interface SessionPage {
  rows: SessionRow[];
  /** Opaque; pass back as `page` for the next page. */
  nextPage?: string;
  total: number;
}

const VALUE = /^[\w.:/@+-]{1,200}$/;

function check(name: string, v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!VALUE.test(v))
    throw new BadRequest(`${name}: expected letters, digits and . _ : / @ + - (at most 200), got ${JSON.stringify(v.slice(0, 40))}`);
  return v;
}

/** The visibility query for a filter; each value is checked and quoted. */
function sessionQuery(f: SessionFilter): string {
  const clauses = [`WorkflowType = ${quote(api.WORKFLOW_TYPE)}`];
  const status = f.status || undefined;
  if (status !== undefined && !(STATUS_FILTERS as readonly string[]).includes(status)) {
    throw new BadRequest(`status: expected one of ${STATUS_FILTERS.join(', ')}, got ${JSON.stringify(status.slice(0, 40))}`);
  }
  if (status === 'interrupted') clauses.push(`ExecutionStatus IN ('Canceled', 'Terminated', 'TimedOut')`);
  else if (status === 'failed') clauses.push(`(${api.SEARCH_ATTRIBUTES.status} = 'failed' OR ExecutionStatus = 'Failed')`);
  else if (status) {
    clauses.push(`${api.SEARCH_ATTRIBUTES.status} = ${quote(status)}`);
    clauses.push(status === 'completed' ? `ExecutionStatus != 'Failed'` : `ExecutionStatus = 'Running'`);
  }
  const batch = check('batch', f.batch);
  const model = check('model', f.model);
  const text = check('text', f.text);
  if (batch) clauses.push(`${api.SEARCH_ATTRIBUTES.batchId} = ${quote(batch)}`);
  if (model) clauses.push(`${api.SEARCH_ATTRIBUTES.model} = ${quote(model)}`);
  if (text) clauses.push(`WorkflowId STARTS_WITH ${quote(text)}`);
  return clauses.join(' AND ');
}

const STATUS_PREFIX = 'WORKFLOW_EXECUTION_STATUS_';

function toIso(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | undefined {
  if (!ts) return undefined;
  return new Date(Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

/** When each listed session was last seen to change (bounded: the oldest notes are dropped). */
class ActivityNotes {
  private notes = new Map<string, { key: string; at: string }>();
  constructor(private readonly max = 20_000) {}
  seen(id: string, key: string, fallback: string): string {
    const note = this.notes.get(id);
    if (note?.key === key) return note.at;
    const at = note ? new Date().toISOString() : fallback;
    this.notes.delete(id);
    this.notes.set(id, { key, at });
    if (this.notes.size > this.max) this.notes.delete(this.notes.keys().next().value!);
    return at;
  }
}

/** Finished jobs' rows kept between polls of a batch page (bounded: the oldest are dropped). */
const MAX_CACHED_ROWS = 20_000;

export class DashboardData {
  private activity = new ActivityNotes();
  private rows = new Map<string, JobRow>();
  constructor(readonly client: DurableAgentClient) {}

  private get service() {
    return this.client.client.workflowService;
  }

  async sessions(f: SessionFilter & { page?: string; pageSize?: number }): Promise<SessionPage> {
    const query = sessionQuery(f);
    const pageSize = Math.min(Math.max(f.pageSize ?? 50, 1), 500);
    let nextPageToken: Buffer | undefined;
    if (f.page) {
      nextPageToken = Buffer.from(f.page, 'base64url');
      if (nextPageToken.length === 0) throw new BadRequest('page: not a page token');
    }
    const namespace = this.client.namespace;
    const [page, count] = await Promise.all([
      this.service.listWorkflowExecutions({ namespace, query, pageSize, ...(nextPageToken ? { nextPageToken } : {}) }).catch((e: Error) => {
        if (f.page && /token/i.test(e.message)) throw new BadRequest(`page: ${e.message}`);
        throw e;
      }),
      this.service.countWorkflowExecutions({ namespace, query }),
    ]);
    const rows = (page.executions ?? []).map((raw) => this.row(raw));
    return {
      rows,
      total: Number(count.count ?? 0),
      ...(page.nextPageToken?.length ? { nextPage: Buffer.from(page.nextPageToken).toString('base64url') } : {}),
    };
  }

  private row(raw: temporal.api.workflow.v1.IWorkflowExecutionInfo): SessionRow {
    const sa = decodeSearchAttributes(raw.searchAttributes?.indexedFields) as Record<string, unknown[] | undefined>;
    const one = <T>(name: string) => sa[name]?.[0] as T | undefined;
    const name = temporal.api.enums.v1.WorkflowExecutionStatus[raw.status ?? 0] ?? 'UNSPECIFIED';
    const executionStatus = name.startsWith(STATUS_PREFIX) ? name.slice(STATUS_PREFIX.length) : name;
    const agentStatus = one<string>(api.SEARCH_ATTRIBUTES.status) ?? 'unknown';
    const status =
      executionStatus === 'CANCELED' || executionStatus === 'TERMINATED' || executionStatus === 'TIMED_OUT'
        ? 'interrupted'
        : executionStatus === 'FAILED'
          ? 'failed'
          : agentStatus;
    const sessionId = raw.execution?.workflowId ?? '';
    const startTime = toIso(raw.startTime) ?? new Date(0).toISOString();
    const closeTime = toIso(raw.closeTime);
    const turns = one<number>(api.SEARCH_ATTRIBUTES.turns);
    const costUsd = one<number>(api.SEARCH_ATTRIBUTES.costUsd);
    const key = JSON.stringify([raw.execution?.runId, status, turns, costUsd, raw.historyLength?.toString()]);
    return {
      sessionId,
      runId: raw.execution?.runId ?? '',
      status,
      executionStatus,
      model: one<string>(api.SEARCH_ATTRIBUTES.model),
      turns,
      costUsd,
      batchId: one<string>(api.SEARCH_ATTRIBUTES.batchId),
      // The build of the worker deployment the run is on (ARCHITECTURE.md#deploys).
      buildId: buildOf(raw),
      startTime,
      ...(closeTime ? { closeTime } : {}),
      lastActivity: closeTime ?? this.activity.seen(sessionId, key, toIso(raw.executionTime) ?? startTime),
    };
  }

  /** A session's figures and controls' state: the workflow's own queries, plus where it stands. */
  async session(sessionId: string) {
    const handle = await this.client.get(sessionId);
    const d = await handle.workflow.describe();
    const open = d.status.name === 'RUNNING';
    const sa = d.searchAttributes as Record<string, unknown[] | undefined>;
    const [state, usage, pending] = await Promise.all([
      handle.state().catch(() => undefined),
      handle.usage().catch(() => undefined),
      open ? handle.pendingPermissions().catch(() => []) : Promise.resolve([]),
    ]);
    return {
      sessionId,
      runId: d.runId,
      executionStatus: d.status.name,
      open,
      startTime: d.startTime.toISOString(),
      closeTime: d.closeTime?.toISOString(),
      batchId: sa[api.SEARCH_ATTRIBUTES.batchId]?.[0] as string | undefined,
      buildId: buildOf(d.raw.workflowExecutionInfo),
      state,
      usage,
      pendingPermissions: pending,
    };
  }

  /**
   * Where a batch stands: the coordinator's progress (its result once done), every job's row (its
   * verdict and diff figures, not its patch) and the report `durable-agent report` prints.
   */
  async batch(batchId: string, opts: { jobs?: boolean } = {}) {
    check('batch', batchId);
    const handle = this.client.client.workflow.getHandle(batchId);
    const d = await handle.describe();
    if (d.type !== BATCH_WORKFLOW_TYPE) throw new BadRequest(`${batchId} is not a batch (it is a ${d.type} workflow)`);
    const progress =
      d.status.name === 'COMPLETED' ? ((await handle.result()) as BatchProgress) : await handle.query(progressQuery).catch(() => undefined);
    const jobs = opts.jobs === false ? undefined : await batchRows(this.client, batchId, { cache: this.rows });
    while (this.rows.size > MAX_CACHED_ROWS) this.rows.delete(this.rows.keys().next().value!);
    const report: BatchReport | undefined = jobs ? batchReport(jobs) : undefined;
    return { batchId, executionStatus: d.status.name, startTime: d.startTime.toISOString(), progress, jobs, report };
  }
}

/** A diff of an Edit or Write call's change (for Write, the whole content as added lines). */
export function diffOf(name: string, input: unknown): { file: string; hunks: ReturnType<typeof structuredPatch>['hunks'] } | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const i = input as Record<string, unknown>;
  const file = typeof i.file_path === 'string' ? i.file_path : undefined;
  if (!file) return undefined;
  let before: string;
  let after: string;
  if (name === 'Edit' && typeof i.old_string === 'string' && typeof i.new_string === 'string') {
    before = i.old_string;
    after = i.new_string;
  } else if (name === 'Write' && typeof i.content === 'string') {
    before = '';
    after = i.content;
  } else {
    return undefined;
  }
  const lines = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);
  return { file, hunks: structuredPatch(file, file, lines(before), lines(after), '', '', { context: 3 }).hunks };
}

/**
 * One message as the session page gets it: the message itself plus what the page would otherwise
 * compute — the model call's cost (from its usage and the price table) and the diffs of its edits.
 */
export function annotate(m: StreamMessage): {
  message: StreamMessage;
  costUsd?: number;
  diffs?: Record<string, ReturnType<typeof diffOf>>;
} {
  if (m.type !== 'assistant') return { message: m };
  const u = m.message.usage;
  const costUsd = costOf(tokenCounts(u), lookupPrice(m.message.model));
  const diffs: Record<string, ReturnType<typeof diffOf>> = {};
  for (const b of m.message.content) {
    if (b.type === 'tool_use') {
      const d = diffOf(b.name, b.input);
      if (d) diffs[b.id] = d;
    }
  }
  return { message: m, costUsd, ...(Object.keys(diffs).length ? { diffs } : {}) };
}
