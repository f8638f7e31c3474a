/**
 * Benchmark 2 — throughput: 100, 500 and 1,000 concurrent sessions, every model call taking 1 s,
 * on one worker process: achieved turns/s against the ideal (sessions ÷ latency), and the worker's
 * RSS per session.
 *
 *   npx tsx bench/throughput.ts [--sessions 100,500,1000] [--turns 10] [--latency-ms 1000]
 *
 * A turn is one model call (1 s) and, for all but the last, one Read. The rate is counted from
 * the model requests that arrive between the moment every session has started and the moment
 * the first one finishes (steady state: all sessions live); the end-to-end rate (all turns ÷ first
 * start to last finish) is printed beside it. The worker runs with its concurrency raised to fit
 * (SDK defaults: 100 activity slots, 40 workflow-task slots) — see TUNING. Target: ≥ 90% of the
 * ideal at 500 sessions.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { DurableAgentClient, type SessionHandle } from '../src/client/client';
import { startScriptedModel, turn } from '../src/testing/scripted-model';
import type { CreateWorkerOptions } from '../src/worker/worker';
import { cpuMs, load, machine, mib, pool, quietRuntime, rssBytes, sleep, spawnBenchWorker, startBenchServer, table, writeBundle } from './lib';

/** Slots for every session's model call at once, a workflow cache holding every session. */
export function tuningFor(sessions: number): NonNullable<CreateWorkerOptions['tuning']> {
  return {
    workflow: {
      maxCachedWorkflows: sessions + 100,
      maxConcurrentWorkflowTaskExecutions: 200,
      maxConcurrentWorkflowTaskPolls: 20,
    },
    model: { maxConcurrentActivityTaskExecutions: sessions + 100, maxConcurrentActivityTaskPolls: 20 },
    tools: { maxConcurrentActivityTaskExecutions: 500, maxConcurrentActivityTaskPolls: 10 },
  };
}

interface Level {
  sessions: number;
  steadyTurnsPerS: number;
  endToEndTurnsPerS: number;
  idealTurnsPerS: number;
  windowS: number;
  idleRss: number;
  peakRss: number;
  cpu: { worker: number; server: number; bench: number };
  failed: number;
}

