/**
 * Wiring only: one process, Temporal workers sharing one connection (ARCHITECTURE.md#the-shape) —
 * workflows and model calls on `agent` (one worker when both roles are here), tools on
 * `agent-tools`, and model calls of sessions started by earlier versions on `agent-model`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { hostname } from 'node:os';
import type { DataConverter, Duration, PayloadCodec } from '@temporalio/common';
import { NativeConnection, Worker, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import { taskQueuesFor } from '../shared/api';
import { DEFAULT_PRICING, type PricingTable } from '../shared/pricing';
import { createModelActivities } from '../activities/model';
import { fleetSyncFor } from '../activities/model/fleet-limit';
import { limiterFor, type RateLimitCaps } from '../activities/model/rate-limit';
import { createSessionStoreActivities } from '../activities/transcript';
import { createInspectActivity } from '../activities/permissions';
import { createSetupActivities, createToolActivities } from '../activities';
import { createToolOps, createToolRegistry, type ToolDefinition, type ToolFs } from '../activities/tools';
import { createAttemptJournal } from '../activities/tools/attempts';
import { createSandbox, type SandboxOptions } from '../activities/sandbox';
import type { SandboxStatus } from '../shared/sandbox';
import { createHookActivities } from '../activities/hooks';
import { createWorkspaceActivities, hostQueueFor } from '../activities/workspace';
import { createMcpActivities, isSdkMcpServer, McpPool, sdkServerTools, type McpSdkServerConfigWithInstance } from '../activities/mcp';
import type { CodeHooks } from '../shared/hook-callbacks';
import { bundleEncryptsFailures, encrypts, ENCRYPTING_FAILURE_CONVERTER_PATH } from '../codec';
import { expectOneKindWorker } from './sdk-logger';
import { LiveHub } from '../activities/live/hub';
import { startLiveServer, type LiveServer, type LiveServerOptions } from '../activities/live/server';
import { PromptOffers, type PromptOfferStats } from '../activities/model/prompt-offers';
import { LIVE_IDENTITY_MARK } from '../shared/stream-events';
import type { PromptSinks } from '../shared/prompt-offer';
import { activityTracing, startTracing, telemetryFor, workflowTracing, type TelemetryOptions } from './telemetry';
import { bundleHasFastWorkflowStacks, FAST_WORKFLOW_STACKS_ENV, sessionBundlerOptions, WORKFLOWS_PATH } from './bundle';
import { versioningOptions, type WorkerDeployment } from './deployment';
import { workerSettingsFromEnv, type WorkerSettings } from './settings';

export interface CreateWorkerOptions {
  /** The worker's settings (src/worker/settings.ts); default `workerSettingsFromEnv()`, read once here.
   *  The options below override them. */
  settings?: WorkerSettings;
  /** An existing connection; otherwise one is opened to `address`. */
  connection?: NativeConnection;
  /**
   * Worker Versioning (ARCHITECTURE.md#deploys): this worker is build `buildId` of worker
   * deployment `name`. Sessions start pinned to the deployment's current build and move to the
   * current one at continue-as-new. Default: DURABLE_AGENT_DEPLOYMENT and DURABLE_AGENT_BUILD_ID;
   * without them the worker is unversioned, as before.
   */
  deployment?: WorkerDeployment;
  address?: string;
  namespace?: string;
  /** Tools registered in addition to the built-ins, and in-process MCP servers made with
   *  `createSdkMcpServer` (their tools are named `mcp__<server>__<tool>`; ARCHITECTURE.md#mcp). */
  tools?: (ToolDefinition | McpSdkServerConfigWithInstance)[];
  /** Code hooks, typed like the Claude Agent SDK's `hooks` option; they run on this worker's tools role.
   *  An unknown event or a matcher that is not a regex fails start-up. */
  hooks?: CodeHooks;
  /** Model endpoint; defaults to OPENAI_BASE_URL / OPENAI_API_KEY. Secrets stay on workers (ARCHITECTURE.md#secrets-stay-on-workers). */
  model?: { baseURL?: string; apiKey?: string; streamIdleTimeoutMs?: number; heartbeatEveryMs?: number };
  /** JSON file overriding/extending the pricing table (DURABLE_AGENT_PRICING_FILE). */
  pricingFile?: string;
  /** A prebuilt workflow bundle (tests build it once); otherwise the workflows are bundled here. */
  workflowBundle?: { code: string } | { codePath: string };
  /**
   * Trade Temporal's stack-trace query (the UI's *Stack Trace* tab, `temporal workflow stack`) and
   * source-mapped workflow errors for CPU: the SDK records no stack per promise (ARCHITECTURE.md#workflow-stack-traces).
   * Default DURABLE_AGENT_FAST_WORKFLOW_STACKS, else false (the SDK's behaviour). A prebuilt
   * `workflowBundle` must have been built with the same setting (`bundleSessionWorkflows({ fastWorkflowStacks })`).
   */
  fastWorkflowStacks?: boolean;
  /** Which of the three workers to run (default all). Tools run where the workspace is (ARCHITECTURE.md#tools-pinned-to-their-host). */
  roles?: ('workflow' | 'model' | 'tools')[];
  /** The workflow queue (default `agent`); the model and tools queues are named after it. */
  taskQueue?: string;
  /** Poll tools on this queue instead (e.g. `agent-tools@host`, ARCHITECTURE.md#tools-pinned-to-their-host). */
  toolsTaskQueue?: string;
  /** Caps per model endpoint on this worker (ARCHITECTURE.md#rate-limits); default from DURABLE_AGENT_MODEL_MAX_CONCURRENT /
   *  _RPM / _TPM. `false` (or DURABLE_AGENT_MODEL_RATE_LIMIT=0) turns rate limiting off entirely, headers included. */
  rateLimits?: RateLimitCaps | false;
  /** Global cap on model calls per second across all workers of the model queue. */
  maxModelCallsPerSecond?: number;
  identity?: string;
  /** How long a shutdown waits for in-flight activities before cancelling them (the SDK's
   *  default, 0, cancels them at once: a running Bash command would end "aborted"). */
  shutdownGraceMs?: number;
  log?: (line: string) => void;
  /** Tracing (ARCHITECTURE.md#observability): default from the OTEL_* variables (off unless set); false = off. */
  telemetry?: TelemetryOptions | false;
  /** Temporal worker tuning per role (concurrency slots, workflow cache), passed through as is;
   *  the SDK defaults (100 activities, 40 workflow tasks) cap a worker far below 1,000 sessions. */
  tuning?: { workflow?: WorkflowWorkerTuning; model?: ActivityWorkerTuning; tools?: ActivityWorkerTuning };
  /** Payload codecs (encryption, compression; ARCHITECTURE.md#payload-codec); default from
   *  DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_COMPRESS (src/codec/); `[]` turns them off.
   *  Clients need the same. */
  payloadCodecs?: PayloadCodec[];
  /** The Bash sandbox (docs/ARCHITECTURE.md#bash-sandbox), over DURABLE_AGENT_BWRAP / DURABLE_AGENT_SANDBOX /
   *  DURABLE_AGENT_SANDBOX_DENY_READ: e.g. `{bwrapPath: null}` for none, `{defaults: parseSandboxOption('required')}`. */
  sandbox?: SandboxOptions;
  /** The filesystem the built-in tools use (the ops seam, src/activities/tools/ops.ts): e.g. a
   *  remote host's; default `node:fs`. */
  toolFs?: ToolFs;
  /** The workspaces root on this tools host (ARCHITECTURE.md#workspaces); default DURABLE_AGENT_WORKSPACES,
   *  else `${XDG_CACHE_HOME:-~/.cache}/durable-agent/workspaces`. */
  workspacesRoot?: string;
  /** Where the model worker serves live tokens (ARCHITECTURE.md#live-tokens); default from
   *  DURABLE_AGENT_LIVE_LISTEN / DURABLE_AGENT_LIVE_URL (loopback, a free port); false: not at all. */
  live?: LiveServerOptions | false;
}

