/** The CLI's batch commands: submit (with a progress bar while attached) and batch status; results and report are in results.ts. */
import { MAX_CONCURRENCY, type BatchProgress } from '../shared/batch';
import { batchStatus, submitBatch } from '../client/batch';
import path from 'node:path';
import type { BatchJob } from '../shared/batch';
import { SettingsError } from '../shared/permissions/settings';
import { EXIT, err, list, num, out, parse, usd, UsageError, withClient } from './args';
import { JobsFileError, readJobsFile } from '../client/jobs-file';
import { checkSettingsFiles, parseSettingSources } from './settings-check';

const SUBMIT_USAGE = `usage: durable-agent submit JOBS.jsonl|JOBS.yaml [--concurrency N] [--max-budget-usd N] [--batch-id ID] [--cwd DIR] [--detach] [--json]
  [--model M [--model M2 …]] [--allowed-tools A,B] [--disallowed-tools A,B] [--ask-tools A,B] [--settings FILE] [--setting-sources user,project,local]
  Each job is an object of session options (prompt, cwd, model, maxTurns, …) plus an optional id
  (default job-<n>). Every job is checked before anything starts. Re-running the same command
  attaches to the batch and starts only jobs not yet submitted; no job ever runs twice.
  --concurrency N   sessions running at once, enforced by the server (default 4, max ${MAX_CONCURRENCY})
  --max-budget-usd N  the batch's spending cap: no job starts once the spend reaches N; running jobs
                    get what is left as their cap; jobs never started end skipped_budget
  --json            progress as one JSON object per line (stdout) instead of the bar
  --batch-id ID     default: derived from the file's content
  --cwd DIR         where relative job paths (and jobs without cwd) point (default: here)
  --detach          return once submitted; the batch runs on without this process
  --model M         the model of jobs that name none; given more than once, every job runs once per
                    model, as job TASK:MODEL (a '/' in the model written '_'), and jobs may not name
                    one; the default batch id depends on the models too
  A job's workspace ({"git": URL, "ref": REF} or {"copy": DIR}) is its folder, made on a tools host
  (no cwd beside it); its verify ("CMD" or {"command": CMD, "timeoutMs": N}) gives its verdict.
  --allowed-tools, --disallowed-tools, --ask-tools, --settings, --setting-sources: defaults for every
                    job (a job's own allowedTools, …, settingsFile, settingSources win)`;

