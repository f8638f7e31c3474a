/**
 * The bare loop's workers in a process of their own, for the throughput benchmark: the same
 * concurrency as ours (tuning as JSON in BENCH_WORKER_TUNING), so the two differ only in what a
 * turn does. Prints "ready" on stderr once polling; on SIGTERM it stops and writes the start
 * times of its model steps, and of each loop's first, (JSON) to BENCH_BARE_STARTS_FILE.
 */
import { writeFileSync } from 'node:fs';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { CreateWorkerOptions } from '../../src/worker/worker';
import { quietRuntime } from '../lib';
import { bareActivities, firstStepStarts, modelStepStarts } from './activities';

async function main(): Promise<void> {
  quietRuntime();
  const tuning = JSON.parse(process.env.BENCH_WORKER_TUNING ?? '{}') as NonNullable<CreateWorkerOptions['tuning']>;
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const workers = await Promise.all([
    Worker.create({ connection, taskQueue: 'bare', workflowsPath: require.resolve('./workflows'), ...tuning.workflow }),
    Worker.create({ connection, taskQueue: 'bare-model', activities: bareActivities, ...tuning.model }),
    Worker.create({ connection, taskQueue: 'bare-tools', activities: bareActivities, ...tuning.tools }),
  ]);
  process.once('SIGTERM', () => workers.forEach((w) => w.shutdown()));
  console.error('ready');
  await Promise.all(workers.map((w) => w.run()));
  writeFileSync(process.env.BENCH_BARE_STARTS_FILE!, JSON.stringify({ starts: modelStepStarts, firsts: firstStepStarts }));
  await connection.close();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
