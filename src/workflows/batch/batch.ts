/**
 * Batches: many sessions under one concurrency cap that the server enforces.
 *
 * Shape. A batch is one coordinator workflow, `agentBatch` (workflow id = batch id), and one small
 * job workflow per job, `agentBatchJob` (id `<batch>/<job>/job`), which the submitting client
 * starts. A job workflow asks the coordinator for a slot (`acquire` signal), waits for `grant`,
 * runs its session as a child workflow (id `<batch>/<job>`), and hands the slot back (`release`).
 *
 * Why not send the jobs to the coordinator (an `addJobs` update) and let it start the sessions?
 * Because of where the jobs' options would have to live. 10,000 jobs with long prompts are far
 * more than the 2 MiB a continue-as-new can carry, so a coordinator holding them could only take
 * them in a bounded window and the submitter would have to stay alive, feeding it, until the last
 * job started — days, for a big batch. Here each job's options are stored once, durably, as the
 * input of its own job workflow the moment it is submitted; after that the submitter may die or
 * detach and the batch still runs to the end. And the coordinator could not await sessions it
 * started in an earlier run (child handles do not survive continue-as-new; children must be
 * abandoned to survive it at all); job workflows report back by signal, which always reaches the
 * coordinator's current run.
 *
 * Idempotent submission. Job workflow ids derive from batch id + job id and are started with
 * REJECT_DUPLICATE + USE_EXISTING, session ids likewise with REJECT_DUPLICATE: re-running the same
 * submission starts only the job workflows that do not exist yet, and no job can run twice.
 *
 * Cap. The coordinator grants at most `concurrency` slots; a session exists only inside a granted
 * job workflow and is closed before its slot is released, so no more than `concurrency` sessions
 * of the batch ever run at once, whoever is or is not attached.
 *
 * History and carried state. Per job the coordinator records one signal received (`acquire`),
 * one signal sent (`grant`, 2 events), one received (`release`) and its share of workflow tasks:
 * about 5 events and no job content. It continues as new every `eventsPerRun` events (default
 * 2,000; Temporal's 4,096-event suggestion is honoured too). A workflow cannot continue as new
 * while signals keep arriving, so the submitter paces itself (src/client/batch.ts: it pauses while
 * the current run is past 2,500 events); a run therefore stays near 2,000–3,000 events and under
 * ~1.5 MB whatever the batch size (test/batch/scale.test.ts: 10,000 jobs with 64-character ids),
 * against limits of 51,200 events / 50 MiB. What it carries is counters plus the ids of waiting
 * and running jobs: at most ~67 bytes per job (a 64-character id, quotes, comma), i.e. ≤ 0.7 MiB
 * for 10,000 jobs all waiting (over the 512 KiB warning only with maximal ids), typically a few
 * hundred KiB — under the 2 MiB payload limit without holding any job's options or result.
 * Results stay in the job workflows (read by `durable-agent results`).
 *
 * Cancellation. Cancelling the coordinator cancels every job workflow it knows (waiting or
 * running); each cancels its session (which ends with an `aborted` result) and releases its slot.
 * The coordinator waits for those releases (bounded), then closes as cancelled; job workflows
 * submitted later find no coordinator and end as cancelled without starting a session.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  patched,
  setHandler,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WORKFLOW_TYPE } from '../../shared/api';
import { parseSessionConfig } from '../../shared/config';
import type { ResultMessage } from '../../shared/events';
import {
  acquireSignal,
  BatchSettings,
  grantSignal,
  jobStateQuery,
  jobWorkflowIdFor,
  pingSignal,
  progressQuery,
  releaseSignal,
  sessionIdFor,
  setConcurrencySignal,
  spendSignal,
  startConfig,
  startSearchAttributes,
  MAX_CONCURRENCY,
  type BatchCarried,
  type BatchInput,
  type BatchJobInput,
  type BatchProgress,
  type Grant,
  type JobOutcome,
  type JobRelease,
  type JobSpend,
  type JobState,
} from '../../shared/batch';
import { PATCHES } from '../../shared/compat';

/** Cancelling: how long to wait for cancelled jobs to hand their slots back. */
const CANCEL_GRACE = '10 minutes';
/** External cancel requests in flight at once (Temporal allows 2,000 pending per run). */
const CANCEL_CHUNK = 200;

