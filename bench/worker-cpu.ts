/**
 * Benchmark 12 — CPU per turn and where it goes: `--sessions` sessions of ours, then as many bare
 * loops (bench/bare), on one dev server, each over its whole run (start-up included), read per
 * thread from /proc: the worker's main thread (activities, the SDK's task handling), its workflow
 * thread (the busiest of its other Node threads), its other Node threads (V8's garbage-collection
 * helpers, libuv's pool), Core's threads; the server process; and this process, which serves the
 * scripted provider and runs the client.
 *
 *   npx tsx bench/worker-cpu.ts [--sessions 300] [--turns 10] [--latency-ms 1000] [--reps 2]
 *
 * On two shared cores every process here competes for the same CPU, so turns/s follows the total
 * CPU a turn costs; CPU time swings less than turns/s from run to run (docs/BENCHMARKS.md#12-cpu-per-turn),
 * and says which thread to look at. Reps alternate ours and bare.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import type { bareLoop } from './bare/workflows';
import { cpuMs, load, machine, median, pool, sleep, spawnBenchWorker, startBenchStack, table, writeBundle, type BenchWorker } from './lib';
import { addLoadScenario, loadSession, tuningFor } from './throughput';

type Loop = 'ours' | 'bare';

/** CPU time (ms) of each thread of a process, by thread id, with its name (Linux). */
function threadCpu(pid: number): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, {
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100,
      });
    } catch {
      // the thread ended
    }
  }
  return out;
}

interface Split {
  main: number;
  workflowThread: number;
  otherNode: number;
  core: number;
  total: number;
}

/**
 * The worker's CPU between two readings, by thread group (ms). `total` is the process's own count,
 * which keeps the time of threads that have ended.
 */
function split(
  pid: number,
  before: Map<string, { name: string; ms: number }>,
  after: Map<string, { name: string; ms: number }>,
  total: number,
): Split {
  const s: Split = { main: 0, workflowThread: 0, otherNode: 0, core: 0, total };
  const node: number[] = [];
  for (const [tid, t] of after) {
    const ms = t.ms - (before.get(tid)?.ms ?? 0);
    if (tid === String(pid)) s.main += ms;
    else if (t.name === 'node') node.push(ms);
    else s.core += ms; // Core's tokio runtime and workflow-processing threads
  }
  node.sort((a, b) => b - a);
  s.workflowThread = node[0] ?? 0;
  s.otherNode = node.slice(1).reduce((a, b) => a + b, 0);
  return s;
}

interface Run {
  loop: Loop;
  rep: number;
  turns: number;
  wallS: number;
  worker: Split;
  server: number;
  bench: number;
}

