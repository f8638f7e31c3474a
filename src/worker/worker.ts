/**
 * Wiring only: one process, three Temporal workers (DESIGN §1) sharing one connection —
 * workflows on `agent`, model calls on `agent-model`, tools on `agent-tools`.
 */
import { readFileSync } from 'node:fs';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { TASK_QUEUES, taskQueuesFor } from '../shared/api';
import { DEFAULT_PRICING, type PricingTable } from '../shared/pricing';
import { createModelActivities } from '../activities/model';
import { createSessionStoreActivities } from '../activities/transcript';
import { createToolActivities } from '../activities';
import { createToolRegistry, type ToolDefinition } from '../activities/tools';
import { codecFromEnv, encrypts, ENCRYPTING_FAILURE_CONVERTER_PATH } from '../client/codec';

export interface CreateWorkerOptions {
  /** An existing connection; otherwise one is opened to `address`. */
  connection?: NativeConnection;
  address?: string;
  namespace?: string;
  /** Tools registered in addition to the built-ins. */
  tools?: ToolDefinition[];
  /** Model endpoint; defaults to OPENAI_BASE_URL / OPENAI_API_KEY. Secrets stay on workers (D9). */
  model?: { baseURL?: string; apiKey?: string; streamIdleTimeoutMs?: number; heartbeatEveryMs?: number };
  /** JSON file overriding/extending the pricing table (DURABLE_AGENT_PRICING_FILE). */
  pricingFile?: string;
  /** A prebuilt workflow bundle (tests build it once); otherwise the workflows are bundled here. */
  workflowBundle?: { code: string } | { codePath: string };
  /** Which of the three workers to run (default all). Tools run where the workspace is (D8). */
  roles?: ('workflow' | 'model' | 'tools')[];
  /** The workflow queue (default `agent`); the model and tools queues are named after it. */
  taskQueue?: string;
  /** Poll tools on this queue instead (e.g. `agent-tools@host`, DESIGN D8). */
  toolsTaskQueue?: string;
  /** Global cap on model calls per second across all workers of the model queue. */
  maxModelCallsPerSecond?: number;
  identity?: string;
  log?: (line: string) => void;
  /** Temporal worker tuning per role (concurrency slots, workflow cache), passed through as is;
   *  the SDK defaults (100 activities, 40 workflow tasks) cap a worker far below 1,000 sessions. */
  tuning?: { workflow?: WorkflowWorkerTuning; model?: ActivityWorkerTuning; tools?: ActivityWorkerTuning };
  /** Payload codecs (encryption, compression; DESIGN D9); default from DURABLE_AGENT_ENCRYPTION_KEYS /
   *  DURABLE_AGENT_COMPRESS (src/client/codec.ts); `[]` turns them off. Clients need the same. */
  payloadCodecs?: PayloadCodec[];
}

export type WorkflowWorkerTuning = Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentWorkflowTaskPolls'
  | 'workflowThreadPoolSize'
  | 'stickyQueueScheduleToStartTimeout'
>;
export type ActivityWorkerTuning = Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentActivityTaskPolls'>;

export interface AgentWorker {
  /** Runs until shutdown() or a fatal error. */
  run(): Promise<void>;
  shutdown(): void;
  readonly connection: NativeConnection;
}

