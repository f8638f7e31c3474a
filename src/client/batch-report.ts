/**
 * `durable-agent report` and the dashboard's batch table: a batch's jobs counted per model. Pure:
 * rows in (JobRow's fields, from `batchRows` or a `results` file), figures out.
 *
 * Shares count every job — a job that failed, was cancelled or was never started is a task not
 * resolved — and errors and skipped jobs have columns of their own. Cost, turns and duration per
 * task are over the jobs that ran to an end (not skipped, not still running): a job never started
 * cost nothing because it did nothing, and would only pull the figures down.
 */
import type { JobRow } from './batch-rows';

export type ReportInput = Pick<JobRow, 'status' | 'verdict' | 'costUsd' | 'turns' | 'durationMs'> & { model: string | null };

interface ModelReport {
  model: string;
  jobs: number;
  /** Jobs whose verdict is `pass`. */
  resolved: number;
  /** resolved / jobs; null when no job has a verdict (no `verify`). */
  resolvedShare: number | null;
  /** Jobs whose verdict is `fail`. */
  unresolved: number;
  /**
   * Jobs without a pass or fail: verify could not run (verdict `error`), or the job failed or was
   * cancelled and had no verdict. A job that ran out of turns but whose verify passed is resolved,
   * not an error: each job is in at most one of resolved, unresolved, errors, skipped, unfinished.
   */
  errors: number;
  /** Jobs never started: the batch budget was spent. */
  skipped: number;
  /** Jobs still waiting or running. */
  unfinished: number;
  costUsd: { total: number; mean: number | null; median: number | null };
  turnsMean: number | null;
  durationMsMedian: number | null;
}

export interface BatchReport {
  /** One per model, in the order the models first appear. */
  models: ModelReport[];
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

export function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export function batchReport(rows: ReportInput[]): BatchReport {
  const groups = new Map<string, ReportInput[]>();
  for (const r of rows) {
    const model = r.model ?? 'unknown';
    groups.set(model, [...(groups.get(model) ?? []), r]);
  }
  return { models: [...groups].map(([model, jobs]) => modelReport(model, jobs)) };
}

function modelReport(model: string, jobs: ReportInput[]): ModelReport {
  const ran = jobs.filter((j) => FINISHED.has(j.status));
  const costs = ran.map((j) => j.costUsd);
  const resolved = jobs.filter((j) => j.verdict === 'pass').length;
  return {
    model,
    jobs: jobs.length,
    resolved,
    resolvedShare: jobs.some((j) => j.verdict != null) ? resolved / jobs.length : null,
    unresolved: jobs.filter((j) => j.verdict === 'fail').length,
    errors: jobs.filter((j) => j.verdict === 'error' || (j.verdict == null && (j.status === 'failed' || j.status === 'cancelled'))).length,
    skipped: jobs.filter((j) => j.status === 'skipped_budget').length,
    unfinished: jobs.filter((j) => j.status === 'running' || j.status === 'waiting').length,
    costUsd: { total: costs.reduce((a, b) => a + b, 0), mean: mean(costs), median: median(costs) },
    turnsMean: mean(ran.map((j) => j.turns)),
    durationMsMedian: median(ran.flatMap((j) => (j.durationMs === null ? [] : [j.durationMs]))),
  };
}

const money = (x: number | null) => (x === null ? '-' : `$${x.toFixed(4)}`);

function seconds(ms: number | null): string {
  if (ms === null) return '-';
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}

/** The report as a table for people; figures as `report --json` gives them, rounded. */
export function renderReport(report: BatchReport): string[] {
  const head = ['MODEL', 'JOBS', 'RESOLVED', 'ERRORS', 'SKIPPED', 'COST', 'COST/TASK', 'MEDIAN COST', 'TURNS/TASK', 'MEDIAN TIME'];
  const table = [head];
  for (const m of report.models) {
    const share = m.resolvedShare === null ? '-' : `${m.resolved} (${(100 * m.resolvedShare).toFixed(1)}%)`;
    table.push([
      m.model,
      String(m.jobs),
      share,
      String(m.errors),
      String(m.skipped),
      money(m.costUsd.total),
      money(m.costUsd.mean),
      money(m.costUsd.median),
      m.turnsMean === null ? '-' : m.turnsMean.toFixed(1),
      seconds(m.durationMsMedian),
    ]);
  }
  const widths = head.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  const unfinished = report.models.reduce((a, m) => a + m.unfinished, 0);
  if (unfinished) lines.push(`(${unfinished} job${unfinished === 1 ? '' : 's'} not finished: counted as not resolved)`);
  return lines;
}
