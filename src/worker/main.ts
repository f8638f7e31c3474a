/**
 * `durable-agent worker`: the three workers in one process, configured from the environment
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, OPENAI_BASE_URL, OPENAI_API_KEY,
 * DURABLE_AGENT_PRICING_FILE, DURABLE_AGENT_WORKFLOW_BUNDLE). Stops gracefully on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { codecFromEnv, describeCodecs } from '../client/codec';
import { connectWithRetry, createWorker } from './worker';

const USAGE = `usage: durable-agent worker [--address HOST:PORT] [--namespace NS] [--roles workflow,model,tools]
  [--max-model-calls-per-second N]
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, OPENAI_BASE_URL, OPENAI_API_KEY, DURABLE_AGENT_PRICING_FILE,
DURABLE_AGENT_SCRUB_ENV (extra variable names Bash children must not see),
DURABLE_AGENT_WORKFLOW_BUNDLE (a prebuilt workflow bundle file; skips bundling at start-up),
DURABLE_AGENT_ENCRYPTION_KEYS (id:base64key,… — encrypt payloads; the first key is current),
DURABLE_AGENT_COMPRESS=1 (compress payloads over 1 KiB). See docs/ENCRYPTION.md.`;

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
  let payloadCodecs;
  try {
    payloadCodecs = codecFromEnv() ?? [];
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const address = values.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const log = (l: string) => console.error(`[worker] ${l}`);
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const connection = await connectWithRetry(address, log, abort.signal).catch(() => undefined);
  if (!connection) return 0;
  // A prebuilt bundle (bundleWorkflowCode output) saves seconds of start-up per process.
  const bundlePath = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  const worker = await createWorker({
    connection,
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : {}),
    namespace: values.namespace,
    roles: roles as ('workflow' | 'model' | 'tools')[] | undefined,
    maxModelCallsPerSecond: rate ? Number(rate) : undefined,
    payloadCodecs,
    log,
  });
  abort.signal.addEventListener('abort', () => {
    log('shutting down: finishing in-flight tasks…');
    worker.shutdown();
  });
  if (abort.signal.aborted) worker.shutdown();
  log(`connected to ${address}; model endpoint ${process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1'}; ${describeCodecs(payloadCodecs)}; ready`);
  await worker.run();
  await connection.close();
  log('stopped');
  return 0;
}
