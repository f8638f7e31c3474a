/**
 * The full Temporal server on the machine's real PostgreSQL (src/server/cluster.ts): a 50-session
 * batch survives the server process being SIGKILLed and restarted mid-batch, and a two-node
 * cluster finishes a batch after one node is SIGKILLed. The worker (this process) and the scripted
 * model are the usual ones; only the server differs from the other tests.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { batchResults, batchStatus, submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { scrape, total } from '../../bench/server-metrics';
import { freePortOn, startPostgresServer, type PostgresServer } from '../../src/server/cluster';
import { ensureTemporalServer, type TemporalServerInstall } from '../../src/server/ensure-temporal-server';
import { parsePostgresUrl, setupSchemas, type PostgresTarget } from '../../src/server/postgres';
import type { BatchProgress } from '../../src/shared/batch';
import { turn } from '../../src/testing/scripted-model';
import { quietSdkLogs, startStack, type Stack } from '../../src/testing/stack';
import { scenarioTag, workflowBundle } from '../helpers/harness';
import { dropDatabases, sqlIn, uniqueDatabaseUrl } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

const JOBS = 50;
let install: TemporalServerInstall;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  quietSdkLogs('WARN');
  install = await ensureTemporalServer({ quiet: true });
}, 900_000);

afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step().catch((e: unknown) => console.error(e));
}, 120_000);

/** Fresh databases, schema set up, `nodes` server processes on them, a worker and client on node 1. */
async function cluster(
  label: string,
  nodes: number,
  metricsPort?: number,
): Promise<{ server: PostgresServer; stack: Stack; target: PostgresTarget; restart(): Promise<PostgresServer> }> {
  const url = uniqueDatabaseUrl(label);
  cleanups.push(() => dropDatabases(url));
  const target = parsePostgresUrl(url);
  await setupSchemas(target, install, () => undefined);
  const stateDir = mkdtempSync(path.join(tmpdir(), `da-pg-${label}-`));
  const start = (ports?: PostgresServer['ports']) => startPostgresServer({ target, install, stateDir, nodes, ports, metricsPort });
  let server = await start();
  cleanups.push(() => server.stop());
  const stack = await startStack({
    address: server.address,
    taskQueue: `pg-${label}-${process.pid}`,
    model: { scripted: {} },
    worker: { workflowBundle: await workflowBundle() },
  });
  cleanups.push(() => stack.close());
  return {
    server,
    stack,
    target,
    restart: async () => {
      server = await start(server.ports);
      return server;
    },
  };
}

/** A batch of JOBS sessions, each a Bash call then an answer naming its job; returns the batch id. */
async function submit(stack: Stack, label: string): Promise<string> {
  const batchId = `pg-${label}-${Date.now().toString(36)}`;
  const lines = Array.from({ length: JOBS }, (_, i) => {
    const id = `${label}-${String(i).padStart(2, '0')}`;
    stack.model!.addScenario({
      name: `${batchId}-${id}`,
      turns: [turn.tool('Bash', { command: `echo ${id}` }), turn.text(`done ${id}`, { delay_ms: 150 })],
    });
    return JSON.stringify({
      id,
      prompt: `${scenarioTag(`${batchId}-${id}`)} job ${i}`,
      permissionMode: 'bypassPermissions',
      cwd: tmpdir(),
    });
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'da-pg-jobs-')), 'jobs.jsonl');
  writeFileSync(file, lines.join('\n'));
  await submitBatch(stack.client, readJobsFile(file, { batchId }), { batchId, concurrency: 8 });
  return batchId;
}

/** Wait until the batch has finished some jobs but not all: the moment to kill a server. */
async function midBatch(stack: Stack, batchId: string): Promise<BatchProgress> {
  const progress = await waitFor(
    'ten jobs done',
    async () => {
      const s = await batchStatus(stack.client, batchId);
      return s.progress.completed >= 10 && s.progress;
    },
    { timeoutMs: 180_000, everyMs: 200 },
  );
  expect(progress.completed).toBeLessThan(JOBS);
  return progress;
}

/** Every job finished, each with its own answer (describe retried while a server restarts). */
async function expectAllFinish(stack: Stack, batchId: string): Promise<void> {
  const handle = stack.client.client.workflow.getHandle(batchId);
  await waitFor('the batch to complete', async () => (await handle.describe()).status.name === 'COMPLETED', {
    timeoutMs: 400_000,
    everyMs: 500,
    ignoreErrors: true,
  });
  expect(await handle.result()).toMatchObject({ total: JOBS, completed: JOBS, failed: 0, running: [], waiting: 0, done: true });
  const results = await batchResults(stack.client, batchId);
  expect(results).toHaveLength(JOBS);
  for (const r of results) {
    expect(r.status).toBe('completed');
    expect(r.result).toBe(`done ${r.id}`);
  }
}

function kill(p: PostgresServer['nodes'][number]['process']): Promise<void> {
  const closed = new Promise<void>((resolve) => p.once('close', () => resolve()));
  p.kill('SIGKILL');
  return closed;
}

test('a 50-session batch finishes although the server process is SIGKILLed and restarted mid-batch', async () => {
  const { server, stack, restart } = await cluster('restart', 1);
  const batchId = await submit(stack, 'restart');
  await midBatch(stack, batchId);
  await kill(server.nodes[0]!.process);
  expect(server.nodes[0]!.process.signalCode).toBe('SIGKILL');
  const again = await restart();
  expect(again.address).toBe(server.address);
  await expectAllFinish(stack, batchId);
}, 600_000);

test('a two-node cluster finishes a 50-session batch after one node is SIGKILLed mid-batch', async () => {
  const metricsPort = await freePortOn(['127.0.0.1', '127.0.0.2']);
  const { server, stack, target } = await cluster('nodes', 2, metricsPort);
  expect(server.addresses).toEqual([`127.0.0.1:${server.ports.frontend}`, `127.0.0.2:${server.ports.frontend}`]);
  expect(server.metricsUrls).toEqual([`http://127.0.0.1:${metricsPort}/metrics`, `http://127.0.0.2:${metricsPort}/metrics`]);
  // One cluster: both nodes' history services heartbeat into the shared membership table (role 2 = history).
  const members = await sqlIn(
    target,
    target.database,
    "SELECT DISTINCT rpc_address FROM cluster_membership WHERE role = 2 AND last_heartbeat > now() at time zone 'utc' - interval '1 minute' ORDER BY 1",
  );
  expect(members.map((r) => r.rpc_address)).toEqual(['127.0.0.1', '127.0.0.2']);
  const batchId = await submit(stack, 'nodes');
  await midBatch(stack, batchId);
  // Each node serves its own metrics: both history services have stored workflow updates by now
  // (the server publishes its counters about once a second).
  for (const url of server.metricsUrls!) {
    await waitFor(`history writes counted at ${url}`, async () => total(await scrape(url), 'persistence_requests') > 0, {
      timeoutMs: 30_000,
      everyMs: 500,
    });
    const updates = (await scrape(url)).get('persistence_requests|history|UpdateWorkflowExecution') ?? 0;
    expect(updates).toBeGreaterThan(0);
  }
  // Node 2 owns about half of the history shards; they move to node 1 once it is gone.
  await kill(server.nodes[1]!.process);
  await expectAllFinish(stack, batchId);
  expect(server.nodes[0]!.process.exitCode).toBeNull();
}, 600_000);
