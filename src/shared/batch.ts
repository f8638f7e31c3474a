/**
 * Batches: the shapes shared by the batch workflows (src/workflows/batch/batch.ts) and the client that
 * submits jobs (src/client/batch.ts). See the doc comment of src/workflows/batch/batch.ts for why a batch
 * is one coordinator workflow plus one small "job" workflow per job.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { SEARCH_ATTRIBUTE_KEYS } from './api';
import { checkPromptSize, parseSessionConfig, START_FLAGS, type SessionConfig, type SessionOptions } from './config';
import { screenSessionEnv } from './secret-env';
import { refuseMcpSecrets } from './mcp';
import type { Verdict, VerifyReport, WorkspaceReport } from './workspace';

export const BATCH_WORKFLOW_TYPE = 'agentBatch';
export const BATCH_JOB_WORKFLOW_TYPE = 'agentBatchJob';

/** Batch and job ids: short, and without `/`, which joins them into workflow ids. */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
export const ID_RULE = '1-64 characters: letters, digits, . _ : -';
export const MAX_CONCURRENCY = 500;
/** A job's options travel in its job workflow's input: stay far below the 2 MiB payload limit. */
export const MAX_JOB_BYTES = 512 * 1024;

/** Session id of a batch job: derived, so a job can never run twice (ids are unique). */
export const sessionIdFor = (batchId: string, jobId: string): string => `${batchId}/${jobId}`;
/** Workflow id of the job workflow that waits for a slot and then runs the session. */
export const jobWorkflowIdFor = (batchId: string, jobId: string): string => `${batchId}/${jobId}/job`;

/** Fields a job may not set: the batch derives them, or the starter sets them (the start flags). */
const RESERVED = ['sessionId', 'resume', 'forkSession', ...START_FLAGS] as const;

/** One validated job: its id, its 1-based position in the file, and the session options. */
export interface BatchJob {
  id: string;
  index: number;
  options: SessionOptions;
}

/** A job that does not validate: `field` is the offending option (`(root)` for the line itself). */
export class JobError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'JobError';
  }
}

/**
 * Validate one job (an object of session options plus an optional `id`) exactly as the session
 * will, so nothing starts unless every job would. `index` is the job's 1-based position; the
 * default id is `job-<index>`. Relative paths must already be resolved by the caller.
 */
export function parseJob(raw: unknown, opts: { index: number; batchId: string; platform: string }): BatchJob {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new JobError('expected an object of session options', '(root)');
  const { id: rawId, ...rest } = raw as Record<string, unknown>;
  if (rawId !== undefined && (typeof rawId !== 'string' || !ID_PATTERN.test(rawId))) {
    throw new JobError(`id: expected ${ID_RULE}, got ${JSON.stringify(rawId)}`, 'id');
  }
  const id = (rawId as string | undefined) ?? `job-${opts.index}`;
  for (const key of RESERVED) {
    if (key in rest) throw new JobError(`${key}: not allowed in a batch job (the batch sets it)`, key);
  }
  if ('clientHooks' in rest) {
    throw new JobError(
      'clientHooks: not allowed in a batch job: callback hooks are answered by the program that called query(), and a batch has none; use command hooks (hooks)',
      'clientHooks',
    );
  }
  if ('clientTools' in rest) {
    throw new JobError(
      'clientTools: not allowed in a batch job: the tools of in-process MCP servers are run by the program that called query(), and a batch has none; register the server on the worker (createWorker({ tools: [server] }))',
      'clientTools',
    );
  }
  // The one rule for a session's env (src/shared/secret-env.ts): dropped entries are named in the
  // job's envDropped (the session's start warning and the submitting CLI's stderr), never sent.
  const screened = screenSessionEnv(rest.env as Record<string, string | undefined> | undefined);
  const options = {
    platform: opts.platform,
    ...rest,
    ...(rest.env !== undefined ? { env: screened.env } : {}),
    ...(screened.dropped.length ? { envDropped: screened.dropped } : {}),
  } as SessionOptions;
  try {
    checkPromptSize(options.prompt);
    const config = parseSessionConfig({ ...options, sessionId: sessionIdFor(opts.batchId, id), batchId: opts.batchId });
    if (config.mcpServers) refuseMcpSecrets(config.mcpServers);
  } catch (e) {
    const field = (e as { field?: string }).field ?? '(root)';
    throw new JobError((e as Error).message.replace(/^invalid session config: /, ''), field);
  }
  if (JSON.stringify(options).length > MAX_JOB_BYTES) throw new JobError(`the job is larger than ${MAX_JOB_BYTES} bytes`, '(root)');
  return { id, index: opts.index, options };
}

