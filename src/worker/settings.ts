/**
 * The worker's settings, read from its environment once, at start-up (ARCHITECTURE.md#worker-settings):
 * `workerSettingsFromEnv` parses and checks every variable the worker and its activities use and
 * throws one error naming each bad one. `createWorker` hands the parsed values down to the
 * activities it makes, which read no setting of their own at call time. WORKER_VARIABLES lists
 * them all; README's Configuration section documents each (test/unit/worker-settings.test.ts).
 */
import type { PayloadCodec } from '@temporalio/common';
import { TASK_QUEUES } from '../shared/api';
import { CHECKPOINT_REMOTE_ENV } from '../shared/checkpoint';
import { codecFromEnv } from '../codec';
import { capsFromEnv, limitingFromEnv, type RateLimitCaps } from '../activities/model/rate-limit';
import { sandboxOptionsFromEnv, type SandboxOptions } from '../activities/sandbox';
import { liveServerOptionsFromEnv, type LiveServerOptions } from '../activities/live/server';
import { workspacesRoot } from '../activities/workspace/layout';
import { parsePassList, parseScrubList } from '../activities/tools/env';
import { defaultJournalDir } from '../activities/tools/attempts';
import { mcpToolTimeoutMsFromEnv } from '../activities/mcp/timeout';
import { deploymentFromEnv, type WorkerDeployment } from './deployment';
import { tracesExporterFromEnv, type TracesExporter } from './telemetry';
import { FAST_WORKFLOW_STACKS_ENV, fastWorkflowStacksFromEnv } from './bundle';

export type Env = Record<string, string | undefined>;

