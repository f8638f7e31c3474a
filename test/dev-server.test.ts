import { Client, type Connection } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  AGENT_SEARCH_ATTRIBUTES,
  DevServerStartError,
  freePort,
  PortInUseError,
  runServerCommand,
  startDevServer,
} from '../src/server/dev-server';
import { ensureTemporal } from '../src/server/ensure-temporal';
import { TEST_NAMESPACE, testAddress } from './helpers/server';
import { waitFor } from './helpers/wait';
import { connectTemporal } from '../src/server/connection';
import { SEARCH_ATTRIBUTE_KEYS } from '../src/shared/api';
import { scrape } from '../bench/server-metrics';

/** A workflow no worker polls, started with some of our search attributes: the server validates and records them. */
function startWithOurAttributes(client: Client, workflowId: string, attributes: SearchAttributePair[]) {
  return client.workflow.start('noSuchWorkflow', { taskQueue: 'nobody-polls', workflowId, typedSearchAttributes: attributes });
}

describe('Temporal dev server', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await connectTemporal({ address: testAddress() });
  });

  afterAll(async () => {
    await connection?.close();
  });

  it('answers and has our search attributes registered', async () => {
    const info = await connection.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBeTruthy();

    const res = await connection.operatorService.listSearchAttributes({ namespace: TEST_NAMESPACE });
    const custom = res.customAttributes ?? {};
    // temporal.api.enums.v1.IndexedValueType: KEYWORD=2, INT=3, DOUBLE=4
    const expected: Record<string, number> = { Keyword: 2, Int: 3, Double: 4 };
    for (const [name, type] of Object.entries(AGENT_SEARCH_ATTRIBUTES)) {
      expect({ name, type: custom[name] }).toEqual({ name, type: expected[type] });
    }
  });

  it('refuses a port that is already taken, before spawning anything', async () => {
    const port = Number(testAddress().split(':').pop());
    const attempt = startDevServer({ port, ui: false, dbFile: ':memory:' });
    await expect(attempt).rejects.toBeInstanceOf(PortInUseError);
    await expect(attempt).rejects.toThrow(`port ${port} is already in use`);
    await expect(attempt).rejects.toThrow('--port');
  });

  it('`server` command: an unknown flag prints usage and returns 2', async () => {
    const writes: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      await expect(runServerCommand(['--bogus'])).resolves.toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(writes.join('')).toContain('usage: durable-agent server');
  });

  it('serves its Prometheus metrics on request, read by operation (the throughput benchmark counts the server work per turn)', async () => {
    const server = await startDevServer({ ui: false, dbFile: ':memory:', metricsPort: 0 });
    try {
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const own = await connectTemporal({ address: server.address });
      try {
        for (let i = 0; i < 3; i++) await own.workflowService.describeNamespace({ namespace: 'default' });
      } finally {
        await own.close();
      }
      // The server publishes its counters about once a second.
      const described = async () => (await scrape(server.metricsUrl!)).get('service_requests|frontend|DescribeNamespace') ?? 0;
      await waitFor('the three calls counted', async () => (await described()) >= 3, 15_000);
      expect(await described()).toBeGreaterThanOrEqual(3);
    } finally {
      await server.stop();
    }
    const plain = await startDevServer({ ui: false, dbFile: ':memory:' });
    try {
      expect(plain.metricsUrl).toBeUndefined();
      expect(readFileSync(`/proc/${plain.process.pid!}/cmdline`, 'utf8').split('\0')).not.toContain('--metrics-port');
    } finally {
      await plain.stop();
    }
  });

  it("a server that dies at start over a port taken meanwhile is started again, and its error names the panic's cause, not only the stack", async () => {
    // A stand-in for the binary that panics as start-dev does when a port it picked was taken in between.
    const dir = mkdtempSync(path.join(tmpdir(), 'da-devserver-'));
    const bin = path.join(dir, 'temporal');
    const runs = path.join(dir, 'runs');
    writeFileSync(
      bin,
      [
        '#!/bin/sh',
        `echo run >> ${runs}`,
        'echo "panic: listen tcp 127.0.0.1:41234: bind: address already in use" >&2',
        'echo "" >&2',
        'i=0; while [ $i -lt 60 ]; do echo "go.uber.org/dig.paramSingle.Build(...) frame $i" >&2; i=$((i+1)); done',
        'exit 2',
      ].join('\n'),
    );
    chmodSync(bin, 0o755);
    const lines: string[] = [];
    const attempt = startDevServer({ ui: false, dbFile: ':memory:', temporalBin: bin, log: (l) => lines.push(l) });
    await expect(attempt).rejects.toBeInstanceOf(DevServerStartError);
    await expect(attempt).rejects.toThrow('panic: listen tcp 127.0.0.1:41234: bind: address already in use');
    expect(readFileSync(runs, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(lines.filter((l) => l.includes('a port was taken while the server started'))).toHaveLength(2);
  });

  it('a database made before our search attributes gets them at start, usable as soon as the server is ready', async () => {
    // A plain start-dev makes the file without them, as an older version of ours would have.
    const dbFile = path.join(mkdtempSync(path.join(tmpdir(), 'da-devserver-')), 'old.db');
    const port = await freePort();
    const plain = spawn(
      await ensureTemporal({ quiet: true }),
      ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', '--db-filename', dbFile, '--log-level', 'error'],
      { stdio: 'ignore' },
    );
    const plainExited = new Promise((resolve) => plain.once('exit', resolve));
    await waitFor(
      'the plain server answers',
      async () => {
        const c = await connectTemporal({ address: `127.0.0.1:${port}`, connectTimeout: '1s' }).catch(() => undefined);
        await c?.close();
        return c !== undefined;
      },
      60_000,
    );
    plain.kill('SIGTERM');
    await plainExited;

    const server = await startDevServer({ ui: false, dbFile });
    const client = new Client({ connection: await connectTemporal({ address: server.address }) });
    try {
      const handle = await startWithOurAttributes(client, 'old-db-start', [
        { key: SEARCH_ATTRIBUTE_KEYS.status, value: 'running' },
        { key: SEARCH_ATTRIBUTE_KEYS.batchId, value: 'b1' },
      ]);
      expect((await handle.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.batchId)).toBe('b1');
    } finally {
      await client.connection.close();
      await server.stop();
    }
  });

  // ARCHITECTURE.md#dev-server-throttle
  describe('defaults that do not throttle', () => {
    /** SQLite header bytes 18–19: 1 = rollback journal, 2 = WAL. */
    const journalVersions = (file: string): number[] => {
      const fd = openSync(file, 'r');
      try {
        const buf = Buffer.alloc(2);
        readSync(fd, buf, 0, 2, 18);
        return [...buf];
      } finally {
        closeSync(fd);
      }
    };
    const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

    it('runs the SQLite file in WAL mode with the transfer-queue poll rate raised; both can be overridden', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'da-devserver-'));
      const server = await startDevServer({ ui: false, dbFile: path.join(dir, 'wal.db') });
      try {
        expect(journalVersions(server.dbFile)).toEqual([2, 2]);
        expect(cmdline(server.process.pid!)).toContain('history.transferProcessorMaxPollRPS=1000');
      } finally {
        await server.stop();
      }
      const overridden = await startDevServer({
        ui: false,
        dbFile: path.join(dir, 'rollback.db'),
        sqlitePragma: { journal_mode: 'delete' },
        dynamicConfig: { 'history.transferProcessorMaxPollRPS': 20 },
      });
      try {
        expect(journalVersions(overridden.dbFile)).toEqual([1, 1]);
        const args = cmdline(overridden.process.pid!);
        expect(args).toContain('history.transferProcessorMaxPollRPS=20');
        expect(args).not.toContain('history.transferProcessorMaxPollRPS=1000');
      } finally {
        await overridden.stop();
      }
    });

    it('reads search attribute definitions from its cache, not from the store at every start and every visibility write', async () => {
      const server = await startDevServer({ ui: false, dbFile: ':memory:', metricsPort: 0 });
      const client = new Client({ connection: await connectTemporal({ address: server.address }) });
      try {
        const metadataReads = async () => {
          const c = await scrape(server.metricsUrl!);
          return ['frontend', 'history'].reduce((n, svc) => n + (c.get(`persistence_requests|${svc}|GetCurrentClusterMetadata`) ?? 0), 0);
        };
        const recorded = async () =>
          (await scrape(server.metricsUrl!)).get('visibility_persistence_requests|history|RecordWorkflowExecutionStarted') ?? 0;
        // One start first, so the caches have loaded; then count what ten more starts read.
        const start = (i: number) =>
          startWithOurAttributes(client, `sa-cache-${i}`, [
            { key: SEARCH_ATTRIBUTE_KEYS.status, value: 'running' },
            { key: SEARCH_ATTRIBUTE_KEYS.model, value: 'gpt-4.1-mini' },
          ]);
        await start(0);
        await waitFor('the first start recorded', async () => (await recorded()) >= 1, 15_000);
        const before = await metadataReads();
        for (let i = 1; i <= 10; i++) await start(i);
        await waitFor('all eleven starts recorded', async () => (await recorded()) >= 11, 15_000);
        // start-dev's own default re-reads them from the store at every use: 20 or more reads here.
        expect((await metadataReads()) - before).toBeLessThan(5);
      } finally {
        await client.connection.close();
        await server.stop();
      }
    });
  });
});