/** Our default for the SDK's per-activation watchdog (its own is 5 s; ARCHITECTURE.md#workflow-thread-crash). */
export const WORKFLOW_ACTIVATION_TIMEOUT = '60s';

type WorkflowWorkerTuning = Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentWorkflowTaskPolls'
  | 'workflowThreadPoolSize'
  | 'stickyQueueScheduleToStartTimeout'
  | 'reuseV8Context'
> & {
  /** The SDK's per-activation watchdog (wall time; not in its typed options, read from them all the same). */
  isolateExecutionTimeout?: Duration;
};
type ActivityWorkerTuning = Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentActivityTaskPolls'>;

export interface AgentWorker {
  /** Runs until shutdown() or a fatal error. */
  run(): Promise<void>;
  shutdown(): void;
  readonly connection: NativeConnection;
  /** Whether this worker's Bash runs sandboxed (probed once); undefined without the tools role. */
  sandboxStatus(): Promise<SandboxStatus | undefined>;
  /** The live server's base URL, when this worker runs model calls and serves their tokens. */
  readonly liveUrl?: string;
  /** Prompts handed from this process's workflows to its model calls (ARCHITECTURE.md#prompt-offer); only with both roles. */
  readonly promptOffers?: PromptOfferStats;
}

function loadPricing(file: string | undefined): PricingTable {
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
      if (typeof v?.[field] !== 'number')
        throw new Error(`pricing file ${file}: ${model}.${field}: expected a number (USD per million tokens)`);
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
 * With encryption on, failures' messages and stacks are encrypted too (they can quote a provider's
 * error about the prompt, or a bad option's name): activity workers load the failure converter,
 * and the workflow bundle includes it (`workflowsPath` bundles it from this path; a prebuilt bundle
 * must have been built with it, see `checkBundleEncryptsFailures`).
 */
function workerDataConverters(codecs: PayloadCodec[] | undefined): { workflow?: DataConverter; activity?: DataConverter } {
  if (!codecs || codecs.length === 0) return {};
  const failures = encrypts(codecs) ? { failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH } : {};
  return { workflow: { payloadCodecs: codecs, ...failures }, activity: { payloadCodecs: codecs, ...failures } };
}

function bundleCode(bundle: NonNullable<CreateWorkerOptions['workflowBundle']>): string {
  return 'code' in bundle ? bundle.code : readFileSync(bundle.codePath, 'utf8');
}

/**
 * A prebuilt bundle built with the other `fastWorkflowStacks` than this worker's: refused at
 * start-up, so a worker never runs with stack traces other than it was configured for.
 */
function checkBundleWorkflowStacks(code: string, fast: boolean): void {
  const built = bundleHasFastWorkflowStacks(code);
  if (built === fast) return;
  throw new Error(
    `the workflow bundle was built with fastWorkflowStacks ${built ? 'on' : 'off'} but this worker has it ${fast ? 'on' : 'off'} ` +
      `(option fastWorkflowStacks, env ${FAST_WORKFLOW_STACKS_ENV}): build it with bundleSessionWorkflows({ fastWorkflowStacks: ${fast} }), ` +
      `or set ${FAST_WORKFLOW_STACKS_ENV}=${built ? 1 : 0} (ARCHITECTURE.md#workflow-stack-traces)`,
  );
}

/** Encrypted payloads with a bundle that would store workflow failures in the clear: refused at start-up. */
function checkBundleEncryptsFailures(code: string): void {
  if (bundleEncryptsFailures(code)) return;
  throw new Error(
    'payloads are encrypted but the workflow bundle was built without the encrypting failure converter, so failures ' +
      'raised by workflows would be stored in plaintext: build it with bundleSessionWorkflows({ ' +
      'failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH }) (both exported by durable-agent), or leave the bundle out',
  );
}

export async function createWorker(opts: CreateWorkerOptions = {}): Promise<AgentWorker> {
  const log = opts.log ?? ((l: string) => console.error(l));
  // Before connecting: every setting is read and checked once (half a deployment, a malformed key,
  // a bad DURABLE_AGENT_LIVE_LISTEN… fail start-up, not the first call that would use them).
  const settings = opts.settings ?? workerSettingsFromEnv();
  const versioned = versioningOptions(opts.deployment ?? settings.deployment);
  const dataConverters = workerDataConverters(opts.payloadCodecs ?? settings.payloadCodecs);
  const address = opts.address ?? settings.address;
  const namespace = opts.namespace ?? settings.namespace;
  const roles = new Set(opts.roles ?? ['workflow', 'model', 'tools']);
  // Before connecting: a prebuilt bundle built with the other DURABLE_AGENT_FAST_WORKFLOW_STACKS fails start-up.
  const fastWorkflowStacks = opts.fastWorkflowStacks ?? settings.fastWorkflowStacks;
  if (roles.has('workflow') && opts.workflowBundle) {
    const code = bundleCode(opts.workflowBundle);
    checkBundleWorkflowStacks(code, fastWorkflowStacks);
    if (dataConverters.workflow?.failureConverterPath) checkBundleEncryptsFailures(code);
  }
  const connection = opts.connection ?? (await connectWithRetry(address, log));
  const common: Partial<WorkerOptions> = {
    connection,
    namespace,
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.shutdownGraceMs !== undefined ? { shutdownGraceTime: opts.shutdownGraceMs } : {}),
  };
  const workers: Worker[] = [];
  const queues = taskQueuesFor(opts.taskQueue ?? settings.taskQueue, opts.toolsTaskQueue ?? settings.toolsTaskQueue);

  const liveOptions = !roles.has('model') ? undefined : opts.live === undefined ? settings.live : opts.live || undefined;
  // Both roles here: model calls take the prompt their workflow offers instead of querying for it
  // (ARCHITECTURE.md#prompt-offer). The sink exists either way, so workflows never call a missing one.
  const promptOffers = roles.has('workflow') && roles.has('model') ? new PromptOffers() : undefined;
  const sinks: InjectedSinks<PromptSinks> = { prompts: { offer: { fn: (_info, offer) => promptOffers?.offer(offer) } } };
  const telemetry = opts.telemetry === undefined ? telemetryFor(settings.tracesExporter) : opts.telemetry || undefined;
  const tracing = telemetry ? startTracing(telemetry, settings.otelServiceName) : undefined;
  const traced = tracing ? workflowTracing(tracing) : undefined;
  if (traced && opts.workflowBundle && roles.has('workflow')) {
    log(
      'tracing: the prebuilt workflow bundle has no OpenTelemetry interceptors; workflow spans are left out (activity spans are recorded)',
    );
  }
  const activityInterceptors = tracing ? { interceptors: { activity: activityTracing(tracing) } } : {};
  let sandboxStatus: () => Promise<SandboxStatus | undefined> = async () => undefined;
  // MCP server connections of this worker (ARCHITECTURE.md#mcp), closed when it stops.
  const mcpPool = new McpPool();
  const hub = new LiveHub();
  // Before the workers: the model role's identity names where its live streams are (ARCHITECTURE.md#live-tokens).
  const live: LiveServer | undefined = liveOptions ? await startLiveServer(hub, liveOptions) : undefined;
  try {
    /** The model role: model calls and transcript reads, on the workflow's own queue (and the former one). */
    const modelRole = (): Partial<WorkerOptions> => {
      const baseURL = opts.model?.baseURL ?? settings.model.baseURL;
      const apiKey = opts.model?.apiKey ?? settings.model.apiKey;
      const limiter =
        opts.rateLimits === false || !settings.rateLimiting
          ? undefined
          : limiterFor(baseURL, apiKey, { ...settings.rateLimitCaps, ...opts.rateLimits });
      const streams = hub.streamsUrl;
      return {
        ...(streams ? { identity: `${opts.identity ?? `${process.pid}@${hostname()}`}${LIVE_IDENTITY_MARK}${streams}` } : {}),
        activities: {
          ...createSessionStoreActivities(),
          ...createModelActivities({
            baseURL,
            apiKey,
            organization: settings.model.organization,
            project: settings.model.project,
            ...(limiter ? { limiter, fleet: fleetSyncFor(queues.workflow, limiter) } : {}),
            pricing: loadPricing(opts.pricingFile ?? settings.pricingFile),
            streamIdleTimeoutMs: opts.model?.streamIdleTimeoutMs,
            heartbeatEveryMs: opts.model?.heartbeatEveryMs,
            live: hub,
            promptOffers,
          }),
        },
        ...(opts.maxModelCallsPerSecond ? { maxTaskQueueActivitiesPerSecond: opts.maxModelCallsPerSecond } : {}),
        ...opts.tuning?.model,
      };
    };
    const model = roles.has('model') ? modelRole() : undefined;
    if (roles.has('workflow')) {
      // With the model role here too, one worker runs both on the queue: the server hands it each
      // model call with the completion of the workflow task that scheduled it (eager dispatch,
      // ARCHITECTURE.md#model-calls-on-the-workflow-queue).
      if (!model) expectOneKindWorker(queues.workflow, 'workflows');
      const workflowInterceptors = traced && !opts.workflowBundle ? { workflowModules: traced.workflowModules } : undefined;
      const modelInterceptors = model ? activityInterceptors.interceptors : undefined;
      workers.push(
        await Worker.create({
          ...common,
          ...model,
          // The Bash parse for the permission decision is a local activity of the workflow worker
          // (ARCHITECTURE.md#bash-rules-on-a-real-parse); without the model role it polls for no other activity.
          activities: { ...(model?.activities ?? {}), ...createInspectActivity({ bashOnly: true }) },
          ...(model ? {} : { enableNonLocalActivities: false }),
          taskQueue: queues.workflow,
          dataConverter: dataConverters.workflow,
          ...versioned,
          ...(opts.workflowBundle
            ? { workflowBundle: opts.workflowBundle }
            : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: sessionBundlerOptions({ fastWorkflowStacks }) }),
          // How long the server keeps a session's task for this worker before it goes to the shared
          // queue and is replayed elsewhere. Short, it costs a busy worker its cache (at 1 s, a
          // saturated worker lost about one task in five to it, each then replayed from the whole history);
          // after a crash the retried call clears the dead worker's stickiness instead
          // (src/activities/sticky.ts), so recovery does not wait for this (ARCHITECTURE.md#recovery).
          stickyQueueScheduleToStartTimeout: '10s',
          // The SDK's watchdog on each call into a workflow thread's V8 context. It counts wall time, so
          // on a CPU-starved machine a call of a few milliseconds of work can outlive the SDK's 5 s; and
          // when it fires inside a promise callback, Node's async-hook stack is left corrupted and the
          // whole process exits (temporalio/sdk-typescript#939). A minute keeps a bound on a workflow
          // that never yields without mistaking a starved machine for one (ARCHITECTURE.md#workflow-thread-crash).
          isolateExecutionTimeout: WORKFLOW_ACTIVATION_TIMEOUT,
          sinks: { ...sinks, ...(traced?.sinks ?? {}) },
          ...(workflowInterceptors || modelInterceptors ? { interceptors: { ...workflowInterceptors, ...modelInterceptors } } : {}),
          ...opts.tuning?.workflow,
        }),
      );
    }
    if (model) {
      const activityWorker = (taskQueue: string, extra: Partial<WorkerOptions> = {}) =>
        Worker.create({ ...common, ...model, taskQueue, dataConverter: dataConverters.activity, ...activityInterceptors, ...extra });
      if (!roles.has('workflow')) {
        expectOneKindWorker(queues.model, 'activities');
        // The workflow's own queue: a pinned session's model calls go to workers of its build.
        workers.push(await activityWorker(queues.model, versioned));
      }
      // Sessions started by earlier versions schedule their model calls on `<queue>-model`; a
      // running one keeps doing so until it continues as new. One poller serves them.
      expectOneKindWorker(queues.formerModel, 'activities');
      workers.push(await activityWorker(queues.formerModel, { maxConcurrentActivityTaskPolls: 1 }));
    }
    if (roles.has('tools')) {
      const extraTools = (opts.tools ?? []).flatMap((t) => (isSdkMcpServer(t) ? sdkServerTools(t) : [t]));
      const workspaces = opts.workspacesRoot ?? settings.workspacesRoot;
      const ops = createToolOps({
        ...(opts.toolFs ? { fs: opts.toolFs } : {}),
        scrubEnvNames: settings.scrubEnv,
        attempts: createAttemptJournal(settings.attemptsDir),
        // The mirrors and the checkpoint repository stay read-only in every sandbox, even under a
        // writable directory (ARCHITECTURE.md#workspaces).
        sandbox: createSandbox({
          ...settings.sandbox,
          ...opts.sandbox,
          readOnly: [path.join(workspaces, 'mirrors'), path.join(workspaces, 'checkpoints.git')],
        }),
      });
      sandboxStatus = () => ops.sandbox.status();
      const toolActivities = createToolActivities(createToolRegistry(extraTools), ops);
      const hookActivities = createHookActivities({ codeHooks: opts.hooks, ops });
      const activities = {
        ...toolActivities,
        ...createMcpActivities(mcpPool, { callTimeoutMs: settings.mcpToolTimeoutMs }),
        ...hookActivities,
        ...createSetupActivities(toolActivities, hookActivities),
        ...createWorkspaceActivities({ toolsQueue: queues.tools, ops, root: workspaces, checkpointRemote: settings.checkpointRemote }),
      };
      // The shared tools queue, and this host's own: a session provisioned here is pinned to it
      // (ARCHITECTURE.md#tools-pinned-to-their-host). One set of activities serves both.
      const hostQueue = hostQueueFor(queues.tools);
      for (const taskQueue of hostQueue === queues.tools ? [queues.tools] : [queues.tools, hostQueue]) {
        expectOneKindWorker(taskQueue, 'activities');
        workers.push(
          await Worker.create({
            ...common,
            taskQueue,
            dataConverter: dataConverters.activity,
            ...activityInterceptors,
            activities,
            ...opts.tuning?.tools,
          }),
        );
      }
    }
  } catch (e) {
    // A worker that failed to start leaves no live server behind.
    await live?.close();
    throw e;
  }
  return {
    connection,
    sandboxStatus,
    ...(live ? { liveUrl: live.url } : {}),
    ...(promptOffers ? { promptOffers: promptOffers.stats } : {}),
    run: async () => {
      try {
        await Promise.all(workers.map((w) => w.run()));
      } finally {
        await live?.close();
        await tracing?.shutdown();
        await mcpPool.closeAll();
      }
    },
    shutdown: () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
