/**
 * Jest global setup: one real Temporal dev server for the whole run (never a mock), on free
 * ports, with its SQLite file in a temp dir (removed by global-teardown.ts), without the UI.
 * Not in memory: an in-memory database lives on the server's one connection, and on a loaded
 * 2-core machine that connection once stayed *interrupted* after a query hit its deadline — every
 * namespace read failed from then on ("GetNamespace operation failed. Error interrupted (9)")
 * and every test after it with them. A file is what `durable-agent server` and the benchmarks use.
 * Its address reaches the test workers through TEMPORAL_TEST_ADDRESS (set here in the parent; jest
 * workers inherit the environment).
 *
 * Set TEMPORAL_TEST_ADDRESS yourself to run the tests against a server you started
 * (`durable-agent server`); it must have our search attributes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureTemporal } from '../src/server/ensure-temporal';
import { ensureTemporalServer } from '../src/server/ensure-temporal-server';
import { startDevServer, type DevServer } from '../src/server/dev-server';

/** Dynamic config for tests: one task-queue partition, so a task lands on the partition the
 *  worker polls without forwarding delays (the server default is 4). */
export const TEST_DYNAMIC_CONFIG: Record<string, string | number | boolean> = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

declare global {
  var __durableAgentDevServer: DevServer | undefined;
  var __durableAgentDevServerDir: string | undefined;
}

export default async function globalSetup(): Promise<void> {
  const preset = process.env.TEMPORAL_TEST_ADDRESS;
  if (preset) {
    process.stderr.write(`\n[global-setup] using the Temporal server at TEMPORAL_TEST_ADDRESS=${preset}\n`);
    return;
  }
  const started = Date.now();
  process.stderr.write('\n[global-setup] finding the Temporal CLI...\n');
  const temporalBin = await ensureTemporal();
  // The full server for the --postgres tests (test/server): built here, with progress, so no test
  // file's beforeAll sits silent through a first build.
  await ensureTemporalServer();
  const tail: string[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'da-test-server-'));
  globalThis.__durableAgentDevServerDir = dir;
  const server = await startDevServer({
    temporalBin,
    dbFile: path.join(dir, 'temporal.db'),
    ui: false,
    dynamicConfig: TEST_DYNAMIC_CONFIG,
    log: (line) => {
      tail.push(line);
      if (tail.length > 200) tail.shift();
    },
  });
  globalThis.__durableAgentDevServer = server;
  process.env.TEMPORAL_TEST_ADDRESS = server.address;
  process.stderr.write(
    `[global-setup] Temporal dev server at ${server.address} (pid ${server.process.pid}), ready in ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
  );
}
