/**
 * Benchmark 15 — what workspaces cost a batch (ARCHITECTURE.md#workspaces): the same jobs run
 * twice on one dev server and worker, once each bringing `workspace: {git}` (a folder made from
 * the mirror when the job starts, the diff taken when it ends) and once in folders cloned before
 * the batch (plain `cwd`, nothing made or diffed). Every job runs one Bash call and answers; the
 * batches alternate, the first pair a warm-up left out (it also makes the mirror).
 *
 *   npx tsx bench/workspace-batch.ts [--files 10000] [--jobs 8] [--concurrency 4] [--rounds 2]
 *
 * The difference of the two batches' wall times is the overhead a batch pays for its workspaces.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { turn } from '../src/testing/scripted-model';
import { batchStatus, submitBatch } from '../src/client/batch';
import { readJobsFile } from '../src/client/jobs-file';
import type { DurableAgentClient } from '../src/client/client';
import { makeRepository } from './workspace-provision';
import { load, machine, median, sleep, startBenchStack, table } from './lib';

async function runBatch(client: DurableAgentClient, file: string, batchId: string, concurrency: number): Promise<number> {
  const t0 = performance.now();
  await submitBatch(client, readJobsFile(file, { batchId }), { batchId, concurrency });
  for (;;) {
    const { status, progress } = await batchStatus(client, batchId);
    if (status !== 'RUNNING') {
      if (progress.completed !== progress.total) throw new Error(`${batchId}: ${progress.completed} of ${progress.total} jobs completed`);
      return performance.now() - t0;
    }
    await sleep(100);
  }
}

export async function workspaceBatch(opts: { files: number; jobs: number; concurrency: number; rounds: number }): Promise<void> {
  console.log(`# Workspaces in a batch — ${machine()}; load before: ${load()}`);
  const workspacesRoot = mkdtempSync(path.join(tmpdir(), 'da-bench-workspaces-'));
  const { stack, model, dir } = await startBenchStack({ worker: { workspacesRoot } });
  const { url } = makeRepository(dir, opts.files);
  model.addScenario({ name: 'job', turns: [turn.tool('Bash', { command: 'echo done >> status.txt' }), turn.text('done')] });
  const wall: Record<'workspace' | 'premade', number[]> = { workspace: [], premade: [] };
  try {
    for (let round = 0; round <= opts.rounds; round++) {
      const jobs = Array.from({ length: opts.jobs }, (_, i) => i);
      // Folders made before the batch: not timed, as a user's own checkouts would not be.
      const premade = jobs.map((i) => {
        const folder = path.join(dir, `premade-${round}-${i}`);
        execFileSync('git', ['clone', '--quiet', url, folder]);
        return folder;
      });
      const line = (extra: object, i: number) =>
        JSON.stringify({ id: `j${i}`, prompt: '[scenario:job] go', permissionMode: 'bypassPermissions', ...extra });
      const files = {
        workspace: jobs.map((i) => line({ workspace: { git: url, ref: 'main' } }, i)),
        premade: jobs.map((i) => line({ cwd: premade[i] }, i)),
      };
      for (const kind of ['workspace', 'premade'] as const) {
        const file = path.join(dir, `${kind}-${round}.jsonl`);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, files[kind].join('\n'));
        const ms = await runBatch(stack.client, file, `bench-${kind}-${round}-${Date.now().toString(36)}`, opts.concurrency);
        if (round > 0) wall[kind].push(ms);
      }
    }
  } finally {
    await stack.close();
  }
  const w = median(wall.workspace);
  const p = median(wall.premade);
  console.log(
    table([
      [`batch of ${opts.jobs} jobs, concurrency ${opts.concurrency}, ${opts.files} files`, 'median wall', 'per job'],
      [
        'workspace: {git} (made from the mirror, diffed at the end)',
        `${(w / 1000).toFixed(2)} s`,
        `${(w / opts.jobs / 1000).toFixed(2)} s`,
      ],
      ['pre-made folders (cwd)', `${(p / 1000).toFixed(2)} s`, `${(p / opts.jobs / 1000).toFixed(2)} s`],
      ['overhead of workspaces', `${((w - p) / 1000).toFixed(2)} s`, `${((w - p) / opts.jobs / 1000).toFixed(2)} s`],
    ]),
  );
  console.log(`rounds: ${opts.rounds}; load after: ${load()}`);
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      files: { type: 'string', default: '10000' },
      jobs: { type: 'string', default: '8' },
      concurrency: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '2' },
    },
  });
  workspaceBatch({
    files: Number(values.files),
    jobs: Number(values.jobs),
    concurrency: Number(values.concurrency),
    rounds: Number(values.rounds),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
