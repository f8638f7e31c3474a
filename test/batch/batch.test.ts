/**
 * Batches end to end: `durable-agent submit` / `results` as spawned processes against the dev
 * server, a worker with the scripted model in this process.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { batchStatus, submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { BATCH_JOB_WORKFLOW_TYPE, jobWorkflowIdFor, progressQuery, sessionIdFor, type BatchInput } from '../../src/shared/batch';
import { scenarioTag, useHarness } from '../helpers/harness';
import { cli, jsonLines, spawnCli } from '../cli/helpers';
import { workflowExists } from '../helpers/exists';
import { waitFor } from '../helpers/wait';

const h = useHarness({ tuning: { workflow: { maxCachedWorkflows: 1000, maxConcurrentWorkflowTaskExecutions: 100 } } });

/** Batch ids unique to this run, so a reused server (TEMPORAL_TEST_ADDRESS) never has them already. */
const RUN = Date.now().toString(36);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A jobs file of `n` jobs; job i plays scenario `<prefix>-i`, which answers `result of <prefix>-i`. */
function jobsFile(prefix: string, n: number, opts: { delayMs?: number; ext?: 'jsonl' | 'yaml' } = {}): string {
  const ws = h.workspace();
  const jobs = Array.from({ length: n }, (_, i) => {
    const id = `${prefix}-${String(i + 1).padStart(3, '0')}`;
    h.model.addScenario({ name: id, turns: [turn.text(`result of ${id}`, { delay_ms: opts.delayMs ?? 0 })] });
    return { id, prompt: `${scenarioTag(id)} job ${i + 1}`, permissionMode: 'bypassPermissions' };
  });
  const file = path.join(ws, `jobs.${opts.ext ?? 'jsonl'}`);
  const text =
    opts.ext === 'yaml'
      ? jobs.map((j) => `- id: ${j.id}\n  prompt: "${j.prompt}"\n  permissionMode: ${j.permissionMode}\n`).join('')
      : jobs.map((j) => JSON.stringify(j)).join('\n');
  writeFileSync(file, text);
  return file;
}

const exists = (workflowId: string) => workflowExists(h.client, workflowId);

/** The largest number of sessions whose [start, close] intervals overlap (server timestamps). */
function maxOverlap(intervals: { start: number; close: number }[]): number {
  const points = intervals.flatMap((i) => [
    { t: i.start, d: 1 },
    { t: i.close, d: -1 },
  ]);
  points.sort((a, b) => a.t - b.t || a.d - b.d); // a close before a start at the same instant
  let now = 0;
  let max = 0;
  for (const p of points) max = Math.max(max, (now += p.d));
  return max;
}