export async function workerCpu(opts: { sessions: number; turns: number; latencyMs: number; reps: number }): Promise<Run[]> {
  const loadBefore = load();
  const arrivals: number[] = [];
  const { stack, server, model, dir } = await startBenchStack({ model: { onRequest: (r) => arrivals.push(r.at) } });
  const serverPid = server!.process.pid!;
  const bareClient = new Client({ connection: stack.clientConnection });
  const { ws } = addLoadScenario(model, dir, opts);
  const bundlePath = await writeBundle(dir);
  const runs: Run[] = [];

  async function measure(loop: Loop, rep: number, worker: BenchWorker, startAll: () => Promise<(() => Promise<unknown>)[]>): Promise<Run> {
    await worker.ready;
    await sleep(2_000);
    arrivals.length = 0;
    const w0 = threadCpu(worker.pid);
    const wTotal0 = cpuMs(worker.pid);
    const s0 = cpuMs(serverPid);
    const b0 = process.cpuUsage();
    const t0 = Date.now();
    const waits = await startAll();
    await pool(waits, 200, (wait) => wait());
    const worker1 = threadCpu(worker.pid);
    const run: Run = {
      loop,
      rep,
      // Ours: model calls the scripted provider served; bare: its model steps.
      turns: loop === 'ours' ? arrivals.length : opts.sessions * opts.turns,
      wallS: (Date.now() - t0) / 1000,
      worker: split(worker.pid, w0, worker1, cpuMs(worker.pid) - wTotal0),
      server: cpuMs(serverPid) - s0,
      bench: (() => {
        const b = process.cpuUsage(b0);
        return (b.user + b.system) / 1000;
      })(),
    };
    await worker.stop();
    console.error(
      `[worker-cpu] ${loop} rep ${rep}: ${((run.worker.total + run.server + run.bench) / run.turns).toFixed(1)} ms of CPU a turn`,
    );
    return run;
  }

  try {
    for (let rep = 1; rep <= opts.reps; rep++) {
      const tuning = tuningFor(opts.sessions);
      runs.push(
        await measure('ours', rep, spawnBenchWorker({ address: stack.address, modelUrl: model.url, bundlePath, tuning }), async () => {
          const handles = await pool(Array.from({ length: opts.sessions }), 50, () => stack.client.start(loadSession(ws)));
          return handles.map((h) => () => h.result());
        }),
      );
      const bareWorker = spawnBenchWorker({
        address: stack.address,
        script: path.join(__dirname, 'bare', 'worker-process.ts'),
        tuning,
        env: { BENCH_BARE_STARTS_FILE: path.join(dir, `bare-starts-${rep}.json`) },
      });
      runs.push(
        await measure('bare', rep, bareWorker, async () => {
          const handles = await pool(Array.from({ length: opts.sessions }), 50, (_, i) =>
            bareClient.workflow.start<typeof bareLoop>('bareLoop', {
              taskQueue: 'bare',
              workflowId: `worker-cpu-${rep}-${i}-${Date.now()}`,
              args: [opts.turns, false, opts.latencyMs],
            }),
          );
          return handles.map((h) => () => h.result());
        }),
      );
    }
  } finally {
    await stack.close();
  }

  const per = (ms: number, r: Run) => (ms / r.turns).toFixed(2);
  const totalOf = (r: Run) => (r.worker.total + r.server + r.bench) / r.turns;
  console.log(`\n${machine()}; load average before: ${loadBefore}, after: ${load()}`);
  console.log(
    `${opts.sessions} sessions × ${opts.turns} turns, model calls ${opts.latencyMs} ms; CPU per turn (ms) over each whole run, start-up included\n`,
  );
  console.log(
    table([
      [
        'loop',
        'rep',
        'turns',
        'turns/s',
        'worker',
        'main',
        'workflow thread',
        'other Node threads',
        'Core',
        'server',
        'this process',
        'total',
      ],
      ...runs.map((r) => [
        r.loop,
        r.rep,
        r.turns,
        (r.turns / r.wallS).toFixed(1),
        per(r.worker.total, r),
        per(r.worker.main, r),
        per(r.worker.workflowThread, r),
        per(r.worker.otherNode, r),
        per(r.worker.core, r),
        per(r.server, r),
        per(r.bench, r),
        totalOf(r).toFixed(2),
      ]),
    ]),
  );
  const ours = median(runs.filter((r) => r.loop === 'ours').map(totalOf));
  const bare = median(runs.filter((r) => r.loop === 'bare').map(totalOf));
  console.log(
    `\nmedian total CPU per turn: ours ${ours.toFixed(1)} ms, bare ${bare.toFixed(1)} ms; bare/ours ${(bare / ours).toFixed(2)}×`,
  );
  console.log(
    'worker: every thread of the worker process; workflow thread: the busiest Node thread after the main one; this process: the scripted provider and the client.',
  );
  return runs;
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '300' },
      turns: { type: 'string', default: '10' },
      'latency-ms': { type: 'string', default: '1000' },
      reps: { type: 'string', default: '2' },
    },
  });
  const int = (name: string, v: string, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      console.error(`--${name} must be an integer ≥ ${min}, not ${JSON.stringify(v)}`);
      process.exit(2);
    }
    return n;
  };
  workerCpu({
    sessions: int('sessions', values.sessions!, 1),
    turns: int('turns', values.turns!, 1),
    latencyMs: int('latency-ms', values['latency-ms']!, 0),
    reps: int('reps', values.reps!, 1),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
