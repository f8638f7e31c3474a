/** The CLI's batch commands: submit (with a progress bar while attached) and results. */
import { createWriteStream } from 'node:fs';
import { MAX_CONCURRENCY, type BatchProgress } from '../shared/batch';
import { batchResults, batchStatus, submitBatch } from './batch';
import { EXIT, err, num, out, parse, usd, UsageError, withClient } from './cli-args';
import { readJobsFile } from './jobs-file';

export const SUBMIT_USAGE = `usage: durable-agent submit JOBS.jsonl|JOBS.yaml [--concurrency N] [--batch-id ID] [--cwd DIR] [--detach]
  Each job is an object of session options (prompt, cwd, model, maxTurns, …) plus an optional id
  (default job-<n>). Every job is checked before anything starts. Re-running the same command
  attaches to the batch and starts only jobs not yet submitted; no job ever runs twice.
  --concurrency N   sessions running at once, enforced by the server (default 4, max ${MAX_CONCURRENCY})
  --batch-id ID     default: derived from the file's content
  --cwd DIR         where relative job paths (and jobs without cwd) point (default: here)
  --detach          return once submitted; the batch runs on without this process`;

export const RESULTS_USAGE = `usage: durable-agent results BATCH_ID [--out results.jsonl]
  One JSON line per job, in file order: id, status, result, turns, costUsd, error, sessionId.`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function submitCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { concurrency: { type: 'string' }, 'batch-id': { type: 'string' }, cwd: { type: 'string' }, detach: { type: 'boolean' } },
    SUBMIT_USAGE,
  );
  if (v.help) return out(SUBMIT_USAGE), EXIT.ok;
  if (positionals.length !== 1) throw new UsageError(SUBMIT_USAGE);
  const concurrency = num(v.concurrency, 'concurrency', { integer: true, min: 1 }) ?? 4;
  if (concurrency > MAX_CONCURRENCY) throw new UsageError(`--concurrency: at most ${MAX_CONCURRENCY}, got ${concurrency}`);
  const file = readJobsFile(positionals[0]!, { batchId: v['batch-id'], cwd: v.cwd });
  const batchId = v['batch-id'] ?? file.defaultBatchId;
  const chunk = num(process.env.DURABLE_AGENT_SUBMIT_CHUNK, 'DURABLE_AGENT_SUBMIT_CHUNK', { integer: true, min: 1 });
  return withClient(async (client) => {
    err(`batch ${batchId}: ${file.jobs.length} jobs, concurrency ${concurrency}`);
    const r = await submitBatch(client, file, {
      batchId,
      concurrency,
      chunk,
      onProgress: (n, total) => err(`submitted ${n}/${total}`),
    });
    err(r.existed ? `batch ${batchId} existed: ${r.started} missing jobs submitted` : `batch ${batchId} submitted`);
    if (v.detach) return out(batchId), EXIT.ok;
    return watchBatch(client, batchId);
  });
}

/** Poll the batch and draw its progress on stderr until it ends; exit 0 only if every job succeeded. */
async function watchBatch(client: Parameters<Parameters<typeof withClient>[0]>[0], batchId: string): Promise<number> {
  const tty = Boolean(process.stderr.isTTY);
  let last = '';
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
    const line = progressLine(p, tty);
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (line !== last) err(line);
    last = line;
    if (status !== 'RUNNING') {
      if (tty) process.stderr.write('\n');
      if (status !== 'COMPLETED') err(`batch ${batchId} ${status.toLowerCase()}`);
      err(`results: durable-agent results ${batchId} --out results.jsonl`);
      return status === 'COMPLETED' && p.failed === 0 && p.cancelled === 0 ? EXIT.ok : EXIT.error;
    }
    await sleep(1_000);
  }
}

export function progressLine(p: BatchProgress, color: boolean): string {
  const done = p.completed + p.failed + p.cancelled;
  const width = 24;
  const filled = Math.round((done / Math.max(1, p.total)) * width);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  const failed = p.failed + p.cancelled > 0 && color ? `\x1b[31m${p.failed} failed\x1b[0m` : `${p.failed} failed`;
  const pending = p.total - p.registered > 0 ? ` · ${p.total - p.registered} not submitted` : '';
  return `[${bar}] ${done}/${p.total} done · ${p.running.length} running · ${p.waiting} waiting · ${failed}${p.cancelled ? ` · ${p.cancelled} cancelled` : ''}${pending} · ${usd(p.costUsd)}`;
}

export async function resultsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, { out: { type: 'string' } }, RESULTS_USAGE);
  if (v.help) return out(RESULTS_USAGE), EXIT.ok;
  if (positionals.length !== 1) throw new UsageError(RESULTS_USAGE);
  const batchId = positionals[0]!;
  return withClient(async (client) => {
    const { progress } = await batchStatus(client, batchId);
    const results = await batchResults(client, batchId);
    const lines = results.map((r) =>
      JSON.stringify({ id: r.id, status: r.status, result: 'result' in r ? (r.result ?? null) : null, turns: r.turns, costUsd: r.costUsd, error: r.error ?? null, sessionId: r.sessionId }),
    );
    if (v.out) {
      const file = createWriteStream(v.out);
      for (const l of lines) file.write(`${l}\n`);
      await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e ? reject(e) : resolve())));
      err(`${results.length} results written to ${v.out}`);
    } else {
      for (const l of lines) out(l);
    }
    if (results.length < progress.total) err(`${progress.total - results.length} of ${progress.total} jobs are not listed (not submitted yet, or not yet visible)`);
    return EXIT.ok;
  });
}
