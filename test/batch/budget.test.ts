/**
 * The batch budget and slots of job workflows closed by hand (ARCHITECTURE.md#batch-budget):
 * `submitBatch` / `durable-agent submit --max-budget-usd` against the dev server and a worker with
 * the scripted model in this process.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { batchResults, batchStatus, submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { Worker } from '@temporalio/worker';
import { jobStateQuery, jobWorkflowIdFor, progressQuery, sessionIdFor, type BatchProgress, type JobOutcome } from '../../src/shared/batch';
import { scenarioTag, useHarness, workflowBundle } from '../helpers/harness';
import { cli } from '../cli/helpers';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

const h = useHarness();
const RUN = Date.now().toString(36);

/** Every job's one reply reports the same usage, so every job costs the same. */
const USAGE = { prompt_tokens: 200_000, completion_tokens: 10 };

function jobsFile(prefix: string, n: number, turns: (id: string) => Parameters<typeof h.model.addScenario>[0]): string {
  const lines = Array.from({ length: n }, (_, i) => {
    const id = `${prefix}-${String(i + 1).padStart(2, '0')}`;
    h.model.addScenario(turns(id));
    return JSON.stringify({ id, prompt: `${scenarioTag(id)} job ${i + 1}`, permissionMode: 'bypassPermissions' });
  });
  const file = path.join(h.workspace(), 'jobs.jsonl');
  writeFileSync(file, lines.join('\n'));
  return file;
}

test('--max-budget-usd: no slot once the spend reaches the budget, overshoot bounded by the running caps, the rest skipped_budget', async () => {
  // What one job costs (the same scenario shape, run once on its own).
  const probe = await h.run({ name: `probe-${RUN}`, turns: [turn.text('probe', { usage: USAGE })] }, {});
  const perJob = probe.result.total_cost_usd;
  expect(perJob).toBeGreaterThan(0);

  const batchId = `budget-${RUN}`;
  const concurrency = 2;
  const budget = 2.5 * perJob;
  const file = jobsFile('bud', 10, (id) => ({ name: id, turns: [turn.text(`result of ${id}`, { usage: USAGE, delay_ms: 300 })] }));
  const r = await cli(['submit', file, '--batch-id', batchId, '--concurrency', String(concurrency), '--max-budget-usd', String(budget)], {
    env: h.env,
  });
  expect(r.stderr).toMatch(/skipped/);
  const final = (await h.client.client.workflow.getHandle(batchId).result()) as BatchProgress;
  expect(final).toMatchObject({ total: 10, done: true, running: [], maxBudgetUsd: budget });

  // It stopped because the budget was reached, not before: the spend got to it…
  expect(final.costUsd).toBeGreaterThanOrEqual(budget);
  // …and went over by no more than what the jobs running at that moment could spend (one call each).
  expect(final.costUsd).toBeLessThanOrEqual(budget + concurrency * perJob + 1e-9);
  const started = final.completed + final.failed;
  expect(final.skipped).toBe(10 - started);
  expect(final.skipped).toBeGreaterThanOrEqual(5);

  // `results` says which: the never-started jobs are skipped_budget, with no session and no cost.
  const results = await batchResults(h.client, batchId);
  const skipped = results.filter((x) => x.status === 'skipped_budget');
  expect(skipped).toHaveLength(final.skipped);
  for (const s of skipped) expect(s).toMatchObject({ costUsd: 0, turns: 0 });
  const csv = await cli(['results', batchId, '--format', 'csv'], { env: h.env });
  expect(csv.code).toBe(0);
  const rows = csv.stdout.trim().split('\n');
  expect(rows[0]).toBe(
    'id,status,result,turns,costUsd,error,sessionId,model,durationMs,verdict,verifyExitCode,verifyDurationMs,verifyOutputTail,diffStat',
  );
  expect(rows.filter((l) => l.split(',')[1] === 'skipped_budget')).toHaveLength(final.skipped);
  // The last jobs started got what was left of the budget as their cap, under their own.
  const jsonl = await cli(['results', batchId, '--format', 'jsonl'], { env: h.env });
  const lines = jsonl.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { status: string; verdict: unknown });
  expect(lines.map((l) => l.status)).toEqual(results.map((x) => x.status));
  // A job never started has no verdict.
  for (const l of lines.filter((x) => x.status === 'skipped_budget')) expect(l.verdict).toBeNull();
});

/** A Bash command that waits for a file the test writes (h.gate() has one file per workspace; this test needs two). */
function gateFile(name: string): { command: string; release: () => void } {
  const file = path.join(h.workspace(), `release-${name}`);
  return { command: `while [ ! -e ${file} ]; do sleep 0.05; done`, release: () => writeFileSync(file, '') };
}