// ---------------------------------------------------------------------------------------------
// The coordinator workflow (`agentBatch`, workflow id = batch id)

export const BatchSettings = sharedSchema('batch.BatchSettings', () =>
  z
    .object({
      batchId: z.string().regex(ID_PATTERN, ID_RULE),
      concurrency: z.number().int().min(1).max(MAX_CONCURRENCY),
      /** How many jobs the batch has; it completes once that many have finished. */
      total: z.number().int().min(1),
      /** Continue-as-new once a run's history has this many events (also when Temporal suggests it). */
      eventsPerRun: z.number().int().min(100).default(2_000),
      /** The batch's spending cap (ARCHITECTURE.md#batch-budget): no slot is granted once the spend reaches it. */
      maxBudgetUsd: z.number().positive().optional(),
      /** How often granted jobs are checked for having been closed by hand (ms). */
      livenessCheckMs: z.number().int().min(1_000).default(60_000),
    })
    .strict(),
);
export type BatchSettings = z.infer<typeof BatchSettings>;

/** What one run hands to the next: ids only, never job options or results. */
export interface BatchCarried {
  schemaVersion: 1;
  concurrency: number;
  /** Jobs whose job workflow asked for a slot, oldest first. */
  waiting: string[];
  /** Jobs holding a slot (at most `concurrency`). */
  running: string[];
  registered: number;
  completed: number;
  failed: number;
  cancelled: number;
  costUsd: number;
  turns: number;
  runs: number;
  /** Jobs never started because the budget was reached (absent in runs before the budget existed). */
  skipped?: number;
  /** Spend reported so far by running jobs, by job id (absent in runs before running spend was reported). */
  spending?: Record<string, number>;
}

export interface BatchInput extends z.input<typeof BatchSettings> {
  carried?: BatchCarried;
}

/** Stored in the batch workflow's memo, so a re-submission can check it is the same batch. */
export interface BatchMemo {
  fingerprint: string;
  total: number;
}

export interface BatchProgress {
  batchId: string;
  concurrency: number;
  total: number;
  /** Job workflows that have asked for a slot so far (the rest are not submitted yet). */
  registered: number;
  waiting: number;
  running: string[];
  completed: number;
  failed: number;
  cancelled: number;
  /** Jobs never started because the batch budget was reached (`skipped_budget`). */
  skipped: number;
  /** The batch's budget, if it has one. */
  maxBudgetUsd?: number;
  /** Finished jobs' spend. */
  costUsd: number;
  /** Spend reported so far by the jobs still running (ARCHITECTURE.md#batch-budget); absent from older workers. */
  runningCostUsd?: number;
  turns: number;
  /** This run's number (1 for the first); grows with each continue-as-new. */
  run: number;
  done: boolean;
}

type JobStatus = 'completed' | 'failed' | 'cancelled' | 'skipped_budget';

/** Sent by a job workflow when its session has ended: small, no result text. */
export interface JobRelease {
  jobId: string;
  status: JobStatus;
  costUsd: number;
  turns: number;
}

export const acquireSignal = defineSignal<[{ jobId: string }]>('acquire');
export const releaseSignal = defineSignal<[JobRelease]>('release');
/**
 * Sent by a running batch job's session after model calls (throttled): its spend so far, so the
 * coordinator's budget counts running jobs too (ARCHITECTURE.md#batch-budget).
 */
