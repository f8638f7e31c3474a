/**
 * `durable-agent worker`: the three workers in one process, configured by its flags and its
 * environment, read once at start-up (src/worker/settings.ts). Stops gracefully on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { describeCodecs } from '../codec';
import { Runtime } from '@temporalio/worker';
import { connectWithRetry, createWorker } from './worker';
import { deploymentProblem, type WorkerDeployment } from './deployment';
import { workerSettingsFromEnv, type WorkerSettings } from './settings';
import { describeSandbox } from '../activities/sandbox';
import { BASH_MAX_TIMEOUT_MS } from '../activities/tools/bash';

const DRAIN_GRACE_MS = BASH_MAX_TIMEOUT_MS + 60_000;

const USAGE = `usage: durable-agent worker [--address HOST:PORT] [--namespace NS] [--roles workflow,model,tools]
  [--max-model-calls-per-second N] [--metrics-port N] [--deployment NAME --build-id ID]
  --deployment NAME --build-id ID  poll as this build of a worker deployment (Worker Versioning): sessions stay on
                           the build that started them and move to the deployment's current build at continue-as-new
                           (durable-agent deploy set-current; env DURABLE_AGENT_DEPLOYMENT, DURABLE_AGENT_BUILD_ID)
  --metrics-port [HOST:]N  serve the worker's Temporal (Core SDK) metrics for Prometheus at http://HOST:N/metrics (HOST default 127.0.0.1)
Tracing: off unless OTEL_TRACES_EXPORTER (otlp|console) or OTEL_EXPORTER_OTLP_ENDPOINT is set (ARCHITECTURE.md#observability).
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, OPENAI_BASE_URL, OPENAI_API_KEY, DURABLE_AGENT_PRICING_FILE,
DURABLE_AGENT_SCRUB_ENV (extra variable names Bash children must not see),
DURABLE_AGENT_WORKFLOW_BUNDLE (a prebuilt workflow bundle file; skips bundling at start-up),
DURABLE_AGENT_FAST_WORKFLOW_STACKS=1 (no stack-trace query, workflow errors not source-mapped; saves CPU per turn),
DURABLE_AGENT_ENCRYPTION_KEYS (id:base64key,… — encrypt payloads; the first key is current),
DURABLE_AGENT_COMPRESS=1 (compress payloads over 1 KiB). See docs/ENCRYPTION.md.
DURABLE_AGENT_SANDBOX (auto|required|off, or JSON settings: sessions that set no sandbox),
DURABLE_AGENT_BWRAP (bubblewrap binary), DURABLE_AGENT_SANDBOX_DENY_READ (extra paths Bash may not read),
DURABLE_AGENT_DEPLOYMENT and DURABLE_AGENT_BUILD_ID (as --deployment and --build-id).`;

export async function runWorkerCommand(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        address: { type: 'string' },
        namespace: { type: 'string' },
        roles: { type: 'string' },
        'max-model-calls-per-second': { type: 'string' },
        'metrics-port': { type: 'string' },
        deployment: { type: 'string' },
        'build-id': { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const roles = values.roles?.split(',').map((r) => r.trim());
  const bad = roles?.find((r) => !['workflow', 'model', 'tools'].includes(r));
  if (bad) {
    console.error(`--roles: unknown role '${bad}' (expected workflow, model, tools)\n\n${USAGE}`);
    return 2;
  }
  const rate = values['max-model-calls-per-second'];
  if (rate !== undefined && !(Number(rate) > 0)) {
    console.error(`--max-model-calls-per-second: expected a positive number, got '${rate}'`);
    return 2;
  }
  const metrics = values['metrics-port'];
  const metricsMatch = metrics === undefined ? undefined : /^(?:(.+):)?(\d+)$/.exec(metrics);
  if (metrics !== undefined && (!metricsMatch || Number(metricsMatch[2]) < 1 || Number(metricsMatch[2]) > 65535)) {
    console.error(`--metrics-port: expected [HOST:]PORT with a port 1-65535, got '${metrics}'`);
    return 2;
  }
  let flagDeployment: WorkerDeployment | undefined;
  try {
    const fromFlags = values.deployment !== undefined || values['build-id'] !== undefined;
    if (fromFlags && (values.deployment === undefined || values['build-id'] === undefined)) {
      throw new Error(
        `${values.deployment === undefined ? '--deployment' : '--build-id'}: required with ${values.deployment === undefined ? '--build-id' : '--deployment'}`,
      );
    }
    flagDeployment = fromFlags ? { name: values.deployment!, buildId: values['build-id']! } : undefined;
    const problem = flagDeployment && deploymentProblem(flagDeployment, { name: '--deployment', buildId: '--build-id' });
    if (problem) throw new Error(problem);
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  // Every setting from the environment, checked before anything starts: a bad one exits 2, naming it.
  // The flags' deployment stands in for DURABLE_AGENT_DEPLOYMENT / DURABLE_AGENT_BUILD_ID.
  let settings: WorkerSettings;
  try {
    settings = workerSettingsFromEnv(
      flagDeployment
        ? { ...process.env, DURABLE_AGENT_DEPLOYMENT: flagDeployment.name, DURABLE_AGENT_BUILD_ID: flagDeployment.buildId }
        : process.env,
    );
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const deployment = settings.deployment;
  // Before any connection: the Core runtime is installed once per process (ARCHITECTURE.md#observability).
  if (metricsMatch) {
    const bindAddress = `${metricsMatch[1] ?? '127.0.0.1'}:${metricsMatch[2]}`;
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
    console.error(`[worker] metrics for Prometheus at http://${bindAddress}/metrics`);
  }
  const payloadCodecs = settings.payloadCodecs ?? [];
  const address = values.address ?? settings.address;
  const log = (l: string) => console.error(`[worker] ${l}`);
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const connection = await connectWithRetry(address, log, abort.signal).catch(() => undefined);
  if (!connection) return 0;
  // A prebuilt bundle (bundleSessionWorkflows output) saves seconds of start-up per process.
  const bundlePath = settings.workflowBundle;
  const worker = await createWorker({
    settings,
    connection,
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : {}),
    namespace: values.namespace,
    roles: roles as ('workflow' | 'model' | 'tools')[] | undefined,
    maxModelCallsPerSecond: rate ? Number(rate) : undefined,
    // SIGTERM drains: in-flight tool calls and model calls finish (a Bash command may run for up
    // to its 10-minute maximum) before their attempts would be cancelled; SIGKILL still ends it.
    shutdownGraceMs: DRAIN_GRACE_MS,
    log,
  });
  abort.signal.addEventListener('abort', () => {
    log('shutting down: finishing in-flight tasks…');
    worker.shutdown();
  });
  if (abort.signal.aborted) worker.shutdown();
  // Probed before "ready": an operator reads in the start-up line whether Bash will be sandboxed.
  const sandbox = await worker.sandboxStatus();
  log(
    `connected to ${address}; model endpoint ${settings.model.baseURL ?? 'https://api.openai.com/v1'}; ${describeCodecs(payloadCodecs)}` +
      `${sandbox ? `; ${describeSandbox(sandbox)}` : ''}` +
      `${deployment ? `; deployment ${deployment.name} build ${deployment.buildId}` : ''}` +
      `${settings.fastWorkflowStacks ? '; fast workflow stacks (no stack-trace query)' : ''}; ${worker.liveUrl ? `live tokens at ${worker.liveUrl}` : 'no live tokens'}; ready`,
  );
  await worker.run();
  await connection.close();
  log('stopped');
  return 0;
}