export async function agentBatch(input: BatchInput): Promise<BatchProgress> {
  const settings = BatchSettings.parse({
    batchId: input.batchId,
    concurrency: input.concurrency,
    total: input.total,
    eventsPerRun: input.eventsPerRun,
    maxBudgetUsd: input.maxBudgetUsd,
    livenessCheckMs: input.livenessCheckMs,
  });
  // Budget and the liveness check of granted jobs (ARCHITECTURE.md#batch-budget) add commands.
  const budget = settings.maxBudgetUsd !== undefined && patched(PATCHES.batchBudget.id) ? settings.maxBudgetUsd : undefined;
  const liveness = patched(PATCHES.batchLiveness.id);
  // A run grants no more jobs than its history has room for (each grant is a signal out and its
  // outcome, 2 events): at concurrency 500 one iteration's grants alone could double a run.
  const grantsFitRun = patched(PATCHES.batchGrantsFitRun.id);
  const s: BatchCarried = input.carried ?? {
    schemaVersion: 1,
    concurrency: settings.concurrency,
    waiting: [],
    running: [],
    registered: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    costUsd: 0,
    turns: 0,
    runs: 0,
    skipped: 0,
  };
  s.runs++;
  s.skipped ??= 0;
  const waiting = new Set(s.waiting);
  const running = new Set(s.running);
  /** What running jobs' sessions report having spent so far (`spend` signals); dropped at release. */
  const spending = new Map(Object.entries(s.spending ?? {}));
  const runningCost = () => [...spending.values()].reduce((a, b) => a + b, 0);
  /** A job left the running set: its reported spend is replaced by its final cost (or nothing). */
  const leave = (jobId: string) => spending.delete(jobId);
  let cancelling = false;

  const finished = () =>
    s.completed + s.failed + s.cancelled + (s.skipped ?? 0) >= settings.total && waiting.size === 0 && running.size === 0;
  const progress = (): BatchProgress => ({
    batchId: settings.batchId,
    concurrency: s.concurrency,
    total: settings.total,
    registered: s.registered,
    waiting: waiting.size,
    running: [...running],
    completed: s.completed,
    failed: s.failed,
    cancelled: s.cancelled,
    skipped: s.skipped ?? 0,
    ...(budget !== undefined ? { maxBudgetUsd: budget } : {}),
    costUsd: s.costUsd,
    runningCostUsd: runningCost(),
    turns: s.turns,
    run: s.runs,
    done: finished(),
  });

  setHandler(acquireSignal, ({ jobId }) => {
    if (typeof jobId !== 'string' || waiting.has(jobId) || running.has(jobId)) return;
    waiting.add(jobId);
    s.registered++;
  });
  setHandler(releaseSignal, (r: JobRelease) => {
    leave(r.jobId);
    if (!running.delete(r.jobId) && !waiting.delete(r.jobId)) return;
    count(s, r.status, r.costUsd, r.turns);
  });
  // Totals, not increments: a late or repeated report never lowers what is known (ARCHITECTURE.md#batch-budget).
  setHandler(spendSignal, ({ jobId, costUsd }: JobSpend) => {
    if (!running.has(jobId) || typeof costUsd !== 'number' || !Number.isFinite(costUsd) || costUsd <= (spending.get(jobId) ?? 0)) return;
    spending.set(jobId, costUsd);
  });
  setHandler(progressQuery, progress);
  setHandler(setConcurrencySignal, (n) => {
    if (Number.isInteger(n) && n >= 1 && n <= MAX_CONCURRENCY) s.concurrency = n;
  });

  // The batch's spend: finished jobs' final costs plus what running jobs have reported so far.
  const spent = () => budget !== undefined && s.costUsd + runningCost() >= budget;
  const canGrant = () => !cancelling && waiting.size > 0 && (spent() || running.size < s.concurrency);
  /** When granted jobs were last checked for having been closed by hand. */
  let checkedAt = Date.now();
  const checkDue = () => liveness && running.size > 0 && Date.now() - checkedAt >= settings.livenessCheckMs;
  const historyFull = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= settings.eventsPerRun;

  try {
    for (;;) {
      const wake = () => finished() || canGrant() || historyFull();
      if (liveness && running.size > 0) await condition(wake, Math.max(1_000, checkedAt + settings.livenessCheckMs - Date.now()));
      else await condition(wake);
      if (finished()) return progress();
      const grants: Promise<void>[] = [];
      // Sets iterate in insertion order: oldest waiting job first.
      for (const jobId of waiting) {
        if (spent()) {
          // The budget is spent: no job that has not started ever will (`skipped_budget`).
          waiting.delete(jobId);
          running.add(jobId);
          grants.push(grant(settings.batchId, jobId, { skip: 'budget' }, () => running.delete(jobId) && count(s, 'skipped_budget', 0, 0)));
          continue;
        }
        if (running.size >= s.concurrency) break;
        if (grantsFitRun && grants.length > 0 && grants.length * 2 >= settings.eventsPerRun - workflowInfo().historyLength) break;
        waiting.delete(jobId);
        running.add(jobId);
        // With a budget, the job's cap is what is left of it (its own maxBudgetUsd still applies).
        const g: Grant | undefined = budget !== undefined ? { capUsd: Math.max(0, budget - s.costUsd - runningCost()) } : undefined;
        grants.push(
          grant(settings.batchId, jobId, g, () => {
            leave(jobId);
            if (running.delete(jobId)) count(s, 'failed', 0, 0);
          }),
        );
      }
      if (checkDue()) {
        // A job workflow terminated by hand never releases its slot: a signal to it fails, and that frees it.
        checkedAt = Date.now();
        for (const jobId of running) {
          grants.push(
            ping(settings.batchId, jobId, () => {
              leave(jobId);
              if (running.delete(jobId)) count(s, 'failed', 0, 0);
            }),
          );
        }
      }
      await Promise.all(grants);
      // Rest even with jobs waiting (signals may never stop coming): they are carried over.
      if (historyFull()) {
        await condition(allHandlersFinished);
        s.waiting = [...waiting];
        s.running = [...running];
        if (spending.size > 0) s.spending = Object.fromEntries(spending);
        else delete s.spending;
        await continueAsNew<typeof agentBatch>({ ...settings, carried: s });
      }
    }
  } catch (e) {
    if (!isCancellation(e)) throw e;
    cancelling = true;
    await CancellationScope.nonCancellable(() => cancelJobs(settings.batchId, waiting, running));
    throw e;
  }
}

