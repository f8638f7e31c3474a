/** The CLI's commands that read finished batches: results (a line per job, patches) and report (a table per model). */
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { batchStatus, type BatchStatus } from '../client/batch';
import { batchReport, renderReport } from '../client/batch-report';
import { batchRows, patchFileName, resultLines } from '../client/batch-rows';
import { EXIT, err, out, parse, printJson, UsageError, withClient } from './args';
import type { DurableAgentClient } from '../client/client';
import { cleanupWorkspaces } from '../activities/workspace/cleanup';
import { workspacesRoot } from '../activities/workspace/layout';
import { sessionIsRunning } from './workspace';

const RESULTS_USAGE = `usage: durable-agent results BATCH_ID [--format jsonl|csv] [--out FILE] [--patches DIR] [--cleanup]
  One line per job, in file order: id, status, result, turns, costUsd, error, sessionId, model,
  durationMs, verdict, verifyExitCode, verifyDurationMs, verifyOutputTail, diffStat, patch
  (status: completed, failed, cancelled, skipped_budget, or running/waiting while the batch runs;
  verdict: pass, fail, error, or null without verify, for a job never started or whose workspace
  could not be made — its error starts "setup:"). CSV has every field but the patch.
  --patches DIR   also write DIR/<job id>.patch for each job whose agent changed its workspace
  --cleanup       then remove the workspaces of the batch's finished jobs kept on this host
                  (run it on the tools host; cleanup --older-than does the same by age)`;

const REPORT_USAGE = `usage: durable-agent report BATCH_ID [BATCH_ID…] [--json]
  One table over the batches' jobs, a row per model: jobs, resolved (verdict pass; the share counts
  every job), errors (no pass or fail: the job failed or was cancelled, or verify could not run),
  skipped (budget), cost per task (total, mean, median), turns per task (mean) and time per task
  (median), over the jobs that ran.`;

/** The batch's status; an unknown id is bad input (exit 2), not a missing session. */
async function statusOf(client: DurableAgentClient, batchId: string): Promise<BatchStatus> {
  try {
    return await batchStatus(client, batchId);
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new UsageError(`no batch ${batchId}`);
    throw e;
  }
}

export async function resultsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { out: { type: 'string' }, format: { type: 'string' }, patches: { type: 'string' }, cleanup: { type: 'boolean' } },
    RESULTS_USAGE,
  );
  if (v.help) return (out(RESULTS_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(RESULTS_USAGE);
  const format = v.format ?? (v.out?.endsWith('.csv') ? 'csv' : 'jsonl');
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format: expected jsonl or csv, got '${format}'`);
  if (v.patches === '') throw new UsageError('--patches: expected a folder');
  const batchId = positionals[0]!;
  return withClient(async (client) => {
    const { progress } = await statusOf(client, batchId);
    // JSONL lines carry the patch, so it is put back together when kept in parts; CSV needs it only for --patches.
    const patches = format === 'jsonl' || v.patches !== undefined;
    const rows = await batchRows(client, batchId, {
      patches,
      onPatchMissing: (id, why) => err(`warning: job ${id}: no patch: ${why}`),
    });
    const lines = resultLines(rows, format);
    if (v.out) {
      const file = createWriteStream(v.out);
      for (const l of lines) file.write(`${l}\n`);
      await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e ? reject(e) : resolve())));
      err(`${rows.length} results written to ${v.out}`);
    } else {
      for (const l of lines) out(l);
    }
    if (v.patches !== undefined) {
      mkdirSync(v.patches, { recursive: true });
      // An empty patch is an agent that changed nothing: no file, as for a job without a workspace.
      const withPatch = rows.filter((r) => r.patch);
      for (const r of withPatch) writeFileSync(path.join(v.patches, patchFileName(r.id)), r.patch!);
      err(`${withPatch.length} patches written to ${v.patches}`);
    }
    if (v.cleanup) await cleanupBatch(client, rows);
    if (rows.length < progress.total)
      err(`${progress.total - rows.length} of ${progress.total} jobs are not listed (not submitted yet, or not yet visible)`);
    return EXIT.ok;
  });
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, { json: { type: 'boolean' } }, REPORT_USAGE);
  if (v.help) return (out(REPORT_USAGE), EXIT.ok);
  if (positionals.length === 0) throw new UsageError(REPORT_USAGE);
  const batches = [...new Set(positionals)];
  return withClient(async (client) => {
    const rows = [];
    for (const id of batches) {
      await statusOf(client, id);
      rows.push(...(await batchRows(client, id)));
    }
    const report = batchReport(rows);
    if (v.json) return (printJson({ batches, ...report }), EXIT.ok);
    for (const line of renderReport(report)) out(line);
    return EXIT.ok;
  });
}

/**
 * `results --cleanup`: after the export, the workspaces of this batch's finished jobs that this
 * host holds (ARCHITECTURE.md#workspaces); a running job's is kept, as `cleanup` keeps it.
 */
async function cleanupBatch(client: DurableAgentClient, rows: { sessionId: string; status: string }[]): Promise<void> {
  const finished = new Set(rows.filter((r) => r.status !== 'running' && r.status !== 'waiting').map((r) => r.sessionId));
  const report = await cleanupWorkspaces({
    root: workspacesRoot(process.env),
    olderThanMs: 0,
    only: finished,
    isRunning: sessionIsRunning(client),
  });
  err(`${report.removed.length} workspaces removed from this host (${hostname()})`);
  for (const k of report.keptUnknown) err(`kept ${k.sessionId}: its state could not be read (${k.error})`);
}