/** Every variable the worker reads as a setting, and what it sets (README.md#configuration has each). */
export const WORKER_VARIABLES: Readonly<Record<string, string>> = {
  /** `host:port` of the Temporal server; default `localhost:7233` (`--address` wins). */
  TEMPORAL_ADDRESS: 'the Temporal server',
  /** Default `default` (`--namespace` wins). */
  TEMPORAL_NAMESPACE: 'the Temporal namespace',
  /** Default `agent`; model calls run on it too, tools on `<queue>-tools`. */
  DURABLE_AGENT_TASK_QUEUE: 'the workflow task queue',
  /** Default `<queue>-tools`, e.g. `agent-tools@host` to pin tools to a host. */
  DURABLE_AGENT_TOOLS_TASK_QUEUE: 'the tools task queue',
  /** The OpenAI-compatible endpoint; default the OpenAI API. */
  OPENAI_BASE_URL: 'the model endpoint',
  /** The model endpoint's key (a bearer token). */
  OPENAI_API_KEY: 'the model endpoint key',
  /** Sent as the `openai-organization` header. */
  OPENAI_ORG_ID: 'the OpenAI organization',
  /** Sent as the `openai-project` header. */
  OPENAI_PROJECT_ID: 'the OpenAI project',
  /** A JSON file overriding or extending the built-in pricing table. */
  DURABLE_AGENT_PRICING_FILE: 'the pricing table',
  /** Concurrent model calls per endpoint on this worker (a whole number ≥ 1). */
  DURABLE_AGENT_MODEL_MAX_CONCURRENT: 'model calls in flight per endpoint',
  /** Model requests per minute per endpoint on this worker (a whole number ≥ 1). */
  DURABLE_AGENT_MODEL_RPM: 'model requests per minute',
  /** Model tokens per minute per endpoint on this worker (a whole number ≥ 1). */
  DURABLE_AGENT_MODEL_TPM: 'model tokens per minute',
  /** Concurrent model calls per endpoint across the fleet (a whole number ≥ 1). */
  DURABLE_AGENT_FLEET_MAX_CONCURRENT: 'model calls in flight across workers',
  /** `0`/`false`/`off`/`no` turns rate limiting off, headers included. */
  DURABLE_AGENT_MODEL_RATE_LIMIT: 'rate limiting on or off',
  /** `id:base64key,…`: payloads are encrypted, the first key is current. */
  DURABLE_AGENT_ENCRYPTION_KEYS: 'payload encryption keys',
  /** `1`: payloads over 1 KiB are compressed. */
  DURABLE_AGENT_COMPRESS: 'payload compression',
  /** The worker deployment this build belongs to (with DURABLE_AGENT_BUILD_ID). */
  DURABLE_AGENT_DEPLOYMENT: 'the worker deployment',
  /** This build's id (with DURABLE_AGENT_DEPLOYMENT). */
  DURABLE_AGENT_BUILD_ID: 'the build id',
  /** `1`: the workflow sandbox's stack-trace patches, trading the stack-trace query for CPU. */
  [FAST_WORKFLOW_STACKS_ENV]: 'fast workflow stacks (no stack-trace query)',
  /** A prebuilt workflow bundle file (`durable-agent worker` only). */
  DURABLE_AGENT_WORKFLOW_BUNDLE: 'a prebuilt workflow bundle',
  /** `otlp`, `console` or `none`; default `otlp` when an OTLP endpoint is set, else off. */
  OTEL_TRACES_EXPORTER: 'the traces exporter',
  /** Where OTLP traces go (read by the exporter too). */
  OTEL_EXPORTER_OTLP_ENDPOINT: 'the OTLP endpoint',
  /** Where OTLP traces go, for traces only (read by the exporter too). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'the OTLP traces endpoint',
  /** The traces' service name; default `durable-agent-worker`. */
  OTEL_SERVICE_NAME: 'the traces service name',
  /** The Bash sandbox of sessions that set none: `auto` (default), `required`, `off` or JSON settings. */
  DURABLE_AGENT_SANDBOX: 'the default Bash sandbox',
  /** The bubblewrap binary; default `bwrap` on PATH. */
  DURABLE_AGENT_BWRAP: 'the bubblewrap binary',
  /** Extra paths (comma-separated) no sandboxed command may read. */
  DURABLE_AGENT_SANDBOX_DENY_READ: 'paths hidden from sandboxed commands',
  /** Names of the worker's own variables Bash and hooks get (comma-separated, exact). */
  DURABLE_AGENT_PASS_ENV: 'variables passed to Bash',
  /** Names never passed to Bash or hooks nor expanded in MCP configs (`PREFIX_*`, `*_SUFFIX`). */
  DURABLE_AGENT_SCRUB_ENV: 'variables never passed to Bash',
  /** `host:port`, `port` or `off`; default `127.0.0.1:0`. */
  DURABLE_AGENT_LIVE_LISTEN: 'where live tokens are served',
  /** The base URL readers of live tokens are told. */
  DURABLE_AGENT_LIVE_URL: 'the advertised live tokens URL',
  /** Default `${XDG_CACHE_HOME:-~/.cache}/durable-agent/workspaces`. */
  DURABLE_AGENT_WORKSPACES: 'the workspaces root',
  /** The default workspaces root's parent. */
  XDG_CACHE_HOME: 'the cache directory',
  /** The attempt journal's parent: `${XDG_STATE_HOME:-~/.local/state}/durable-agent/attempts`. */
  XDG_STATE_HOME: 'the state directory',
  /** A git URL checkpoints are pushed to and restored from; none: they stay on their host. */
  [CHECKPOINT_REMOTE_ENV]: 'the checkpoint remote',
  /** How long one MCP call may take (ms); default 10 minutes. */
  MCP_TOOL_TIMEOUT: 'the MCP call timeout',
};