function count(s: BatchCarried, status: JobRelease['status'], costUsd: number, turns: number): void {
  if (status === 'completed') s.completed++;
  else if (status === 'cancelled') s.cancelled++;
  else if (status === 'skipped_budget') s.skipped = (s.skipped ?? 0) + 1;
  else s.failed++;
  s.costUsd += typeof costUsd === 'number' ? costUsd : 0;
  s.turns += typeof turns === 'number' ? turns : 0;
}

/** Tell a job workflow it may start; if it is gone (terminated by hand), free its slot. */
async function grant(batchId: string, jobId: string, g: Grant | undefined, onGone: () => unknown): Promise<void> {
  try {
    const handle = getExternalWorkflowHandle(jobWorkflowIdFor(batchId, jobId));
    await (g ? handle.signal(grantSignal, g) : handle.signal(grantSignal));
  } catch (e) {
    if (isCancellation(e)) throw e;
    onGone();
  }
}

/** Signal a granted job; if it is closed without having released its slot, free the slot. */
async function ping(batchId: string, jobId: string, onGone: () => void): Promise<void> {
  try {
    await getExternalWorkflowHandle(jobWorkflowIdFor(batchId, jobId)).signal(pingSignal);
  } catch (e) {
    if (isCancellation(e)) throw e;
    onGone();
  }
}

/** Cancel every known job workflow, including ones that register while we wait, then wait for their releases. */
async function cancelJobs(batchId: string, waiting: Set<string>, running: Set<string>): Promise<void> {
  const asked = new Set<string>();
  const pending = () => [...waiting, ...running].filter((id) => !asked.has(id));
  const deadline = Date.now() + 10 * 60_000;
  while ((waiting.size > 0 || running.size > 0) && Date.now() < deadline) {
    const ids = pending();
    for (let i = 0; i < ids.length; i += CANCEL_CHUNK) {
      await Promise.all(
        ids.slice(i, i + CANCEL_CHUNK).map(async (id) => {
          asked.add(id);
          await getExternalWorkflowHandle(jobWorkflowIdFor(batchId, id))
            .cancel()
            .catch(() => {
              // Already closed: its release is on the way or it will never come.
              waiting.delete(id);
              running.delete(id);
            });
        }),
      );
    }
    await condition(() => (waiting.size === 0 && running.size === 0) || pending().length > 0, CANCEL_GRACE);
  }
}