export async function throughput(opts: { sessions: number[]; turns: number; latencyMs: number; inMemory?: boolean }): Promise<Level[]> {
  quietRuntime();
  const loadBefore = load();
  const { server, dir } = await startBenchServer(opts.inMemory);
  const bundlePath = await writeBundle(dir);
  const arrivals: number[] = [];
  const model = await startScriptedModel({ scenarios: [], keepMessages: false, onRequest: (r) => arrivals.push(r.at) });
  const connection = await Connection.connect({ address: server.address });
  const client = await DurableAgentClient.connect({ connection });
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  const delay = { delay_ms: opts.latencyMs };
  model.addScenario({
    name: 'load',
    turns: [
      ...Array.from({ length: opts.turns - 1 }, () => turn.tool('Read', { file_path: path.join(ws, 'notes.txt') }, delay)),
      turn.text('done', delay),
    ],
  });

  const levels: Level[] = [];
  try {
    for (const sessions of opts.sessions) {
      const worker = spawnBenchWorker({ address: server.address, modelUrl: model.url, bundlePath, tuning: tuningFor(sessions) });
      await worker.ready;
      await sleep(2_000);
      const idleRss = rssBytes(worker.pid);
      let peakRss = idleRss;
      const sampler = setInterval(() => {
        try {
          peakRss = Math.max(peakRss, rssBytes(worker.pid));
        } catch {
          // exiting
        }
      }, 250);
      arrivals.length = 0;
      model.reset();

      const tStart = Date.now();
      const handles: SessionHandle[] = await pool(Array.from({ length: sessions }), 50, () =>
        client.start({ prompt: '[scenario:load] Read the notes.', cwd: ws, permissionMode: 'bypassPermissions' }),
      );
      const tAllStarted = Date.now();
      const cpu0 = { worker: cpuMs(worker.pid), server: cpuMs(server.process.pid!), bench: process.cpuUsage() };
      let tFirstDone = Infinity;
      let cpuAtFirstDone: typeof cpu0 | undefined;
      let failed = 0;
      await pool(handles, 200, async (h) => {
        const r = await h.result();
        if (r.subtype !== 'success') failed++;
        if (!cpuAtFirstDone) {
          tFirstDone = Date.now();
          cpuAtFirstDone = { worker: cpuMs(worker.pid), server: cpuMs(server.process.pid!), bench: process.cpuUsage() };
        }
      });
      const tEnd = Date.now();
      clearInterval(sampler);

      const windowMs = tFirstDone - tAllStarted;
      const inWindow = arrivals.filter((t) => t >= tAllStarted && t <= tFirstDone).length;
      const c1 = cpuAtFirstDone!;
      const share = (a: number, b: number) => (windowMs > 0 ? (b - a) / windowMs : NaN);
      levels.push({
        sessions,
        steadyTurnsPerS: windowMs > 0 ? inWindow / (windowMs / 1000) : NaN,
        endToEndTurnsPerS: arrivals.length / ((tEnd - tStart) / 1000),
        idealTurnsPerS: sessions / (opts.latencyMs / 1000),
        windowS: windowMs / 1000,
        idleRss,
        peakRss,
        cpu: {
          worker: share(cpu0.worker, c1.worker),
          server: share(cpu0.server, c1.server),
          bench: share(
            (cpu0.bench.user + cpu0.bench.system) / 1000,
            (c1.bench.user + c1.bench.system) / 1000,
          ),
        },
        failed,
      });
      if (process.env.BENCH_DEBUG) {
        const ev = (await handles[Math.floor(sessions / 2)]!.workflow.fetchHistory()).events ?? [];
        const { eventMs } = await import('./lib');
        const t0 = eventMs(ev[0]!);
        console.error(ev.map((e) => `${eventMs(e) - t0} ${e.eventType} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}`).join('\n'));
      }
      await worker.stop();
      const l = levels.at(-1)!;
      console.error(`[throughput] ${sessions} sessions: ${l.steadyTurnsPerS.toFixed(1)} turns/s steady, ${l.endToEndTurnsPerS.toFixed(1)} end to end`);
    }
  } finally {
    await connection.close();
    await model.close();
    await server.stop();
  }

  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  console.log(`\n## 2. Throughput (${opts.turns} turns per session, ${opts.latencyMs} ms per model call, one worker process)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after; server database: ${opts.inMemory ? 'in memory' : 'SQLite file'}`);
  console.log(
    table([
      ['sessions', 'ideal turns/s', 'steady turns/s', '% of ideal', 'end-to-end turns/s', 'steady window', 'worker RSS idle→peak', 'RSS/session', 'CPU worker/server/bench', 'failed'],
      ...levels.map((l) => [
        l.sessions,
        l.idealTurnsPerS.toFixed(0),
        l.steadyTurnsPerS.toFixed(1),
        pct(l.steadyTurnsPerS / l.idealTurnsPerS),
        l.endToEndTurnsPerS.toFixed(1),
        `${l.windowS.toFixed(1)} s`,
        `${mib(l.idleRss)} → ${mib(l.peakRss)}`,
        `${((l.peakRss - l.idleRss) / l.sessions / 1024).toFixed(0)} KiB`,
        `${pct(l.cpu.worker)} / ${pct(l.cpu.server)} / ${pct(l.cpu.bench)}`,
        l.failed,
      ]),
    ]),
  );
  const at500 = levels.find((l) => l.sessions === 500);
  if (at500) {
    const r = at500.steadyTurnsPerS / at500.idealTurnsPerS;
    console.log(`target ≥ 90% of ideal at 500 sessions: ${r >= 0.9 ? 'met' : 'NOT met'} (${pct(r)})`);
  }
  console.log('CPU: share of one core over the steady window (200% = both cores).');
  return levels;
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '100,500,1000' },
      turns: { type: 'string', default: '10' },
      'latency-ms': { type: 'string', default: '1000' },
      'in-memory': { type: 'boolean', default: false },
    },
  });
  throughput({
    sessions: values.sessions.split(',').map(Number),
    turns: Number(values.turns),
    latencyMs: Number(values['latency-ms']),
    inMemory: values['in-memory'],
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
