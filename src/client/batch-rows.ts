/**
 * One row per batch job, as `results` writes it and `report` and the dashboard count it: the job's
 * outcome plus what its session's result says about its workspace and verdict
 * (ARCHITECTURE.md#workspaces). `jobRow` is the pure mapping; `batchRows` reads what it needs.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ResultMessage } from '../shared/events';
import type { DiffStat, Verdict } from '../shared/workspace';
import * as api from '../shared/api';
import { batchResults, type JobResult } from './batch';
import type { DurableAgentClient } from './client';
import { NoPatchError, sessionPatch } from './patch';

export interface JobRow {
  id: string;
  /** completed, failed, cancelled, skipped_budget; running or waiting while the batch runs. */
  status: string;
  result: string | null;
  turns: number;
  costUsd: number;
  /** For a job whose workspace could not be made: starts `setup:`. */
  error: string | null;
  sessionId: string;
  model: string | null;
  durationMs: number | null;
  /** null without `verify`, for a job whose setup failed, and for one never started. */
  verdict: Verdict | null;
  verifyExitCode: number | null;
  verifyDurationMs: number | null;
  verifyOutputTail: string | null;
  diffStat: DiffStat | null;
  /** The whole patch (JSONL only); null without a workspace, or when not asked for. */
  patch: string | null;
}

/** Columns of `results --format csv`: a JSONL line's fields but the patch. */
export const CSV_COLUMNS = [
  'id',
  'status',
  'result',
  'turns',
  'costUsd',
  'error',
  'sessionId',
  'model',
  'durationMs',
  'verdict',
  'verifyExitCode',
  'verifyDurationMs',
  'verifyOutputTail',
  'diffStat',
] as const satisfies readonly (keyof JobRow)[];

const JSONL_FIELDS = [...CSV_COLUMNS, 'patch'] as const;

/** What a job's session adds to its outcome. */
export interface SessionFacts {
  result?: ResultMessage;
  /** The session's model (its search attribute). */
  model?: string;
  /** The patch, when it was put back together from the session's history. */
  patch?: string;
}

/** A job's row: its outcome, with verdict, verify and diff figures from its session's result. */
export function jobRow(job: JobResult, facts: SessionFacts = {}): JobRow {
  const r = facts.result;
  const setupFailed = job.status === 'failed' && (job.error ?? '').startsWith('setup:');
  // A job that never ran its agent has no verdict, whatever else its session reported.
  const judged = job.status !== 'skipped_budget' && !setupFailed;
  const verify = judged ? r?.verify : undefined;
  return {
    id: job.id,
    status: job.status,
    result: 'result' in job ? (job.result ?? null) : null,
    turns: job.turns,
    costUsd: job.costUsd,
    error: job.error ?? null,
    sessionId: job.sessionId,
    model: facts.model ?? job.model ?? null,
    durationMs: r?.duration_ms ?? null,
    verdict: judged ? (r?.verdict ?? null) : null,
    verifyExitCode: verify?.exitCode ?? null,
    verifyDurationMs: verify?.durationMs ?? null,
    verifyOutputTail: verify?.outputTail ?? null,
    diffStat: r?.workspace?.diffStat ?? null,
    patch: facts.patch ?? r?.workspace?.patch ?? null,
  };
}

/** RFC 4180: quote fields with commas, quotes or line breaks; double the quotes. Objects as JSON. */
export function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** `results` output: a header and one CSV line per job, or one JSON object per job. */
export function resultLines(rows: JobRow[], format: 'jsonl' | 'csv'): string[] {
  if (format === 'jsonl') return rows.map((r) => JSON.stringify(Object.fromEntries(JSONL_FIELDS.map((k) => [k, r[k]]))));
  return [CSV_COLUMNS.join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => csvField(r[c])).join(','))];
}

/** A job id as a file name: `/` (never in an id today, but a name must not leave the folder) written `_`. */
export const patchFileName = (jobId: string): string => `${jobId.replace(/\//g, '_')}.patch`;

export interface BatchRowsOptions {
  /** Put patches kept in parts back together from their sessions' histories; without, rows carry no patch. */
  patches?: boolean;
  parallel?: number;
  /** Hears of patches that cannot be had (too large for the history, parts missing). */
  onPatchMissing?: (jobId: string, why: string) => void;
  /** Rows of finished jobs, by session id, kept across calls (a finished job's row does not change). */
  cache?: Map<string, JobRow>;
}

const FINISHED = new Set(['completed', 'failed', 'cancelled', 'skipped_budget']);

/** Every job's row, in file order, with its 1-based position in the jobs file. */
export async function batchRows(
  client: DurableAgentClient,
  batchId: string,
  opts: BatchRowsOptions = {},
): Promise<(JobRow & { index: number })[]> {
  const jobs = await batchResults(client, batchId);
  const rows: (JobRow & { index: number })[] = [];
  const parallel = opts.parallel ?? 16;
  const one = async (job: JobResult) => {
    const cached = opts.cache?.get(job.sessionId);
    const row = cached ?? (await rowOf(client, job, opts));
    if (!cached && opts.cache && FINISHED.has(job.status)) opts.cache.set(job.sessionId, row);
    return { index: job.index, ...row };
  };
  for (let i = 0; i < jobs.length; i += parallel) rows.push(...(await Promise.all(jobs.slice(i, i + parallel).map(one))));
  return rows;
}

async function rowOf(
  client: DurableAgentClient,
  job: JobResult,
  opts: { patches?: boolean; onPatchMissing?: (jobId: string, why: string) => void },
): Promise<JobRow> {
  // Jobs that never started a session have nothing more to say.
  if (job.status === 'skipped_budget' || job.status === 'waiting') return withoutPatch(jobRow(job), opts);
  const handle = client.client.workflow.getHandle(job.sessionId);
  // A job cancelled or failed before its session started has none.
  const d = await handle.describe().catch((e: Error) => (e instanceof WorkflowNotFoundError ? undefined : Promise.reject(e)));
  if (!d) return withoutPatch(jobRow(job), opts);
  const model = (d.searchAttributes as Record<string, unknown[] | undefined>)[api.SEARCH_ATTRIBUTES.model]?.[0] as string | undefined;
  const result = d.status.name === 'COMPLETED' ? ((await handle.result()) as ResultMessage) : undefined;
  let patch: string | undefined;
  const w = result?.workspace;
  if (opts.patches && result && w && w.patch === undefined) {
    try {
      patch = await sessionPatch(client.client, job.sessionId, result);
    } catch (e) {
      if (!(e instanceof NoPatchError)) throw e;
      opts.onPatchMissing?.(job.id, e.message);
    }
  }
  return withoutPatch(
    jobRow(job, { ...(result ? { result } : {}), ...(model ? { model } : {}), ...(patch !== undefined ? { patch } : {}) }),
    opts,
  );
}

const withoutPatch = (row: JobRow, opts: { patches?: boolean }): JobRow => (opts.patches ? row : { ...row, patch: null });
