/**
 * A tools-only worker for crash tests (test/chaos/write-crash.test.ts): the real tools through
 * the ops seam, except that once the file named in STALL_AFTER_WRITE has been written, it creates
 * STALL_MARKER and never returns — the attempt's effect is on disk and it cannot complete, so the
 * test kills the process at exactly that point. Run with `node --require tsx/cjs`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { nodeFs, type ToolFs } from '../../src/activities/tools';
import { createWorker } from '../../src/worker/worker';

async function main(): Promise<void> {
  const target = process.env.STALL_AFTER_WRITE;
  const marker = process.env.STALL_MARKER;
  const address = process.env.TEMPORAL_ADDRESS;
  if (!target || !marker || !address) throw new Error('STALL_AFTER_WRITE, STALL_MARKER and TEMPORAL_ADDRESS are required');
  const fs: ToolFs = {
    ...nodeFs,
    async writeFile(p, data, check) {
      await nodeFs.writeFile(p, data, check);
      if (p !== target) return;
      // Written aside and renamed: the test polls for the marker and must never see it empty.
      writeFileSync(`${marker}.tmp`, `${process.pid}\n`);
      renameSync(`${marker}.tmp`, marker);
      // Heartbeats go on (the activity's ticker): only a kill ends this attempt.
      await new Promise<never>(() => undefined);
    },
  };
  const connection = await NativeConnection.connect({ address });
  const worker = await createWorker({
    connection,
    roles: ['tools'],
    toolFs: fs,
    payloadCodecs: [],
    log: (l) => console.error(`[worker] ${l}`),
  });
  console.error(`[worker] connected to ${address}; stalls after writing ${target}; ready`);
  await worker.run();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
