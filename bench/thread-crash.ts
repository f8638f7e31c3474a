/**
 * Stress: the workflow-thread crash under CPU starvation (docs/ARCHITECTURE.md#workflow-thread-crash,
 * temporalio/sdk-typescript#939: "async hook stack has become corrupted").
 *
 *   npx tsx bench/thread-crash.ts [--sessions 100] [--turns 40] [--latency-ms 200] [--max-s 300]
 *     [--hogs 0] [--pause-ms 0 --pause-every-ms 15000] [--worker-nice 0]
 *     [--isolate-timeout 60s] [--reuse-v8-context true] [--threads N] [--worker-node PATH]
 *
 * Sessions of the `load` scenario (bench/throughput.ts: a Read a turn, every model call taking
 * `--latency-ms`) run on one worker process of their own while that process is starved of CPU, in
 * either of two ways:
 * - `--hogs N`: N busy loops at nice 0 beside the worker (run it at `--worker-nice 19`): a second
 *   load on the machine, as when two test suites run at once;
 * - `--pause-ms P`: every `--pause-every-ms` the worker is stopped (SIGSTOP) for P ms and continued:
 *   a process that gets no CPU at all for P ms (a starved or throttled container, a swap storm).
 *   The SDK's per-activation watchdog (`isolateExecutionTimeout`: the SDK's default is 5 s, our
 *   worker's 60 s) measures wall time, so a pause longer than it catches whatever activation was
 *   running. `--isolate-timeout 5s` runs at the SDK's default; a shorter one (with shorter pauses)
 *   compresses the same race in time.
 *
 * The script is the worker's supervisor: when the process dies it records how (exit code, signal,
 * and whether its stderr says "async hook stack has become corrupted"), starts it again after a
 * second, and goes on until every session has finished or `--max-s` has passed. It prints one
 * line of figures: crashes by kind, restarts, sessions finished, turns/s, and the activations the
 * watchdog timed out without a crash (the SDK fails those workflow tasks; the server retries them).
 *
 * By default the workers keep the SDK's promise hook recording every promise's stack;
 * `DURABLE_AGENT_FAST_WORKFLOW_STACKS=1` runs them with `src/workflows/stack-traces.ts` preloaded
 * instead (the worker option `fastWorkflowStacks`, ARCHITECTURE.md#workflow-stack-traces).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Duration } from '@temporalio/common';
import type { SessionHandle } from '../src/client/client';
import { WORKFLOW_ACTIVATION_TIMEOUT } from '../src/worker/worker';
import { fastWorkflowStacksFromEnv } from '../src/worker/bundle';
import { addLoadScenario, loadSession, tuningFor } from './throughput';
import { cpuMs, load, machine, pool, sleep, spawnBenchWorker, startBenchStack, table, writeBundle, type BenchWorker } from './lib';

/** What Node prints when a workflow thread's async-hook stack is corrupted (then the whole process exits 1). */
export const CORRUPTED_ASYNC_STACK = /async hook stack has become corrupted/;
/** What the SDK's watchdog throws when an activation outlives `isolateExecutionTimeout` and the thread survives it. */
const SCRIPT_TIMED_OUT = /Script execution timed out/g;

export interface ThreadCrashOptions {
  sessions: number;
  turns: number;
  latencyMs: number;
  maxS: number;
  hogs: number;
  pauseMs: number;
  pauseEveryMs: number;
  workerNice: number;
  isolateTimeout?: Duration;
  reuseV8Context?: boolean;
  threads?: number;
  /** Run the worker with this `node` binary (e.g. Node 24, whose AsyncLocalStorage does not use async hooks). */
  workerNode?: string;
}

export interface ThreadCrashResult {
  elapsedS: number;
  finished: number;
  failed: number;
  unfinished: number;
  turns: number;
  crashes: { corruptedAsyncStack: number; other: number };
  /** Each death: seconds into the run, exit code / signal, the kind. */
  deaths: string[];
  restarts: number;
  timedOutActivations: number;
  pauses: number;
  workerCpuS: number;
  log: string;
}

