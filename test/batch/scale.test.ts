/**
 * 10,000 jobs through one coordinator: its history must stay bounded (continue-as-new) and its
 * counts exact across runs. The jobs here are only ids (acquire signals sent by the test): their
 * job workflows do not exist, so each grant fails and the coordinator counts the job as failed —
 * the same per-job history (a signal in, a signal out) as a real job, without 10,000 sessions.
 */
import { paceSubmission } from '../../src/client/batch';
import { BATCH_WORKFLOW_TYPE, acquireSignal, type BatchProgress } from '../../src/shared/batch';
import { useHarness } from '../helpers/harness';

const h = useHarness();

test('a 10,000-job batch continues as new, never nears a history limit, and loses no job', async () => {
  const batchId = `scale-${Date.now().toString(36)}`;
  const total = 10_000;
  const wf = h.client.client.workflow;
  const coordinator = await wf.start(BATCH_WORKFLOW_TYPE, {
    workflowId: batchId,
    taskQueue: h.taskQueue,
    args: [{ batchId, concurrency: 500, total }],
  });
  // Maximal ids (64 characters), so the carried state is as large as it can be.
  const id = (i: number) => `job-${String(i).padStart(5, '0')}-`.padEnd(64, 'x');
  for (let i = 0; i < total; i += 250) {
    await paceSubmission(wf.getHandle(batchId)); // as submitBatch does between chunks
    await Promise.all(Array.from({ length: Math.min(250, total - i) }, (_, k) => coordinator.signal(acquireSignal, { jobId: id(i + k) })));
  }
  const final = (await wf.getHandle(batchId).result()) as BatchProgress;
  expect(final).toMatchObject({ total, registered: total, failed: total, completed: 0, running: [], waiting: 0, done: true });

  const runs: { events: number; bytes: number }[] = [];
  for await (const w of wf.list({ query: `WorkflowId = '${batchId}'` })) runs.push({ events: w.historyLength, bytes: w.historySize ?? 0 });
  expect(runs).toHaveLength(final.run);
  expect(final.run).toBeGreaterThan(5);
  // Continue-as-new at ~2,000 events (one workflow task may overshoot a little); the limits are 51,200 events / 50 MiB.
  expect(Math.max(...runs.map((r) => r.events))).toBeLessThan(4_096);
  expect(Math.max(...runs.map((r) => r.bytes))).toBeLessThan(4 * 1024 * 1024);
}, 600_000);