export interface JobSpend {
  jobId: string;
  /** The session's total cost so far (not an increment: a repeated or late signal is harmless). */
  costUsd: number;
}
export const spendSignal = defineSignal<[JobSpend]>('spend');
export const progressQuery = defineQuery<BatchProgress>('progress');
/** Change the cap (a re-submission with another --concurrency); a signal, so no worker is needed to submit. */
export const setConcurrencySignal = defineSignal<[number]>('setConcurrency');

// ---------------------------------------------------------------------------------------------
// The job workflow (`agentBatchJob`, workflow id = jobWorkflowIdFor(batch, job))

export interface BatchJobInput {
  batchId: string;
  jobId: string;
  index: number;
  options: SessionOptions;
}

/** A job workflow's result: one line of `durable-agent results`. */
export interface JobOutcome {
  id: string;
  index: number;
  sessionId: string;
  status: JobStatus;
  subtype?: string;
  result?: string;
  turns: number;
  costUsd: number;
  error?: string;
  /** Jobs with `verify`: pass, fail or error; null when it did not run (setup failed, skipped). */
  verdict?: Verdict | null;
  verify?: VerifyReport;
  /** Jobs with a `workspace`: where, its base, what changed (ARCHITECTURE.md#workspaces). */
  workspace?: WorkspaceReport;
}

export type JobState = 'waiting' | 'running' | 'done';

/** A slot (with the budget left as the job's cap, when the batch has one), or `skip`: the budget is spent. */
export interface Grant {
  capUsd?: number;
  skip?: 'budget';
}
export const grantSignal = defineSignal<[Grant?]>('grant');
/** Sent by the coordinator to granted jobs now and then: a closed job makes the signal fail and frees its slot. */
export const pingSignal = defineSignal('ping');
export const jobStateQuery = defineQuery<{ state: JobState; sessionId: string }>('jobState');

// ---------------------------------------------------------------------------------------------
// Search attributes a session carries from its start (the workflow keeps them current)

const keys = SEARCH_ATTRIBUTE_KEYS;

/** Set at start, so `durable-agent ls` finds a session before its first upsert. None with
 *  `searchAttributes: false`: that is how sessions run on a server where ours are not registered. */
export function startSearchAttributes(config: Pick<SessionConfig, 'model' | 'batchId' | 'searchAttributes'>): SearchAttributePair[] {
  if (config.searchAttributes === false) return [];
  return [
    { key: keys.status, value: 'running' },
    { key: keys.model, value: config.model },
    { key: keys.turns, value: 0 },
    { key: keys.costUsd, value: 0 },
    ...(config.batchId ? [{ key: keys.batchId, value: config.batchId }] : []),
  ];
}

/**
 * The config a session is started with beside `startSearchAttributes(config)`: marked
 * `searchAttributesAtStart`, so its loop does not write them again after its first reply,
 * `setupAtOnce` and `setupInOneCall`, so it lists its tools and loads its settings in one step, one
 * activity, and `checkpoints` given, so it takes them without a patch marker.
 */
export function startConfig<C extends Pick<SessionConfig, 'searchAttributes' | 'checkpoints' | 'workspace'>>(config: C): C {
  return {
    ...config,
    setupAtOnce: true,
    setupInOneCall: true,
    // Said outright, so the session needs no patch marker to know whether it checkpoints (ARCHITECTURE.md#checkpoints).
    checkpoints: checkpointsOn(config),
    ...(config.searchAttributes ? { searchAttributesAtStart: true } : {}),
  };
}

/** Batch and job workflows carry only the batch id (so `AgentBatchId = X` finds all of a batch). */
export function batchSearchAttributes(batchId: string): SearchAttributePair[] {
  return [{ key: keys.batchId, value: batchId }];
}

/** Whether a session takes checkpoints: as asked, else when it has a workspace (ARCHITECTURE.md#checkpoints). */
export function checkpointsOn(config: Pick<SessionConfig, 'checkpoints' | 'workspace'>): boolean {
  return config.checkpoints ?? config.workspace !== undefined;
}