export async function threadCrash(opts: ThreadCrashOptions): Promise<ThreadCrashResult> {
  const turnsSeen: number[] = [];
  const { stack, model, dir } = await startBenchStack({ model: { onRequest: (r) => void turnsSeen.push(r.at) } });
  const log = path.join(dir, 'worker-stderr.log');
  writeFileSync(log, '');
  const hogs: ChildProcess[] = [];
  let worker: BenchWorker | undefined;
  let stopping = false;
  const deaths: string[] = [];
  const crashes = { corruptedAsyncStack: 0, other: 0 };
  let restarts = 0;
  let timedOut = 0;
  let pauses = 0;
  let workerCpuMs = 0;
  const t0 = Date.now();
  const since = () => ((Date.now() - t0) / 1000).toFixed(1);
  try {
    const bundlePath = await writeBundle(dir);
    const { ws } = addLoadScenario(model, dir, { turns: opts.turns, latencyMs: opts.latencyMs });
    const tuning = tuningFor(opts.sessions);
    tuning.workflow = {
      ...tuning.workflow,
      ...(opts.isolateTimeout ? { isolateExecutionTimeout: opts.isolateTimeout } : {}),
      ...(opts.reuseV8Context !== undefined ? { reuseV8Context: opts.reuseV8Context } : {}),
      ...(opts.threads ? { workflowThreadPoolSize: opts.threads } : {}),
    };

    let firstReady!: () => void;
    const anyReady = new Promise<void>((r) => (firstReady = r));
    /** Start the worker and keep it running: the supervisor a deployment would have. */
    const supervise = async (): Promise<void> => {
      while (!stopping) {
        const w = spawnBenchWorker({
          address: stack.address,
          modelUrl: model.url,
          bundlePath,
          tuning,
          nice: opts.workerNice,
          captureStdout: true,
          ...(opts.workerNode ? { nodePath: opts.workerNode } : {}),
        });
        worker = w;
        w.ready.then(firstReady, () => undefined);
        const { code, signal } = await w.exit;
        const err = w.stderr();
        appendFileSync(log, `--- worker ${w.pid} (exit ${code ?? signal}) at ${since()} s\n${err}`);
        timedOut += (err.match(SCRIPT_TIMED_OUT) ?? []).length;
        if (stopping) break;
        const kind = CORRUPTED_ASYNC_STACK.test(err) ? 'corruptedAsyncStack' : 'other';
        crashes[kind]++;
        deaths.push(`${since()} s: exit ${code ?? signal} (${kind})`);
        console.error(`[thread-crash] worker ${w.pid} died at ${since()} s: exit ${code ?? signal} (${kind}); restarting in 1 s`);
        await sleep(1_000);
        restarts++;
      }
    };
    const supervisor = supervise();
    await Promise.race([anyReady, sleep(120_000).then(() => Promise.reject(new Error('no worker became ready in 2 minutes')))]);

    for (let i = 0; i < opts.hogs; i++) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    const pauser = (async () => {
      if (!opts.pauseMs) return;
      while (!stopping) {
        await sleep(opts.pauseEveryMs);
        const w = worker;
        if (stopping || !w) break;
        try {
          process.kill(w.pid, 'SIGSTOP');
          pauses++;
          await sleep(opts.pauseMs);
        } finally {
          try {
            process.kill(w.pid, 'SIGCONT');
          } catch {
            // exited
          }
        }
      }
    })();

    const handles: SessionHandle[] = await pool(Array.from({ length: opts.sessions }), 20, () => stack.client.start(loadSession(ws)));
    let finished = 0;
    let failed = 0;
    const deadline = sleep(opts.maxS * 1000).then(() => 'deadline' as const);
    const progress = setInterval(() => {
      console.error(
        `[thread-crash] ${since()} s: ${finished + failed}/${opts.sessions} finished, ${crashes.corruptedAsyncStack + crashes.other} crashes, load ${load()}`,
      );
    }, 30_000);
    await Promise.race([
      deadline,
      Promise.all(
        handles.map(async (h) => {
          const r = await h.result().catch(() => undefined);
          if (r?.subtype === 'success') finished++;
          else failed++;
        }),
      ),
    ]);
    clearInterval(progress);
    const elapsedS = (Date.now() - t0) / 1000;
    stopping = true;
    for (const h of hogs) h.kill('SIGKILL');
    await pauser;
    try {
      workerCpuMs = worker ? cpuMs(worker.pid) : 0;
    } catch {
      // exited
    }
    await worker?.stop();
    await supervisor;
    return {
      elapsedS,
      finished,
      failed,
      unfinished: opts.sessions - finished - failed,
      turns: turnsSeen.length,
      crashes,
      deaths,
      restarts,
      timedOutActivations: timedOut,
      pauses,
      workerCpuS: workerCpuMs / 1000,
      log,
    };
  } finally {
    stopping = true;
    for (const h of hogs) h.kill('SIGKILL');
    await stack.close();
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '100' },
      turns: { type: 'string', default: '40' },
      'latency-ms': { type: 'string', default: '200' },
      'max-s': { type: 'string', default: '300' },
      hogs: { type: 'string', default: '0' },
      'pause-ms': { type: 'string', default: '0' },
      'pause-every-ms': { type: 'string', default: '15000' },
      'worker-nice': { type: 'string', default: '0' },
      'isolate-timeout': { type: 'string' },
      'reuse-v8-context': { type: 'string' },
      threads: { type: 'string' },
      'worker-node': { type: 'string' },
    },
  });
  const opts: ThreadCrashOptions = {
    sessions: Number(values.sessions),
    turns: Number(values.turns),
    latencyMs: Number(values['latency-ms']),
    maxS: Number(values['max-s']),
    hogs: Number(values.hogs),
    pauseMs: Number(values['pause-ms']),
    pauseEveryMs: Number(values['pause-every-ms']),
    workerNice: Number(values['worker-nice']),
    ...(values['isolate-timeout'] ? { isolateTimeout: values['isolate-timeout'] as Duration } : {}),
    ...(values['reuse-v8-context'] ? { reuseV8Context: values['reuse-v8-context'] !== 'false' } : {}),
    ...(values.threads ? { threads: Number(values.threads) } : {}),
    ...(values['worker-node'] ? { workerNode: values['worker-node'] } : {}),
  };
  const loadBefore = load();
  threadCrash(opts).then(
    (r) => {
      console.log(`\n## Workflow-thread crash under starvation`);
      console.log(
        `machine: ${machine()}; ${loadBefore} before, ${load()} after; bundle: ${fastWorkflowStacksFromEnv() ? 'with' : 'without'} stack-traces.ts (DURABLE_AGENT_FAST_WORKFLOW_STACKS)`,
      );
      console.log(
        table([
          [
            'sessions×turns',
            'worker Node',
            'starvation',
            'isolate timeout',
            'reuse V8 context',
            'threads',
            'elapsed',
            'finished/failed/unfinished',
            'turns/s',
            'crashes: corrupted async stack / other',
            'restarts',
            'timed-out activations (survived)',
            'worker CPU (last process)',
          ],
          [
            `${opts.sessions}×${opts.turns}`,
            execFileSync(opts.workerNode ?? process.execPath, ['--version'])
              .toString()
              .trim(),
            [
              opts.hogs ? `${opts.hogs} hogs, worker nice ${opts.workerNice}` : '',
              opts.pauseMs ? `${r.pauses} pauses of ${opts.pauseMs} ms every ${opts.pauseEveryMs} ms` : '',
            ]
              .filter(Boolean)
              .join('; ') || 'none',
            opts.isolateTimeout ?? `${WORKFLOW_ACTIVATION_TIMEOUT} (ours)`,
            opts.reuseV8Context === undefined ? 'default' : String(opts.reuseV8Context),
            opts.threads ?? 'default',
            `${r.elapsedS.toFixed(0)} s`,
            `${r.finished}/${r.failed}/${r.unfinished}`,
            (r.turns / r.elapsedS).toFixed(1),
            `${r.crashes.corruptedAsyncStack} / ${r.crashes.other}`,
            r.restarts,
            r.timedOutActivations,
            `${r.workerCpuS.toFixed(1)} s`,
          ],
        ]),
      );
      for (const d of r.deaths) console.log(`  death: ${d}`);
      console.log(`worker stderr: ${r.log}`);
      process.exit(0);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