const BATCH_USAGE = `usage: durable-agent batch status BATCH_ID [--watch] [--json]
  Where the batch stands: done / running / queued / failed / skipped, spend, ETA. On a terminal the
  bar stays live until the batch ends; --watch does the same elsewhere (one plain line per change);
  --json prints the progress as JSON (one object per line with --watch).`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function submitCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      concurrency: { type: 'string' },
      model: { type: 'string', multiple: true },
      'batch-id': { type: 'string' },
      cwd: { type: 'string' },
      detach: { type: 'boolean' },
      json: { type: 'boolean' },
      'max-budget-usd': { type: 'string' },
      'allowed-tools': { type: 'string' },
      'disallowed-tools': { type: 'string' },
      'ask-tools': { type: 'string' },
      settings: { type: 'string' },
      'setting-sources': { type: 'string' },
    },
    SUBMIT_USAGE,
  );
  if (v.help) return (out(SUBMIT_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(SUBMIT_USAGE);
  const concurrency = num(v.concurrency, 'concurrency', { integer: true, min: 1 }) ?? 4;
  if (concurrency > MAX_CONCURRENCY) throw new UsageError(`--concurrency: at most ${MAX_CONCURRENCY}, got ${concurrency}`);
  const maxBudgetUsd = num(v['max-budget-usd'], 'max-budget-usd');
  if (maxBudgetUsd !== undefined && !(maxBudgetUsd > 0))
    throw new UsageError(`--max-budget-usd: expected a positive number, got ${v['max-budget-usd']}`);
  const defaults = {
    ...(v['allowed-tools'] ? { allowedTools: list(v['allowed-tools']) } : {}),
    ...(v['disallowed-tools'] ? { disallowedTools: list(v['disallowed-tools']) } : {}),
    ...(v['ask-tools'] ? { askTools: list(v['ask-tools']) } : {}),
    ...(v.settings !== undefined ? { settingsFile: path.resolve(v.settings) } : {}),
    ...(v['setting-sources'] !== undefined ? { settingSources: parseSettingSources(v['setting-sources']) } : {}),
  };
  const file = readJobsFile(positionals[0]!, { batchId: v['batch-id'], cwd: v.cwd, defaults, models: v.model });
  for (const w of file.warnings) err(`warning: ${w}`);
  checkJobSettings(positionals[0]!, file.jobs);
  const batchId = v['batch-id'] ?? file.defaultBatchId;
  const chunk = num(process.env.DURABLE_AGENT_SUBMIT_CHUNK, 'DURABLE_AGENT_SUBMIT_CHUNK', { integer: true, min: 1 });
  return withClient(async (client) => {
    err(`batch ${batchId}: ${file.jobs.length} jobs, concurrency ${concurrency}`);
    const r = await submitBatch(client, file, {
      batchId,
      concurrency,
      ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
      chunk,
      onProgress: (n, total) => err(`submitted ${n}/${total}`),
    });
    err(r.existed ? `batch ${batchId} existed: ${r.started} missing jobs submitted` : `batch ${batchId} submitted`);
    if (v.detach) return (out(batchId), EXIT.ok);
    return watchBatch(client, batchId, { json: Boolean(v.json), live: true });
  });
}

/** Every job's settings files, checked once per distinct set before anything is submitted. */
function checkJobSettings(file: string, jobs: BatchJob[]): void {
  const checked = new Set<string>();
  for (const job of jobs) {
    // A workspace's folder is made on the tools host: its settings files are read there.
    if (job.options.cwd === undefined) continue;
    const o = { cwd: job.options.cwd, settingSources: job.options.settingSources, settingsFile: job.options.settingsFile };
    const key = JSON.stringify(o);
    if (checked.has(key)) continue;
    checked.add(key);
    try {
      checkSettingsFiles(o);
    } catch (e) {
      if (e instanceof SettingsError) throw new JobsFileError(file, undefined, 'settingsFile', `job ${job.id}: ${e.message}`);
      throw e;
    }
  }
}

/**
 * Poll the batch and show its progress until it ends (or once, without `live`): a bar redrawn in
 * place on a terminal, a plain line per change otherwise, JSON lines on stdout with `json`.
 * Exit 0 only if every job succeeded.
 */
async function watchBatch(
  client: Parameters<Parameters<typeof withClient>[0]>[0],
  batchId: string,
  opts: { json: boolean; live: boolean },
): Promise<number> {
  const tty = Boolean(process.stderr.isTTY) && !opts.json;
  let last = '';
  const eta = etaClock();
  let complained = false;
  for (;;) {
    let st: Awaited<ReturnType<typeof batchStatus>>;
    try {
      st = await batchStatus(client, batchId);
    } catch (e) {
      // The batch runs on without us; progress needs a worker to answer the query.
      if (!complained) err(`no progress yet (${(e as Error).message.split('\n')[0]}); is a worker running? retrying…`);
      complained = true;
      await sleep(2_000);
      continue;
    }
    const { progress: p, status } = st;
    const etaMs = eta(p);
    const line = opts.json ? JSON.stringify({ ...p, status, etaMs: etaMs ?? null }) : progressLine(p, tty, etaMs);
    if (opts.json) {
      if (line !== last) out(line);
    } else if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (line !== last) err(line);
    last = line;
    if (status !== 'RUNNING' || !opts.live) {
      if (tty) process.stderr.write('\n');
      if (status === 'RUNNING') return EXIT.ok;
      if (status !== 'COMPLETED') err(`batch ${batchId} ${status.toLowerCase()}`);
      if (!opts.json) err(`results: durable-agent results ${batchId} --out results.jsonl`);
      return status === 'COMPLETED' && p.failed === 0 && p.cancelled === 0 ? EXIT.ok : EXIT.error;
    }
    await sleep(1_000);
  }
}

/** Estimated ms until the batch is done, from the rate jobs finished at since the watch began. */
function etaClock(now = () => Date.now()): (p: BatchProgress) => number | undefined {
  let first: { at: number; done: number } | undefined;
  return (p) => {
    const done = finishedJobs(p);
    first ??= { at: now(), done };
    const rate = (done - first.done) / Math.max(1, now() - first.at);
    return rate > 0 ? Math.round((p.total - done) / rate) : undefined;
  };
}

const finishedJobs = (p: BatchProgress) => p.completed + p.failed + p.cancelled + (p.skipped ?? 0);

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One line: `[####----] 12/40 done · 4 running · 20 queued · 1 failed · 3 skipped · $0.1234 of $1.0000 · ETA 2m10s`. */
function progressLine(p: BatchProgress, color: boolean, etaMs?: number): string {
  const done = finishedJobs(p);
  const width = 24;
  const filled = Math.round((done / Math.max(1, p.total)) * width);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  const failed = p.failed + p.cancelled > 0 && color ? `\x1b[31m${p.failed} failed\x1b[0m` : `${p.failed} failed`;
  const pending = p.total - p.registered > 0 ? ` · ${p.total - p.registered} not submitted` : '';
  // Spend so far: finished jobs' cost plus what running jobs have reported (ARCHITECTURE.md#batch-budget).
  const spent = p.costUsd + (p.runningCostUsd ?? 0);
  const spend = p.maxBudgetUsd !== undefined ? `${usd(spent)} of ${usd(p.maxBudgetUsd)}` : usd(spent);
  const eta = done >= p.total ? '' : etaMs !== undefined ? ` · ETA ${duration(etaMs)}` : ' · ETA --';
  return `[${bar}] ${done}/${p.total} done · ${p.running.length} running · ${p.waiting} queued · ${failed}${p.cancelled ? ` · ${p.cancelled} cancelled` : ''} · ${p.skipped ?? 0} skipped${pending} · ${spend}${eta}`;
}

export async function batchCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') return (out(BATCH_USAGE), EXIT.ok);
  if (sub !== 'status') throw new UsageError(sub === undefined ? BATCH_USAGE : `batch: unknown subcommand '${sub}'\n\n${BATCH_USAGE}`);
  const { values: v, positionals } = parse(rest, { watch: { type: 'boolean' }, json: { type: 'boolean' } }, BATCH_USAGE);
  if (v.help) return (out(BATCH_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(BATCH_USAGE);
  const json = Boolean(v.json);
  const live = Boolean(v.watch) || (!json && Boolean(process.stderr.isTTY));
  return withClient((client) => watchBatch(client, positionals[0]!, { json, live }));
}
