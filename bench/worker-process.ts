/**
 * A worker process for the benchmarks: `createWorker` with tuning passed as JSON in
 * BENCH_WORKER_TUNING (the CLI worker takes no tuning flags), the workflow bundle from
 * DURABLE_AGENT_WORKFLOW_BUNDLE, the model endpoint from OPENAI_BASE_URL. Prints "ready" on
 * stderr once polling; SIGTERM stops it, and it prints how many prompts its model calls took
 * from offers (`prompt-offers {"offered":…,"taken":…}`, ARCHITECTURE.md#prompt-offer).
 */
import { createWorker, type CreateWorkerOptions } from '../src/worker/worker';
import { quietRuntime } from './lib';

async function main(): Promise<void> {
  quietRuntime();
  const tuning = JSON.parse(process.env.BENCH_WORKER_TUNING ?? '{}') as CreateWorkerOptions['tuning'];
  const bundle = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  const worker = await createWorker({
    ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
    tuning,
    log: (l) => console.error(l),
  });
  process.once('SIGTERM', () => worker.shutdown());
  console.error('ready');
  await worker.run();
  console.error(`prompt-offers ${JSON.stringify(worker.promptOffers ?? {})}`);
  await worker.connection.close();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