test('a bad job prints its line and field, exits 2, and starts nothing', async () => {
  const file = path.join(h.workspace(), 'jobs.jsonl');
  writeFileSync(
    file,
    [JSON.stringify({ prompt: 'fine' }), JSON.stringify({ prompt: 'fine too' }), JSON.stringify({ prompt: 'x', maxTurns: 0 })].join('\n'),
  );
  const r = await cli(['submit', file, '--batch-id', `never-${RUN}`], { env: h.env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/jobs\.jsonl:3: maxTurns: /);
  expect(await exists(`never-${RUN}`)).toBe(false);
  expect(await exists(jobWorkflowIdFor(`never-${RUN}`, 'job-1'))).toBe(false);

  const yaml = path.join(h.workspace(), 'jobs.yaml');
  writeFileSync(yaml, '- prompt: fine\n- prompt: also fine\n  permissionMode: sometimes\n');
  const y = await cli(['submit', yaml, '--batch-id', `never-${RUN}`], { env: h.env });
  expect(y.code).toBe(2);
  expect(y.stderr).toMatch(/jobs\.yaml:3: permissionMode: /);
  expect(await exists(`never-${RUN}`)).toBe(false);
});

test('200 jobs at --concurrency 20: never more than 20 running; killed submitter + re-run finishes with no duplicates; results exported', async () => {
  const batchId = `b200-${RUN}`;
  const file = jobsFile('b200', 200, { delayMs: 150 });
  const coordinator = h.client.client.workflow.getHandle(batchId);

  // Sample the cap while the batch runs: the coordinator's own count, and visibility.
  let sampling = true;
  let maxRunning = 0;
  let maxVisible = 0;
  let samples = 0;
  const sampler = (async () => {
    while (sampling) {
      const p = await coordinator.query(progressQuery).catch(() => undefined);
      if (p) maxRunning = Math.max(maxRunning, p.running.length);
      const visible = await h.client.client.workflow
        .count(`WorkflowType = 'agentSession' AND AgentBatchId = '${batchId}' AND ExecutionStatus = 'Running'`)
        .catch(() => undefined);
      if (visible) maxVisible = Math.max(maxVisible, visible.count);
      samples++;
      await sleep(50);
    }
  })();

  const args = ['submit', file, '--concurrency', '20', '--batch-id', batchId];
  const first = spawnCli(args, { env: { ...h.env, DURABLE_AGENT_SUBMIT_CHUNK: '5' } });
  await first.waitForLine(/submitted 40\/200/);
  first.child.kill('SIGKILL');
  const killed = await first.done;
  expect(killed.signal).toBe('SIGKILL');
  // The kill landed mid-submission: some job workflows exist, not all.
  const submittedBeforeKill = (
    await Promise.all(Array.from({ length: 200 }, (_, i) => exists(jobWorkflowIdFor(batchId, `b200-${String(i + 1).padStart(3, '0')}`))))
  ).filter(Boolean).length;
  expect(submittedBeforeKill).toBeGreaterThanOrEqual(40);
  expect(submittedBeforeKill).toBeLessThan(200);

  const again = await cli(args, { env: h.env });
  sampling = false;
  await sampler;
  expect(again.stderr).toMatch(new RegExp(`batch ${batchId} existed: \\d+ missing jobs submitted`));
  expect(again.stderr).toMatch(/\[#{24}\] 200\/200 done · 0 running · 0 queued · 0 failed · 0 skipped · \$/);
  expect(again.code).toBe(0);

  expect(samples).toBeGreaterThan(5);
  expect(maxRunning).toBeLessThanOrEqual(20);
  expect(maxRunning).toBeGreaterThan(1);
  expect(maxVisible).toBeLessThanOrEqual(20);

  // Exactly one session per job, and one model call per job: nothing ran twice.
  const sessions: { id: string; start: number; close: number }[] = [];
  for await (const w of h.client.client.workflow.list({ query: `WorkflowType = 'agentSession' AND AgentBatchId = '${batchId}'` })) {
    sessions.push({ id: w.workflowId, start: w.startTime.getTime(), close: w.closeTime?.getTime() ?? Infinity });
  }
  expect(sessions).toHaveLength(200);
  expect(new Set(sessions.map((s) => s.id)).size).toBe(200);
  const calls = h.model.requests.filter((r) => r.scenario.startsWith('b200-'));
  expect(calls).toHaveLength(200);
  expect(new Set(calls.map((r) => r.scenario)).size).toBe(200);
  // The cap, exactly: server start/close times of all 200 sessions never overlap more than 20 deep.
  const described = await Promise.all(sessions.map((s) => h.client.client.workflow.getHandle(s.id).describe()));
  const overlap = maxOverlap(described.map((d) => ({ start: d.startTime.getTime(), close: d.closeTime!.getTime() })));
  expect(overlap).toBeLessThanOrEqual(20);
  expect(overlap).toBeGreaterThan(1);
  // A job's session was started with its search attributes, so its loop wrote them once, at the end.
  const { events } = await h.client.client.workflow.getHandle(sessions[0]!.id).fetchHistory();
  const agentUpserts = (events ?? []).filter((e) =>
    Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some((k) => k.startsWith('Agent')),
  );
  expect(agentUpserts).toHaveLength(1);

  const out = path.join(h.workspace(), 'results.jsonl');
  const res = await cli(['results', batchId, '--out', out], { env: h.env });
  expect(res.code).toBe(0);
  const results = jsonLines<{
    id: string;
    status: string;
    result: string;
    turns: number;
    costUsd: number;
    error: string | null;
    sessionId: string;
  }>(readFileSync(out, 'utf8'));
  expect(results).toHaveLength(200);
  expect(results.map((r) => r.id)).toEqual(Array.from({ length: 200 }, (_, i) => `b200-${String(i + 1).padStart(3, '0')}`));
  for (const r of results) {
    expect(r).toMatchObject({
      status: 'completed',
      result: `result of ${r.id}`,
      turns: 1,
      error: null,
      sessionId: sessionIdFor(batchId, r.id),
    });
    expect(r.costUsd).toBeGreaterThan(0);
  }

  // Running the finished batch again changes nothing.
  const third = await cli(args, { env: h.env });
  expect(third.code).toBe(0);
  expect(third.stderr).toMatch(/existed: 0 missing jobs submitted/);
  expect(h.model.requests.filter((r) => r.scenario.startsWith('b200-'))).toHaveLength(200);
}, 600_000); // a backstop: on a loaded two-core machine this test alone takes ~2 minutes

test('the coordinator continues as new to keep its history short, and carries its counts across runs', async () => {
  const batchId = `b-can-${RUN}`;
  const jobs = readJobsFile(jobsFile('bcan', 60), { batchId, cwd: h.workspace() });
  await submitBatch(h.client, jobs, { batchId, concurrency: 6, eventsPerRun: 100 });
  const final = await h.client.client.workflow.getHandle(batchId).result();
  expect(final).toMatchObject({ total: 60, registered: 60, completed: 60, failed: 0, running: [], waiting: 0, done: true });
  // How many runs depends on how many signals the server batches into one workflow task (load);
  // what matters is that it continued as new at least once and the counts survived it.
  expect(final.run).toBeGreaterThan(1);
  // Every run's history stayed near the configured size.
  const runs: { runId: string; events: number }[] = [];
  for await (const w of h.client.client.workflow.list({ query: `WorkflowId = '${batchId}'` }))
    runs.push({ runId: w.runId, events: w.historyLength });
  expect(runs).toHaveLength(final.run);
  expect(Math.max(...runs.map((r) => r.events))).toBeLessThan(200);

  // What each run handed to the next, as stored: counters plus the ids of waiting and running
  // jobs, nothing per job besides its id.
  for (const { runId } of runs) {
    const events = (await h.client.client.workflow.getHandle(batchId, runId).fetchHistory()).events ?? [];
    const input = events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)?.workflowExecutionContinuedAsNewEventAttributes
      ?.input;
    if (!input) continue; // the last run completed
    const bytes = input.payloads![0]!.data!.length;
    const carried = (JSON.parse(Buffer.from(input.payloads![0]!.data!).toString('utf8')) as BatchInput).carried!;
    const idBytes = [...carried.waiting, ...carried.running].reduce((n, id) => n + JSON.stringify(id).length + 1, 0);
    expect(bytes - idBytes).toBeLessThan(512);
    // So 10,000 waiting and 500 running jobs with 64-character ids (67 bytes each) stay far
    // under the 2 MiB payload limit.
    expect(bytes - idBytes + 10_500 * 67).toBeLessThan(0.75 * 1024 * 1024);
  }
});

test('YAML jobs, --detach, ls --batch, and cancelling a batch cancels its sessions and its waiting jobs', async () => {
  const batchId = `b-cancel-${RUN}`;
  const file = jobsFile('bcancel', 6, { delayMs: 60_000, ext: 'yaml' });
  const r = await cli(['submit', file, '--concurrency', '2', '--batch-id', batchId, '--detach'], { env: h.env });
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe(batchId);

  const listed = await waitFor('two running sessions listed', async () => {
    const rows = jsonLines<{ sessionId: string }>(
      (await cli(['ls', '--batch', batchId, '--status', 'running', '--json'], { env: h.env })).stdout,
    );
    return rows.length >= 2 && rows;
  });
  // Jobs are submitted in parallel, so which two got the slots first is not fixed.
  const { progress } = await batchStatus(h.client, batchId);
  expect(progress).toMatchObject({ total: 6, registered: 6, waiting: 4, completed: 0 });
  const running = [...progress.running].sort();
  expect(running).toHaveLength(2);
  expect(listed.map((s) => s.sessionId).sort()).toEqual(running.map((id) => sessionIdFor(batchId, id)));

  expect((await cli(['cancel', batchId], { env: h.env })).code).toBe(0);
  await expect(h.client.client.workflow.getHandle(batchId).result()).rejects.toThrow();
  expect((await h.client.client.workflow.getHandle(batchId).describe()).status.name).toBe('CANCELLED');

  const results = jsonLines<{ id: string; status: string }>((await cli(['results', batchId], { env: h.env })).stdout);
  expect(results.map((x) => x.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
  for (const id of running) {
    expect(await (await h.client.get(sessionIdFor(batchId, id))).result()).toMatchObject({ exit_reason: 'aborted' });
  }
  const never = results.map((x) => x.id).filter((id) => !running.includes(id));
  expect(never).toHaveLength(4);
  for (const id of never) expect(await exists(sessionIdFor(batchId, id))).toBe(false);
  let count = 0;
  for await (const _ of h.client.client.workflow.list({
    query: `WorkflowType = '${BATCH_JOB_WORKFLOW_TYPE}' AND AgentBatchId = '${batchId}' AND ExecutionStatus = 'Running'`,
  }))
    count++;
  expect(count).toBe(0);

  // A cancelled batch is not restarted by submitting it again.
  const again = await cli(['submit', file, '--concurrency', '2', '--batch-id', batchId], { env: h.env });
  expect(again.code).toBe(2);
  expect(again.stderr).toMatch(new RegExp(`batch ${batchId} was cancelled`));
});

test('a different set of jobs under an existing batch id is refused', async () => {
  const batchId = `b-conflict-${RUN}`;
  const one = jobsFile('bconf', 2);
  expect((await cli(['submit', one, '--batch-id', batchId], { env: h.env })).code).toBe(0);
  const other = jobsFile('bconf2', 3);
  const r = await cli(['submit', other, '--batch-id', batchId], { env: h.env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(new RegExp(`batch ${batchId} already exists with a different set of jobs \\(2 jobs; this file has 3\\)`));
});