export function loadPricing(file: string | undefined): PricingTable {
  if (!file) return DEFAULT_PRICING;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`pricing file ${file}: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object') throw new Error(`pricing file ${file}: expected an object of model → prices`);
  const table: PricingTable = { ...DEFAULT_PRICING };
  for (const [model, v] of Object.entries(parsed as Record<string, Record<string, unknown>>)) {
    for (const field of ['input', 'output'] as const) {
      if (typeof v?.[field] !== 'number') throw new Error(`pricing file ${file}: ${model}.${field}: expected a number (USD per million tokens)`);
    }
    table[model] = {
      input: v.input as number,
      output: v.output as number,
      cacheRead: typeof v.cacheRead === 'number' ? v.cacheRead : (v.input as number),
      cacheWrite: typeof v.cacheWrite === 'number' ? v.cacheWrite : (v.input as number),
      contextWindow: typeof v.contextWindow === 'number' ? v.contextWindow : 128_000,
    };
  }
  return table;
}

/** Connect, retrying with backoff while the server is unreachable (not a crash loop). */
export async function connectWithRetry(address: string, log: (line: string) => void, signal?: AbortSignal): Promise<NativeConnection> {
  let delay = 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await NativeConnection.connect({ address });
    } catch (e) {
      if (signal?.aborted) throw e;
      log(`cannot reach the Temporal server at ${address} (${(e as Error).message.split('\n')[0]}); retrying in ${delay / 1000}s`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

/**
 * The workers' data converters. Each Worker hands its own `dataConverter` to the client it gives
 * activities (`Context.current().client`, used by the `prompt` and `transcript` queries), so that
 * client decodes with the same codecs (checked in @temporalio/worker 1.24's `Worker.client`).
 * With encryption on, activity failures' messages and stacks are encrypted too (they can quote a
 * provider's error about the prompt); the workflow worker keeps the default failure converter,
 * because a `failureConverterPath` would be bundled into the workflow sandbox.
 */
function workerDataConverters(codecs: PayloadCodec[] | undefined): { workflow?: DataConverter; activity?: DataConverter } {
  if (!codecs || codecs.length === 0) return {};
  return {
    workflow: { payloadCodecs: codecs },
    activity: { payloadCodecs: codecs, ...(encrypts(codecs) ? { failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH } : {}) },
  };
}

export async function createWorker(opts: CreateWorkerOptions = {}): Promise<AgentWorker> {
  const log = opts.log ?? ((l: string) => console.error(l));
  // Before connecting: a malformed key fails start-up, not the first payload.
  const dataConverters = workerDataConverters(opts.payloadCodecs ?? codecFromEnv());
  const address = opts.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const namespace = opts.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const connection = opts.connection ?? (await connectWithRetry(address, log));
  const roles = new Set(opts.roles ?? ['workflow', 'model', 'tools']);
  const common: Partial<WorkerOptions> = { connection, namespace, ...(opts.identity ? { identity: opts.identity } : {}) };
  const workers: Worker[] = [];
  const queues = taskQueuesFor(
    opts.taskQueue ?? process.env.DURABLE_AGENT_TASK_QUEUE ?? TASK_QUEUES.workflow,
    opts.toolsTaskQueue ?? process.env.DURABLE_AGENT_TOOLS_TASK_QUEUE,
  );

  if (roles.has('workflow')) {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: queues.workflow,
        dataConverter: dataConverters.workflow,
        ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
        // When a worker dies holding sessions, their next workflow task (and the retried model
        // call's prompt query) waits on its sticky queue until this expires: keep it short so
        // recovery is bounded by the heartbeat timeout, not by the sticky wait (default 10 s).
        stickyQueueScheduleToStartTimeout: '3s',
        ...opts.tuning?.workflow,
      }),
    );
  }
  if (roles.has('model')) {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: queues.model,
        dataConverter: dataConverters.activity,
        activities: {
          ...createSessionStoreActivities(),
          ...createModelActivities({
          baseURL: opts.model?.baseURL ?? process.env.OPENAI_BASE_URL,
          apiKey: opts.model?.apiKey ?? process.env.OPENAI_API_KEY,
          pricing: loadPricing(opts.pricingFile ?? process.env.DURABLE_AGENT_PRICING_FILE),
          streamIdleTimeoutMs: opts.model?.streamIdleTimeoutMs,
          heartbeatEveryMs: opts.model?.heartbeatEveryMs,
          }),
        },
        ...(opts.maxModelCallsPerSecond ? { maxTaskQueueActivitiesPerSecond: opts.maxModelCallsPerSecond } : {}),
        ...opts.tuning?.model,
      }),
    );
  }
  if (roles.has('tools')) {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: queues.tools,
        dataConverter: dataConverters.activity,
        activities: createToolActivities(createToolRegistry(opts.tools ?? [])),
        ...opts.tuning?.tools,
      }),
    );
  }

  return {
    connection,
    run: async () => {
      await Promise.all(workers.map((w) => w.run()));
    },
    shutdown: () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
