/**
 * Batches from the client's side: submit a validated jobs file (durably, idempotently), watch its
 * progress, read its results. The workflows and the reasoning behind their shape are in
 * src/workflows/batch/batch.ts.
 */
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import {
  BATCH_JOB_WORKFLOW_TYPE,
  BATCH_WORKFLOW_TYPE,
  batchSearchAttributes,
  jobStateQuery,
  jobWorkflowIdFor,
  progressQuery,
  sessionIdFor,
  setConcurrencySignal,
  type BatchInput,
  type BatchJobInput,
  type BatchMemo,
  type BatchProgress,
  type JobOutcome,
} from '../shared/batch';
import { SessionConfigFields } from '../shared/config';
import type { DurableAgentClient } from './client';
import type { JobsFile } from './jobs-file';
import { quote } from './stream';
import { listRuns } from './visibility';

/** The batch id is taken by a different set of jobs, or the batch was cancelled; nothing was submitted. */
export class BatchConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchConflictError';
  }
}

export interface SubmitOptions {
  batchId: string;
  concurrency: number;
  /** Coordinator history events per run before it continues as new (default 2,000). */
  eventsPerRun?: number;
  /** The batch's spending cap in USD (ARCHITECTURE.md#batch-budget): no job starts once the spend reaches it. */
  maxBudgetUsd?: number;
  /** How often the coordinator checks granted jobs for having been closed by hand (ms, default 60,000). */
  livenessCheckMs?: number;
  /** Job workflows started per round trip (default 50, DURABLE_AGENT_SUBMIT_CHUNK). */
  chunk?: number;
  /** Called after each chunk with how many jobs are submitted so far. */
  onProgress?: (submitted: number, total: number) => void;
}

export interface SubmitResult {
  batchId: string;
  /** True when the batch already existed (a re-submission: only missing jobs were started). */
  existed: boolean;
  /** Job workflows started by this call (the rest existed already). */
  started: number;
}

/**
 * Start the coordinator (or find it) and every job workflow that does not exist yet. Safe to
 * repeat: ids are derived, so a job is never submitted twice; once this resolves the batch runs
 * to the end without the submitter.
 */