export interface WorkerSettings {
  /** TEMPORAL_ADDRESS. */
  address: string;
  /** TEMPORAL_NAMESPACE. */
  namespace: string;
  /** DURABLE_AGENT_TASK_QUEUE. */
  taskQueue: string;
  /** DURABLE_AGENT_TOOLS_TASK_QUEUE. */
  toolsTaskQueue?: string;
  /** OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID. */
  model: { baseURL?: string; apiKey?: string; organization?: string; project?: string };
  /** DURABLE_AGENT_PRICING_FILE. */
  pricingFile?: string;
  /** DURABLE_AGENT_MODEL_RATE_LIMIT: false turns header-driven limiting off. */
  rateLimiting: boolean;
  /** DURABLE_AGENT_MODEL_MAX_CONCURRENT, _RPM, _TPM, DURABLE_AGENT_FLEET_MAX_CONCURRENT. */
  rateLimitCaps: RateLimitCaps;
  /** DURABLE_AGENT_ENCRYPTION_KEYS, DURABLE_AGENT_COMPRESS; undefined: neither. */
  payloadCodecs?: PayloadCodec[];
  /** DURABLE_AGENT_DEPLOYMENT, DURABLE_AGENT_BUILD_ID; undefined: unversioned. */
  deployment?: WorkerDeployment;
  /** DURABLE_AGENT_WORKFLOW_BUNDLE. */
  workflowBundle?: string;
  /** DURABLE_AGENT_FAST_WORKFLOW_STACKS (ARCHITECTURE.md#workflow-stack-traces); default false. */
  fastWorkflowStacks: boolean;
  /** OTEL_TRACES_EXPORTER (or an OTLP endpoint); undefined: tracing off. */
  tracesExporter?: TracesExporter;
  /** OTEL_SERVICE_NAME. */
  otelServiceName?: string;
  /** DURABLE_AGENT_SANDBOX, DURABLE_AGENT_BWRAP, DURABLE_AGENT_SANDBOX_DENY_READ (and the environment, for its secret files). */
  sandbox: SandboxOptions;
  /** DURABLE_AGENT_PASS_ENV (checked here; Bash children's environment is built at each spawn). */
  passEnv: string[];
  /** DURABLE_AGENT_SCRUB_ENV. */
  scrubEnv: string[];
  /** DURABLE_AGENT_LIVE_LISTEN, DURABLE_AGENT_LIVE_URL; undefined: off. */
  live?: LiveServerOptions;
  /** DURABLE_AGENT_WORKSPACES (else under XDG_CACHE_HOME). */
  workspacesRoot: string;
  /** The attempt journal's directory (under XDG_STATE_HOME). */
  attemptsDir: string;
  /** DURABLE_AGENT_CHECKPOINT_REMOTE; '' when none. */
  checkpointRemote: string;
  /** MCP_TOOL_TIMEOUT. */
  mcpToolTimeoutMs: number;
}

/** More than one bad variable: one message line each. */
export class WorkerSettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'WorkerSettingsError';
  }
}

/**
 * Every worker setting from `env`. A bad value throws, naming the variable (the one parser's own
 * error when one is bad; a WorkerSettingsError listing each when several are).
 */
export function workerSettingsFromEnv(env: Env = process.env): WorkerSettings {
  const problems: Error[] = [];
  const parse = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (e) {
      problems.push(e as Error);
      return fallback;
    }
  };
  const settings: WorkerSettings = {
    address: env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.DURABLE_AGENT_TASK_QUEUE ?? TASK_QUEUES.workflow,
    ...(env.DURABLE_AGENT_TOOLS_TASK_QUEUE !== undefined ? { toolsTaskQueue: env.DURABLE_AGENT_TOOLS_TASK_QUEUE } : {}),
    model: {
      baseURL: env.OPENAI_BASE_URL,
      apiKey: env.OPENAI_API_KEY,
      organization: env.OPENAI_ORG_ID,
      project: env.OPENAI_PROJECT_ID,
    },
    ...(env.DURABLE_AGENT_PRICING_FILE ? { pricingFile: env.DURABLE_AGENT_PRICING_FILE } : {}),
    rateLimiting: limitingFromEnv(env),
    rateLimitCaps: parse(() => capsFromEnv(env), {}),
    payloadCodecs: parse(() => codecFromEnv(env), undefined),
    deployment: parse(() => deploymentFromEnv(env), undefined),
    ...(env.DURABLE_AGENT_WORKFLOW_BUNDLE ? { workflowBundle: env.DURABLE_AGENT_WORKFLOW_BUNDLE } : {}),
    fastWorkflowStacks: parse(() => fastWorkflowStacksFromEnv(env), false),
    tracesExporter: parse(() => tracesExporterFromEnv(env), undefined),
    ...(env.OTEL_SERVICE_NAME ? { otelServiceName: env.OTEL_SERVICE_NAME } : {}),
    sandbox: parse(() => sandboxOptionsFromEnv(env), {}),
    passEnv: parse(() => parsePassList(env.DURABLE_AGENT_PASS_ENV), []),
    scrubEnv: parseScrubList(env.DURABLE_AGENT_SCRUB_ENV),
    live: parse(() => liveServerOptionsFromEnv(env), undefined),
    workspacesRoot: workspacesRoot(env),
    attemptsDir: defaultJournalDir(env),
    checkpointRemote: env[CHECKPOINT_REMOTE_ENV] ?? '',
    mcpToolTimeoutMs: mcpToolTimeoutMsFromEnv(env),
  };
  if (problems.length === 1) throw problems[0]!;
  if (problems.length > 1) throw new WorkerSettingsError(problems.map((e) => e.message));
  return settings;
}