test('running jobs report their spend: no slot once it reaches the budget though no job has finished; the waiting jobs end skipped_budget', async () => {
  const probe = await h.run({ name: `probe2-${RUN}`, turns: [turn.text('probe', { usage: USAGE })] }, {});
  const perJob = probe.result.total_cost_usd;
  expect(perJob).toBeGreaterThan(0);

  const batchId = `spend-${RUN}`;
  // Two long jobs together spend 2 × perJob ≥ the budget; each alone stays under its cap (≈ the whole budget).
  const budget = 1.5 * perJob;
  const started = gateFile('started');
  const hold = gateFile('hold');
  const TINY = { prompt_tokens: 10, completion_tokens: 1 };
  const file = jobsFile('spend', 5, (id) => ({
    name: id,
    turns: [
      // A cheap first call, so both long jobs are granted (with the whole budget as cap) before either spends.
      turn.tool('Bash', { command: started.command }, { usage: TINY }),
      turn.tool('Bash', { command: hold.command }, { usage: USAGE }),
      turn.text(`result of ${id}`, { usage: TINY }),
    ],
  }));
  const coordinator = h.client.client.workflow.getHandle(batchId);
  const job = (id: string) => h.client.client.workflow.getHandle(jobWorkflowIdFor(batchId, id));
  let long: string[] = [];
  try {
    await submitBatch(h.client, readJobsFile(file, { batchId, cwd: h.workspace() }), { batchId, concurrency: 2, maxBudgetUsd: budget });
    // Any two jobs get the slots (job workflows register in no fixed order); the other three wait.
    await waitFor(
      'two jobs running',
      async () => {
        long = (await coordinator.query(progressQuery)).running;
        if (long.length < 2) return false;
        for (const id of long) if ((await job(id).query(jobStateQuery)).state !== 'running') return false;
        return true;
      },
      { timeoutMs: 60_000, ignoreErrors: true },
    );
    const rest = ['spend-01', 'spend-02', 'spend-03', 'spend-04', 'spend-05'].filter((id) => !long.includes(id));
    expect(rest).toHaveLength(3);
    started.release();
    // Both long jobs spend perJob each and then wait on `hold`: none has finished, yet the batch's spend is past
    // the budget, so the three waiting jobs get no slot and end skipped_budget.
    for (const id of rest) {
      const outcome = (await job(id).result()) as JobOutcome;
      expect(outcome).toMatchObject({ id, status: 'skipped_budget', costUsd: 0, turns: 0 });
    }
    const mid = await coordinator.query(progressQuery);
    expect(mid).toMatchObject({ completed: 0, failed: 0, cancelled: 0, skipped: 3, costUsd: 0 });
    expect([...mid.running].sort()).toEqual([...long].sort());
    expect(mid.runningCostUsd).toBeGreaterThanOrEqual(budget);
    for (const id of long) expect((await job(id).query(jobStateQuery)).state).toBe('running');
  } finally {
    started.release();
    hold.release();
  }
  // Released, the long jobs finish under their caps; the batch ends with their final costs counted once.
  const final = (await coordinator.result()) as BatchProgress;
  expect(final).toMatchObject({ total: 5, completed: 2, failed: 0, skipped: 3, running: [], done: true, runningCostUsd: 0 });
  const results = await batchResults(h.client, batchId);
  const costs = results.filter((x) => x.status === 'completed').reduce((a, x) => a + x.costUsd, 0);
  expect(final.costUsd).toBeCloseTo(costs, 9);
  expect(final.costUsd).toBeGreaterThanOrEqual(2 * perJob);

  // History stays small: a long job's session reported at most once per model call (3 calls; the throttle may merge them)…
  const histories = [{ workflowId: batchId, history: await coordinator.fetchHistory() }];
  for (const id of long) {
    const history = await h.client.client.workflow.getHandle(sessionIdFor(batchId, id)).fetchHistory();
    const sent = history.events!.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'spend');
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.length).toBeLessThanOrEqual(3);
    histories.push({ workflowId: sessionIdFor(batchId, id), history });
  }
  // …and the coordinator's and the sessions' histories replay on the current workflow code.
  let replayed = 0;
  for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
    expect(r.error).toBeUndefined();
    replayed++;
  }
  expect(replayed).toBe(3);
});

test('a job workflow terminated by hand releases its slot: the next job runs, the batch completes', async () => {
  const batchId = `term-${RUN}`;
  const gate = h.gate();
  const file = jobsFile('term', 3, (id) => ({
    name: id,
    turns: id.endsWith('-01') ? [turn.tool('Bash', { command: gate.command }), turn.text('never')] : [turn.text(`result of ${id}`)],
  }));
  try {
    await submitBatch(h.client, readJobsFile(file, { batchId, cwd: h.workspace() }), { batchId, concurrency: 1, livenessCheckMs: 1_000 });
    const job1 = h.client.client.workflow.getHandle(jobWorkflowIdFor(batchId, 'term-01'));
    await waitFor('job 1 running', async () => (await job1.query(jobStateQuery)).state === 'running', {
      timeoutMs: 60_000,
      ignoreErrors: true,
    });
    await job1.terminate('by hand');
    const final = (await h.client.client.workflow.getHandle(batchId).result()) as BatchProgress;
    expect(final).toMatchObject({ total: 3, completed: 2, failed: 1, running: [], done: true });
    const { progress } = await batchStatus(h.client, batchId);
    expect(progress.completed).toBe(2);
  } finally {
    gate.release();
  }
});