export async function submitBatch(client: DurableAgentClient, file: JobsFile, opts: SubmitOptions): Promise<SubmitResult> {
  const wf = client.client.workflow;
  const total = file.jobs.length;
  const memo: BatchMemo = { fingerprint: file.fingerprint, total };
  const input: BatchInput = {
    batchId: opts.batchId,
    concurrency: opts.concurrency,
    total,
    ...(opts.eventsPerRun ? { eventsPerRun: opts.eventsPerRun } : {}),
    ...(opts.maxBudgetUsd !== undefined ? { maxBudgetUsd: opts.maxBudgetUsd } : {}),
    ...(opts.livenessCheckMs !== undefined ? { livenessCheckMs: opts.livenessCheckMs } : {}),
  };
  const coordinator = wf.getHandle(opts.batchId);
  let existed = true;
  let d = await coordinator.describe().catch((e: Error) => (e.name === 'WorkflowNotFoundError' ? undefined : Promise.reject(e)));
  if (!d) {
    try {
      await wf.start(BATCH_WORKFLOW_TYPE, {
        workflowId: opts.batchId,
        taskQueue: client.taskQueue,
        args: [input],
        memo: memo as unknown as Record<string, unknown>,
        typedSearchAttributes: batchSearchAttributes(opts.batchId),
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      existed = false;
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
    d = await coordinator.describe();
  }
  const found = (d.memo ?? {}) as Partial<BatchMemo>;
  if (d.type !== BATCH_WORKFLOW_TYPE) throw new BatchConflictError(`${opts.batchId} is not a batch (it is a ${d.type} workflow)`);
  if (found.fingerprint !== file.fingerprint) {
    throw new BatchConflictError(
      `batch ${opts.batchId} already exists with a different set of jobs (${found.total ?? '?'} jobs; this file has ${total}); choose another --batch-id`,
    );
  }
  if (d.status.name !== 'RUNNING') {
    if (d.status.name === 'COMPLETED') return { batchId: opts.batchId, existed: true, started: 0 };
    throw new BatchConflictError(`batch ${opts.batchId} was ${d.status.name.toLowerCase()}; submit it under another --batch-id`);
  }
  if (existed) await coordinator.signal(setConcurrencySignal, opts.concurrency);

  let started = 0;
  let submitted = 0;
  const chunk = opts.chunk ?? 50;
  for (let i = 0; i < total; i += chunk) {
    await paceSubmission(coordinator);
    await Promise.all(
      file.jobs.slice(i, i + chunk).map(async (job) => {
        const args: BatchJobInput = { batchId: opts.batchId, jobId: job.id, index: job.index, options: job.options };
        try {
          await wf.start(BATCH_JOB_WORKFLOW_TYPE, {
            workflowId: jobWorkflowIdFor(opts.batchId, job.id),
            taskQueue: client.taskQueue,
            args: [args],
            // The model, so a job that never started (skipped, cancelled) still counts in its model's row of `report`.
            memo: { jobId: job.id, index: job.index, model: job.options.model ?? DEFAULT_MODEL },
            typedSearchAttributes: batchSearchAttributes(opts.batchId),
            // Running: attach; closed: never again. Either way the job runs once.
            workflowIdConflictPolicy: 'USE_EXISTING',
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
          });
          started++;
        } catch (e) {
          if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
        }
      }),
    );
    submitted = Math.min(total, i + chunk);
    opts.onProgress?.(submitted, total);
  }
  return { batchId: opts.batchId, existed, started };
}

const DEFAULT_MODEL = SessionConfigFields.shape.model.parse(undefined);

/** Submission pauses while the coordinator's current run has more history events than this. */
const PACE_EVENTS = 2_500;

/**
 * Wait while the coordinator's current run is long. Every submitted job signals the coordinator
 * once, and a workflow cannot continue as new while signals keep arriving, so an unpaced flood of
 * job workflows would grow one run's history with the batch size. Pausing here lets it continue as
 * new (it does so at 2,000 events), which bounds each run whatever the batch size.
 */
export async function paceSubmission(coordinator: {
  describe(): Promise<{ historyLength: number; status: { name: string } }>;
}): Promise<void> {
  for (;;) {
    const d = await coordinator.describe();
    if (d.historyLength <= PACE_EVENTS || d.status.name !== 'RUNNING') return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface BatchStatus {
  progress: BatchProgress;
  /** The coordinator's execution status: RUNNING, COMPLETED, CANCELLED, … */
  status: string;
}

/** Where a batch stands (for a closed batch, its final figures). */
export async function batchStatus(client: DurableAgentClient, batchId: string): Promise<BatchStatus> {
  const handle = client.client.workflow.getHandle(batchId);
  const d = await handle.describe();
  if (d.type !== BATCH_WORKFLOW_TYPE) throw new BatchConflictError(`${batchId} is not a batch (it is a ${d.type} workflow)`);
  const progress = d.status.name === 'COMPLETED' ? ((await handle.result()) as BatchProgress) : await handle.query(progressQuery);
  progress.skipped ??= 0; // batches from before the budget
  return { progress, status: d.status.name };
}

/** A job's outcome, or the state of one not finished; `model` as submitted (absent for batches submitted before it was recorded). */
export type JobResult = (JobOutcome | (Omit<JobOutcome, 'status'> & { status: 'waiting' | 'running' })) & { model?: string };

/** One outcome per submitted job, in file order: finished jobs' results, and the state of the others. */
export async function batchResults(client: DurableAgentClient, batchId: string, opts: { parallel?: number } = {}): Promise<JobResult[]> {
  const listed: { workflowId: string; runId: string; status: string; memo: Record<string, unknown> }[] = [];
  const query = `WorkflowType = ${quote(BATCH_JOB_WORKFLOW_TYPE)} AND AgentBatchId = ${quote(batchId)}`;
  for await (const w of listRuns(client.client, query, { codecs: client.payloadCodecs })) {
    listed.push({ workflowId: w.workflowId, runId: w.runId, status: w.status, memo: w.memo });
  }
  const out: JobResult[] = [];
  const parallel = opts.parallel ?? 32;
  for (let i = 0; i < listed.length; i += parallel) {
    const outcomes = listed.slice(i, i + parallel).map(async (w): Promise<JobResult> => {
      const outcome = await outcomeOf(client, batchId, w);
      return typeof w.memo.model === 'string' ? { ...outcome, model: w.memo.model } : outcome;
    });
    out.push(...(await Promise.all(outcomes)));
  }
  return out.sort((a, b) => a.index - b.index);
}

/** How long a finished job may take to close before it is reported as still running (no workers, say). */
const DONE_JOB_CLOSE_WAIT_MS = 30_000;

async function resultWithin(handle: WorkflowHandle, ms: number): Promise<JobOutcome | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      handle.result() as Promise<JobOutcome>,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function outcomeOf(
  client: DurableAgentClient,
  batchId: string,
  w: { workflowId: string; runId: string; status: string; memo: Record<string, unknown> },
): Promise<JobResult> {
  const handle = client.client.workflow.getHandle(w.workflowId, w.runId);
  const jobId = typeof w.memo.jobId === 'string' ? w.memo.jobId : w.workflowId.slice(batchId.length + 1, -'/job'.length);
  const base = {
    id: jobId,
    index: typeof w.memo.index === 'number' ? w.memo.index : 0,
    sessionId: sessionIdFor(batchId, jobId),
    turns: 0,
    costUsd: 0,
  };
  // Visibility may lag behind a close; the server's own record decides.
  const status = w.status === 'RUNNING' ? (await handle.describe()).status.name : w.status;
  if (status === 'COMPLETED') return (await handle.result()) as JobOutcome;
  if (status === 'RUNNING') {
    const s = await handle.query(jobStateQuery).catch(() => undefined);
    // Done but not closed yet: the job has its outcome and is telling the coordinator, which may
    // already have counted it (and ended the batch). Its result follows within a workflow task;
    // reporting it as waiting, with no cost, would contradict the batch's own totals.
    if (s?.state === 'done') return (await resultWithin(handle, DONE_JOB_CLOSE_WAIT_MS)) ?? { ...base, status: 'running' };
    return { ...base, status: s?.state === 'running' ? 'running' : 'waiting' };
  }
  return { ...base, status: status === 'CANCELLED' ? 'cancelled' : 'failed', error: `the job workflow was ${status.toLowerCase()}` };
}