/** One job: wait for a slot, run the session as a child, hand the slot back, return the outcome. */
export async function agentBatchJob(input: BatchJobInput): Promise<JobOutcome> {
  const { batchId, jobId, index } = input;
  const sessionId = sessionIdFor(batchId, jobId);
  let state: JobState = 'waiting';
  let granted = false;
  let grantArgs: Grant | undefined;
  setHandler(grantSignal, (g?: Grant) => {
    granted = true;
    grantArgs = g;
  });
  setHandler(pingSignal, () => undefined);
  setHandler(jobStateQuery, () => ({ state, sessionId }));
  const batch = getExternalWorkflowHandle(batchId);
  const base = { id: jobId, index, sessionId, turns: 0, costUsd: 0 };

  try {
    await batch.signal(acquireSignal, { jobId });
  } catch (e) {
    state = 'done';
    const why = isCancellation(e) ? 'the job was cancelled' : `batch ${batchId} is not running`;
    return { ...base, status: 'cancelled', error: why };
  }

  let outcome: JobOutcome;
  try {
    await condition(() => granted);
    if (grantArgs?.skip === 'budget') {
      state = 'done';
      const skipped: JobOutcome = {
        ...base,
        status: 'skipped_budget',
        error: 'not started: the batch budget was spent',
        ...(input.options.verify !== undefined ? { verdict: null } : {}),
      };
      const release: JobRelease = { jobId, status: 'skipped_budget', costUsd: 0, turns: 0 };
      await CancellationScope.nonCancellable(() => batch.signal(releaseSignal, release)).catch(() => undefined);
      return skipped;
    }
    state = 'running';
    // The batch budget left when the slot was granted caps the session; its own cap still applies.
    const cap = grantArgs?.capUsd;
    const own = input.options.maxBudgetUsd;
    const maxBudgetUsd = typeof cap === 'number' ? (typeof own === 'number' ? Math.min(own, cap) : cap) : own;
    const config = parseSessionConfig({
      ...input.options,
      ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
      sessionId,
      batchId,
      startedAt: new Date().toISOString(),
    });
    const result = (await executeChild(WORKFLOW_TYPE, {
      workflowId: sessionId,
      taskQueue: workflowInfo().taskQueue,
      // A child's input is not compared on replay: jobs started before this field existed replay as they were.
      args: [startConfig(config)],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      // If this job workflow is terminated, its session is asked to stop (it ends `aborted`).
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      typedSearchAttributes: startSearchAttributes(config),
    })) as ResultMessage;
    outcome = {
      ...base,
      status: result.subtype === 'success' ? 'completed' : result.exit_reason === 'aborted' ? 'cancelled' : 'failed',
      subtype: result.subtype,
      ...(result.result !== undefined ? { result: result.result } : {}),
      ...(result.errors?.length ? { error: result.errors.join('; ') } : {}),
      turns: result.num_turns,
      costUsd: result.total_cost_usd,
      ...(result.verdict !== undefined ? { verdict: result.verdict } : {}),
      ...(result.verify ? { verify: result.verify } : {}),
      ...(result.workspace ? { workspace: result.workspace } : {}),
    };
  } catch (e) {
    const verdict = input.options.verify !== undefined ? { verdict: null } : {};
    outcome = isCancellation(e)
      ? { ...base, ...verdict, status: 'cancelled', error: 'the job was cancelled' }
      : { ...base, ...verdict, status: 'failed', error: describe(e) };
  }
  state = 'done';
  const release: JobRelease = { jobId, status: outcome.status, costUsd: outcome.costUsd, turns: outcome.turns };
  await CancellationScope.nonCancellable(() => batch.signal(releaseSignal, release)).catch(() => undefined);
  return outcome;
}

function describe(e: unknown): string {
  let msg = (e as Error)?.message ?? String(e);
  for (let c = (e as { cause?: unknown })?.cause; c; c = (c as { cause?: unknown }).cause) msg = `${msg}: ${(c as Error).message}`;
  return msg;
}
