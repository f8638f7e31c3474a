/**
 * Benchmark 2 — throughput: 100, 500 and 1,000 concurrent sessions, every model call taking 1 s,
 * each on one worker process, against the bare loop (bench/bare: a 1 s model step and a no-op tool
 * step per turn) at the same concurrency on the same server: achieved turns/s, ours/bare, and the
 * worker's RSS per live session.
 *
 *   npx tsx bench/throughput.ts [--sessions 100,500,1000] [--turns 10] [--latency-ms 1000] [--address host:port [--server-metrics URL[,URL…]]] [--sticky-timeout 10s] [--reps 1] [--provider] [--fast-stacks] [--worker-nice 10]
 *
 * `--address` runs against a server already running (e.g. `durable-agent server --postgres …`);
 * without it, a dev server of our own (SQLite file in a temp dir, the defaults of
 * ARCHITECTURE.md#dev-server-throttle). The server's work per turn — requests each service
 * answered, storage operations — is read from its Prometheus endpoint (our dev server's, or
 * `--server-metrics`, one URL per node of a cluster, summed) and printed by operation, ours beside bare.
 *
 * A turn is one model call (1 s) and, for all but the last, one Read (bare: one no-op step). The
 * target is judged on the end-to-end rate: all turns ÷ first start to last finish, the time the
 * whole batch took, set-up included. Two windowed rates are printed beside it:
 * - steady: the model calls that start between the moment every session has been started and the
 *   moment the first one finishes;
 * - in-loop: from the moment every session has made its first model call to the first finish.
 * Why not a window? A started session is not yet in its loop (ours first fetches its tools and
 * settings from the tools worker, one more activity and workflow task than bare's start), and at
 * 500 sessions nearly all of both loops' sessions are still in set-up when the steady window opens
 * and hundreds still when it closes. So each window measures its own mix of set-up and loop, over
 * a different stretch of each loop's run, and the steady ratio swung from 0.56× to 1.18× within one
 * run where the end-to-end one stayed at 0.93–1.01×. The column `in set-up: window start → end`
 * counts, per loop, the sessions not yet at their first model call when the window opened and
 * when it closed (docs/BENCHMARKS.md#2-throughput). Both workers run with their
 * concurrency raised to fit (SDK defaults: 100 activity slots, 40 workflow-task slots) — see
 * tuningFor. Targets: ours ≥ 0.9 × bare at 500 and 1,000 sessions. Also counted, from a sample of
 * histories: workflow tasks that waited out the sticky timeout on a saturated worker (each is then
 * replayed from the whole history elsewhere — ARCHITECTURE.md#recovery).
 *
 * `--provider` adds a third loop at each level: the bare loop whose model step makes the same
 * streamed call to the scripted provider as ours (as bench/per-turn-overhead.ts's row), so the
 * provider's HTTP exchange, which shares these cores, is on both sides of `ours/this`.
 *
 * `--fast-stacks` adds a loop at each level, right after ours: ours again with the worker option
 * `fastWorkflowStacks` (ARCHITECTURE.md#workflow-stack-traces: no stack per promise for the SDK's
 * stack-trace query, errors not source-mapped), printed as `ours+fast-stacks` with its rate and
 * worker CPU per turn beside ours'. Ours then runs with the SDK's stacks (the default) whatever
 * DURABLE_AGENT_FAST_WORKFLOW_STACKS says; without the flag, ours follows that variable.
 *
 * `--reps N` runs each level N times, ours first on odd reps and bare first on even ones (what
 * warms up on the server is not charged to one loop), and judges the target by the median of the
 * N ratios: on a shared 2-core machine one pair can swing by a quarter either way
 * (docs/BENCHMARKS.md#2-throughput), so one run is not a verdict.
 *
 * `--worker-nice N` (default 10) runs both loops' worker processes at that niceness. Workers and
 * server share two cores here, and the server is every session's serial part (on the dev server,
 * one SQLite connection): a worker preempting it mid-write holds up every session. At equal
 * priority the ratio at 500 sessions swung from 0.72× to 1.06× between runs of the same code
 * (median 0.89×); with the workers at nice 10 ours' writes took as long as bare's and the ratio
 * held at 0.88–1.01× (median 0.97×; docs/BENCHMARKS.md#2-throughput). `--worker-nice 0`
 * measures at equal priority.
 *
 * A run prints a progress line a minute on stderr. When no session has finished for 3 minutes
 * after the first did — or on SIGUSR2 — it describes the unfinished sessions (their status on the
 * server, then `durable-agent stalled`'s report of them: what each waits on, its shard and the node
 * owning it, the queues' pollers and backlog), so a stalled run can be read before it is stopped.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { findStalledSessions, renderStalled } from '../src/client/stalled';
import type { Duration } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { SessionHandle } from '../src/client/client';
import { turn, type ScriptedModel, type TurnInput } from '../src/testing/scripted-model';
import type { SessionOptions } from '../src/shared/config';
import { diff, scrapeAll, total, type Counters } from './server-metrics';
import type { CreateWorkerOptions } from '../src/worker/worker';
import type { bareLoop } from './bare/workflows';
import type { BareProviderCall } from './bare/api';
import { fastWorkflowStacksFromEnv } from '../src/worker/bundle';
import {
  cpuMs,
  load,
  machine,
  median,
  mib,
  pool,
  rssBytes,
  sleep,
  spawnBenchWorker,
  startBenchStack,
  table,
  writeBundle,
  writesOf,
  type BenchWorker,
} from './lib';

/** Slots for every session's model call at once, a workflow cache holding every session. */
export function tuningFor(sessions: number, stickyTimeout?: Duration): NonNullable<CreateWorkerOptions['tuning']> {
  return {
    workflow: {
      // Both loops' workers: ours defaults to 10 s (src/worker/worker.ts), as does the SDK for the bare loop's.
      ...(stickyTimeout ? { stickyQueueScheduleToStartTimeout: stickyTimeout } : {}),
      maxCachedWorkflows: sessions + 100,
      maxConcurrentWorkflowTaskExecutions: 200,
      maxConcurrentWorkflowTaskPolls: 20,
    },
    model: { maxConcurrentActivityTaskExecutions: sessions + 100, maxConcurrentActivityTaskPolls: 20 },
    tools: { maxConcurrentActivityTaskExecutions: 500, maxConcurrentActivityTaskPolls: 10 },
  };
}

/**
 * The sessions' workspace (`<dir>/ws`, one small file) and the `load` scenario: `turns - 1` turns
 * that each Read that file, then a text reply, every model call taking `latencyMs`.
 */
export function addLoadScenario(
  model: ScriptedModel,
  dir: string,
  opts: { turns: number; latencyMs: number },
): { ws: string; readTurn: TurnInput } {
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  const delay = { delay_ms: opts.latencyMs };
  const readTurn = turn.tool('Read', { file_path: path.join(ws, 'notes.txt') }, delay);
  model.addScenario({ name: 'load', turns: [...Array.from({ length: opts.turns - 1 }, () => readTurn), turn.text('done', delay)] });
  return { ws, readTurn };
}

/** One session of the `load` scenario in `ws`. */
export const loadSession = (ws: string): SessionOptions => ({
  prompt: '[scenario:load] Read the notes.',
  cwd: ws,
  permissionMode: 'bypassPermissions',
});

type Loop = 'ours' | 'ours+fast-stacks' | 'bare' | 'bare+provider';
/** Model-call start times (epoch ms): every call, and each loop's first. */
interface ModelCallStarts {
  starts: number[];
  firsts: number[];
}

/** Histories read after each run to count sticky timeouts (a sample: reading 1,000 takes a while). */
const HISTORY_SAMPLE = 100;
const SCHEDULE_TO_START = temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START;

interface Run {
  loop: Loop;
  sessions: number;
  steadyTurnsPerS: number;
  /** The rate from the moment every session had made its first model call to the first finish (NaN when there is no such window). */
  inLoopTurnsPerS: number;
  inLoopWindowS: number;
  /** Sessions that had not yet made their first model call (still in set-up) when the steady window opened, and when it closed. */
  inSetUp: { atStart: number; atEnd: number };
  endToEndTurnsPerS: number;
  windowS: number;
  idleRss: number;
  peakRss: number;
  cpu: { worker: number; server: number; bench: number };
  /** The worker's CPU time over the whole run (first start to last finish) per turn done, ms. */
  workerCpuPerTurnMs: number;
  /** The dev server's write calls and bytes to disk per turn over the run (NaN for a server that is not ours). */
  serverWrites: { calls: number; bytes: number };
  failed: number;
  /** Model calls that read their prompt by query instead of taking the offer (ours only; ARCHITECTURE.md#prompt-offer). */
  promptsByQuery?: number;
  /** Workflow tasks that waited out the sticky timeout (then went to the shared queue, replayed), per session, from a sample of histories. */
  stickyTimeoutsPerSession: number;
  /** Turns done (model calls, each retried one counted once), first start to last finish. */
  turns: number;
  /** Model calls made beyond one a turn: retries, e.g. of a call whose completion came after its heartbeat timeout. */
  retriedCalls: number;
  /** The server's requests and storage operations over the run (server-metrics.ts), when its metrics are readable. */
  serverWork?: Counters;
}

interface Level {
  sessions: number;
  /** Which repetition of this level (1-based, `--reps`). */
  rep: number;
  idealTurnsPerS: number;
  ours: Run;
  /** Ours with the worker option `fastWorkflowStacks` (`--fast-stacks`). */
  oursFast?: Run;
  bare: Run;
  /** The bare loop whose model step makes the same streamed provider call as ours (`--provider`). */
  bareProvider?: Run;
}

/** No session finished for this long after the first did: the run is reported as stalled. */
const STALL_MS = 180_000;

/**
 * Progress on a long run (a line a minute), and what its unfinished sessions wait on when it
 * stalls — or on SIGUSR2 — so a stuck run can be read before anything is stopped: each one's
 * status on the server (closed there while our wait still waits means the wait is stuck, not
 * the session), then for those quiet for a minute the report of `durable-agent stalled`
 * (src/client/stalled.ts): pending workflow task and activities, shard and the node owning it,
 * and the queues they wait on (pollers, backlog).
 */
function watchRun(
  loop: Loop,
  sessions: number,
  tStart: number,
  workflows: WorkflowHandle[],
  temporalClient: Client,
): { finished(i: number): void; stop(): void } {
  const finished = new Set<number>();
  let lastFinish = 0;
  let reported = false;
  const report = async (why: string) => {
    const open = workflows.map((wf, i) => ({ wf, i })).filter(({ i }) => !finished.has(i));
    console.error(`[throughput] ${loop} ${sessions}: ${why}; ${open.length} sessions unfinished`);
    const described = await pool(open.slice(0, 20), 5, async ({ wf }) => {
      try {
        return { wf, d: await wf.describe() };
      } catch (err) {
        return { wf, err: (err as Error).message };
      }
    });
    const byStatus = new Map<string, number>();
    for (const status of described.map((x) => x.d?.status.name ?? 'describe failed')) byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    console.error(`[throughput]   status on the server of the first 20: ${[...byStatus].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    const stalled = await findStalledSessions(temporalClient, { sessionIds: open.map(({ wf }) => wf.workflowId), quietForMs: 60_000 });
    for (const line of renderStalled(stalled, 10)) console.error(`[throughput]   ${line}`);
  };
  const safeReport = (why: string) =>
    void report(why).catch((err) => console.error(`[throughput] report failed: ${(err as Error).message}`));
  const onSignal = () => safeReport('SIGUSR2');
  process.on('SIGUSR2', onSignal);
  const timer = setInterval(() => {
    const s = ((Date.now() - tStart) / 1000).toFixed(0);
    console.error(`[throughput] ${loop} ${sessions}: ${finished.size}/${sessions} finished at ${s} s`);
    if (!reported && lastFinish && Date.now() - lastFinish > STALL_MS) {
      reported = true;
      safeReport(`no session finished for ${STALL_MS / 1000} s`);
    }
  }, 60_000);
  return {
    finished: (i) => {
      finished.add(i);
      lastFinish = Date.now();
    },
    stop: () => {
      clearInterval(timer);
      process.off('SIGUSR2', onSignal);
    },
  };
}

export async function throughput(opts: {
  sessions: number[];
  turns: number;
  latencyMs: number;
  inMemory?: boolean;
  address?: string;
  /** The workers' sticky queue timeout (both loops), e.g. '30s'. */
  stickyTimeout?: Duration;
  /** Niceness of both loops' worker processes (default 10; 0 = the server's priority). */
  workerNice?: number;
  /** Runs of each level (default 1): ours first on odd reps, bare first on even ones. */
  reps?: number;
  /** The server's Prometheus endpoints (one per node), for a server given by `address`. */
  serverMetrics?: string[];
  /** Also run the bare loop with the same provider call in its model step, after bare at each level. */
  provider?: boolean;
  /** Also run ours with `fastWorkflowStacks` at each level, beside ours with the SDK's stacks. */
  fastStacks?: boolean;
}): Promise<Level[]> {
  const loadBefore = load();
  const workerNice = opts.workerNice ?? 10;
  const arrivals: number[] = [];
  /** Arrivals of sessions' first model calls (turn 0). */
  const firstArrivals: number[] = [];
  // The workers run in processes of their own (their RSS and CPU are measured), not in the stack.
  const { stack, server, model, dir } = await startBenchStack({
    inMemory: opts.inMemory,
    address: opts.address,
    model: {
      onRequest: (r) => {
        arrivals.push(r.at);
        if (r.turnIndex === 0) firstArrivals.push(r.at);
      },
    },
  });
  const serverPid = server?.process.pid;
  const metricsUrls = opts.serverMetrics ?? (server?.metricsUrl ? [server.metricsUrl] : undefined);
  const client = stack.client;
  const bareClient = new Client({ connection: stack.clientConnection });
  // Ours' workflow stacks: the SDK's beside a fast-stacks loop, else as DURABLE_AGENT_FAST_WORKFLOW_STACKS says.
  const oursFastStacks = opts.fastStacks ? false : fastWorkflowStacksFromEnv();
  const bundlePath = await writeBundle(dir, { fastWorkflowStacks: oursFastStacks });
  const fastBundlePath = opts.fastStacks ? await writeBundle(dir, { fastWorkflowStacks: true }) : undefined;
  const { ws, readTurn } = addLoadScenario(model, dir, opts);
  // The bare loop with a provider call asks for this one turn on every step: the reply a session's turn gets, as late.
  model.addScenario({ name: 'bare-call', turns: [readTurn] });

  /** Start `sessions` loops, wait for all, and measure; `starts()` gives the model-call start times. */
  async function measure(
    loop: Loop,
    sessions: number,
    worker: BenchWorker,
    startAll: () => Promise<{ waits: (() => Promise<boolean>)[]; workflows: WorkflowHandle[] }>,
    starts: () => ModelCallStarts,
  ): Promise<Run> {
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
    const cpuNow = () => ({
      worker: cpuMs(worker.pid),
      server: serverPid ? cpuMs(serverPid) : NaN,
      bench: process.cpuUsage(),
    });
    const work0 = metricsUrls ? await scrapeAll(metricsUrls) : undefined;
    const writes0 = serverPid ? writesOf(serverPid) : undefined;
    const workerCpuStart = cpuMs(worker.pid);
    const tStart = Date.now();
    const { waits, workflows } = await startAll();
    const tAllStarted = Date.now();
    const cpu0 = cpuNow();
    let tFirstDone = Infinity;
    let cpuAtFirstDone: typeof cpu0 | undefined;
    let failed = 0;
    const watch = watchRun(loop, sessions, tStart, workflows, client.client);
    try {
      await pool(waits, 200, async (wait, i) => {
        // A session whose workflow failed (e.g. a call out of attempts under load) is counted, not fatal to the run.
        if (!(await wait().catch(() => false))) failed++;
        watch.finished(i);
        if (!cpuAtFirstDone) {
          tFirstDone = Date.now();
          cpuAtFirstDone = cpuNow();
        }
      });
    } catch (e) {
      // No worker process left running behind a run that ends early.
      clearInterval(sampler);
      await worker.stop();
      throw e;
    } finally {
      watch.stop();
    }
    const tEnd = Date.now();
    const workerCpuEnd = cpuMs(worker.pid);
    const writes1 = serverPid ? writesOf(serverPid) : undefined;
    const serverWork = work0 ? diff(await scrapeAll(metricsUrls!), work0) : undefined;
    clearInterval(sampler);
    await worker.stop();
    const offers = /^prompt-offers (\{.*\})$/m.exec(worker.stderr());
    const { starts: all, firsts } = starts();
    const windowMs = tFirstDone - tAllStarted;
    const inWindow = all.filter((t) => t >= tAllStarted && t <= tFirstDone).length;
    // From the moment every loop has made its first model call: what a started workflow still
    // does before that (ours: set-up activities, the first task's module evaluation) is left out.
    const tAllInLoop = firsts.length === sessions ? Math.max(...firsts) : NaN;
    const inLoopMs = tFirstDone - tAllInLoop;
    const inLoop = all.filter((t) => t >= tAllInLoop && t <= tFirstDone).length;
    const c1 = cpuAtFirstDone!;
    // A model call retried (its completion reached the server after its heartbeat timeout) is one
    // turn that called the model twice: the end-to-end rate counts turns, and the calls made beyond
    // one a turn are shown on their own. The windows and the set-up counts see calls, so a retried
    // first call can make `in set-up` read low (clamped at 0).
    const turnsDone = Math.min(all.length, sessions * opts.turns);
    const share = (a: number, b: number) => (windowMs > 0 ? (b - a) / windowMs : NaN);
    const sample = workflows.slice(0, HISTORY_SAMPLE);
    const timeouts = await pool(
      sample,
      20,
      async (wf) =>
        ((await wf.fetchHistory()).events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes?.timeoutType === SCHEDULE_TO_START)
          .length,
    );
    const run: Run = {
      loop,
      stickyTimeoutsPerSession: timeouts.reduce((a, b) => a + b, 0) / Math.max(1, sample.length),
      sessions,
      steadyTurnsPerS: windowMs > 0 ? inWindow / (windowMs / 1000) : NaN,
      inLoopTurnsPerS: inLoopMs > 0 ? inLoop / (inLoopMs / 1000) : NaN,
      inLoopWindowS: inLoopMs / 1000,
      inSetUp: {
        atStart: Math.max(0, sessions - firsts.filter((t) => t <= tAllStarted).length),
        atEnd: Math.max(0, sessions - firsts.filter((t) => t <= tFirstDone).length),
      },
      endToEndTurnsPerS: turnsDone / ((tEnd - tStart) / 1000),
      windowS: windowMs / 1000,
      idleRss,
      peakRss,
      cpu: {
        worker: share(cpu0.worker, c1.worker),
        server: share(cpu0.server, c1.server),
        bench: share((cpu0.bench.user + cpu0.bench.system) / 1000, (c1.bench.user + c1.bench.system) / 1000),
      },
      workerCpuPerTurnMs: (workerCpuEnd - workerCpuStart) / turnsDone,
      serverWrites: {
        calls: writes0 && writes1 ? (writes1.calls - writes0.calls) / turnsDone : NaN,
        bytes: writes0 && writes1 ? (writes1.bytes - writes0.bytes) / turnsDone : NaN,
      },
      failed,
      turns: turnsDone,
      retriedCalls: all.length - turnsDone,
      ...(serverWork ? { serverWork } : {}),
      ...(offers ? { promptsByQuery: all.length - ((JSON.parse(offers[1]!) as { taken?: number }).taken ?? 0) } : {}),
    };
    console.error(
      `[throughput] ${loop} ${sessions} sessions: ${run.steadyTurnsPerS.toFixed(1)} turns/s steady, ${run.endToEndTurnsPerS.toFixed(1)} end to end`,
    );
    return run;
  }

  const levels: Level[] = [];
  try {
    for (const sessions of opts.sessions.flatMap((n) => Array.from({ length: opts.reps ?? 1 }, () => n))) {
      const rep = levels.filter((l) => l.sessions === sessions).length + 1;
      // Bare: the same concurrency, a 1 s model step and a no-op tool step per turn; with `provider`,
      // then again with the model step making ours' provider call (its 1 s is the provider's delay).
      const runBare = async (loop: Loop, provider?: BareProviderCall): Promise<Run> => {
        const startsFile = path.join(dir, `${loop}-starts-${sessions}-${rep}.json`);
        const bareWorker = spawnBenchWorker({
          address: stack.address,
          script: path.join(__dirname, 'bare', 'worker-process.ts'),
          tuning: tuningFor(sessions, opts.stickyTimeout),
          nice: workerNice,
          env: { BENCH_BARE_STARTS_FILE: startsFile },
        });
        return measure(
          loop,
          sessions,
          bareWorker,
          async () => {
            const handles = await pool(Array.from({ length: sessions }), 50, (_, i) =>
              bareClient.workflow.start<typeof bareLoop>('bareLoop', {
                taskQueue: 'bare',
                workflowId: `${loop}-${sessions}-${i}-${Date.now()}`,
                args: provider ? [opts.turns, false, 0, provider] : [opts.turns, false, opts.latencyMs],
              }),
            );
            return {
              waits: handles.map((h) => async () => (await h.result()) === opts.turns),
              workflows: handles,
            };
          },
          () => JSON.parse(readFileSync(startsFile, 'utf8')) as ModelCallStarts,
        );
      };
      // Ours: the session workflow, the scripted model (1 s per call), Read as the tool; with
      // `fastStacks`, the worker option fastWorkflowStacks and its bundle.
      const runOurs = async (fastStacks: boolean): Promise<Run> => {
        const oursWorker = spawnBenchWorker({
          address: stack.address,
          modelUrl: model.url,
          bundlePath: fastStacks ? fastBundlePath! : bundlePath,
          tuning: tuningFor(sessions, opts.stickyTimeout),
          nice: workerNice,
          env: { DURABLE_AGENT_FAST_WORKFLOW_STACKS: fastStacks || oursFastStacks ? '1' : '0' },
        });
        arrivals.length = 0;
        firstArrivals.length = 0;
        model.reset();
        return measure(
          fastStacks ? 'ours+fast-stacks' : 'ours',
          sessions,
          oursWorker,
          async () => {
            const handles: SessionHandle[] = await pool(Array.from({ length: sessions }), 50, () => client.start(loadSession(ws)));
            return {
              waits: handles.map((h) => async () => (await h.result()).subtype === 'success'),
              workflows: handles.map((h) => h.workflow),
            };
          },
          () => ({ starts: [...arrivals], firsts: [...firstArrivals] }),
        );
      };
      // Odd reps run ours first, even reps bare first: whatever warms up on the server (caches, a new
      // database's first pages) is not charged to the same loop every time (docs/BENCHMARKS.md#2-throughput).
      // With --fast-stacks, the two of ours swap order the same way.
      const bareFirst = rep % 2 === 0 ? await runBare('bare') : undefined;
      const fastFirst = opts.fastStacks && rep % 2 === 0 ? await runOurs(true) : undefined;
      const ours = await runOurs(false);
      const oursFast = fastFirst ?? (opts.fastStacks ? await runOurs(true) : undefined);
      const bare = bareFirst ?? (await runBare('bare'));
      const bareProvider = opts.provider ? await runBare('bare+provider', { baseURL: model.url, scenario: 'bare-call' }) : undefined;
      levels.push({
        sessions,
        rep,
        idealTurnsPerS: sessions / (opts.latencyMs / 1000),
        ours,
        ...(oursFast ? { oursFast } : {}),
        bare,
        ...(bareProvider ? { bareProvider } : {}),
      });
    }
  } finally {
    await stack.close();
  }

  const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : 'n/a');
  console.log(`\n## 2. Throughput (${opts.turns} turns per session, ${opts.latencyMs} ms per model call, one worker process per loop)`);
  console.log(
    `machine: ${machine()}; ${loadBefore} before, ${load()} after; server: ${opts.address ? `${opts.address} (given)` : `dev server, ${opts.inMemory ? 'in memory' : 'SQLite file'}`}; sticky timeout ${opts.stickyTimeout ?? '10s (default)'}; workers at nice ${workerNice}; ours' workflow stacks: ${oursFastStacks ? 'fastWorkflowStacks (DURABLE_AGENT_FAST_WORKFLOW_STACKS)' : "the SDK's (default)"}`,
  );
  console.log(
    table([
      [
        'sessions',
        'loop',
        'ideal turns/s',
        'end-to-end turns/s',
        '% of ideal',
        'ours/bare',
        'steady turns/s (window)',
        'steady ours/bare',
        'in set-up: window start → end',
        'in-loop turns/s (window)',
        'worker RSS idle→peak',
        'RSS/live session',
        'CPU worker/server/bench',
        'worker CPU/turn',
        'sticky timeouts/session',
        'prompts by query',
        'server requests/turn',
        'storage ops/turn',
        'server writes/turn (calls, KiB to disk)',
        'failed',
        'retried calls',
      ],
      ...levels.flatMap((l) =>
        [l.ours, ...(l.oursFast ? [l.oursFast] : []), l.bare, ...(l.bareProvider ? [l.bareProvider] : [])].map((r) => [
          (opts.reps ?? 1) > 1 ? `${l.sessions} #${l.rep}` : l.sessions,
          r.loop,
          l.idealTurnsPerS.toFixed(0),
          r.endToEndTurnsPerS.toFixed(1),
          pct(r.endToEndTurnsPerS / l.idealTurnsPerS),
          ratioCell(l, r, endToEnd),
          `${r.steadyTurnsPerS.toFixed(1)} (${r.windowS.toFixed(1)} s)`,
          ratioCell(l, r, steady),
          `${r.inSetUp.atStart} → ${r.inSetUp.atEnd}`,
          Number.isFinite(r.inLoopTurnsPerS) ? `${r.inLoopTurnsPerS.toFixed(1)} (${r.inLoopWindowS.toFixed(1)} s)` : 'n/a',
          `${mib(r.idleRss)} → ${mib(r.peakRss)}`,
          `${((r.peakRss - r.idleRss) / r.sessions / 1024).toFixed(0)} KiB`,
          `${pct(r.cpu.worker)} / ${pct(r.cpu.server)} / ${pct(r.cpu.bench)}`,
          `${r.workerCpuPerTurnMs.toFixed(1)} ms`,
          r.stickyTimeoutsPerSession.toFixed(2),
          r.promptsByQuery ?? '',
          perTurn(r, 'service_requests'),
          perTurn(r, 'persistence_requests'),
          Number.isFinite(r.serverWrites.calls) ? `${r.serverWrites.calls.toFixed(1)}, ${(r.serverWrites.bytes / 1024).toFixed(1)}` : 'n/a',
          r.failed,
          r.retriedCalls,
        ]),
      ),
    ]),
  );
  // Every rep's: what the server does per turn can drift as its database fills (docs/BENCHMARKS.md#2-throughput).
  if (metricsUrls) for (const l of levels) console.log(serverWorkTable(l, opts.reps ?? 1));
  const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
  for (const [n, ratios] of ratiosBySessions(levels, oursOverBare(endToEnd))) {
    if (n !== 500 && n !== 1000) continue;
    const r = median(ratios);
    const spread = ratios.length > 1 ? `median of ${list(ratios)}` : 'one run';
    console.log(`target ours ≥ 0.90× bare at ${n} sessions, end to end: ${r >= 0.9 ? 'met' : 'NOT met'} (${r.toFixed(2)}×, ${spread})`);
  }
  // Not the target: the windowed ratios, whose windows mix each loop's set-up into its loop (see the header).
  for (const [n, ratios] of ratiosBySessions(levels, oursOverBare(steady))) {
    console.log(`ours/bare in the steady window at ${n} sessions: ${median(ratios).toFixed(2)}× (${list(ratios)})`);
  }
  for (const [n, ratios] of ratiosBySessions(levels, oursOverBare(inLoopRate))) {
    if (ratios.every(Number.isFinite))
      console.log(`ours/bare with every session in its loop at ${n} sessions: ${median(ratios).toFixed(2)}× (${list(ratios)})`);
  }
  // Not the target: what is left of the gap once the provider's HTTP exchange, which runs on these
  // same cores (client in the worker, the scripted provider in this process), is on both sides.
  for (const [n, ratios] of ratiosBySessions(levels, (l) => (l.bareProvider ? endToEnd(l.ours) / endToEnd(l.bareProvider) : undefined))) {
    console.log(`ours / (bare + the same provider call) at ${n} sessions, end to end: ${median(ratios).toFixed(2)}× (${list(ratios)})`);
  }
  // The option's cost and gain, side by side (`--fast-stacks`).
  for (const [n, ratios] of ratiosBySessions(levels, (l) => (l.oursFast ? endToEnd(l.oursFast) / endToEnd(l.ours) : undefined))) {
    const cpu = levels
      .filter((l) => l.sessions === n && l.oursFast)
      .map((l) => `${l.ours.workerCpuPerTurnMs.toFixed(1)} → ${l.oursFast!.workerCpuPerTurnMs.toFixed(1)}`);
    console.log(
      `fastWorkflowStacks at ${n} sessions: end to end ${median(ratios).toFixed(2)}× the SDK's stacks (${list(ratios)}); worker CPU per turn ${cpu.join(', ')} ms`,
    );
  }
  console.log('CPU: share of one core over the steady window (200% = both cores); server n/a when it is not ours.');
  console.log("worker CPU/turn: the worker process's CPU time from the first start to the last finish, per turn done.");
  console.log(
    "in set-up: sessions started but not yet at their first model call when the steady window opened and when it closed; the window charges their set-up to the loop's rate.",
  );
  console.log(
    `sticky timeouts: workflow tasks per session (first ${HISTORY_SAMPLE} sessions) that waited out the worker's sticky timeout and were replayed from the shared queue.`,
  );
  console.log(
    'prompts by query: model calls that found no prompt offered in their process and read it by query (ARCHITECTURE.md#prompt-offer).',
  );
  return levels;
}

const endToEnd = (r: Run) => r.endToEndTurnsPerS;
const steady = (r: Run) => r.steadyTurnsPerS;
const inLoopRate = (r: Run) => r.inLoopTurnsPerS;
/** A level's ours/bare by `rate`. */
const oursOverBare = (rate: (r: Run) => number) => (l: Level) => rate(l.ours) / rate(l.bare);

/** Ours against bare (on ours' row) or against the bare loop with the provider call (on that row), by `rate`. */
function ratioCell(l: Level, r: Run, rate: (x: Run) => number): string {
  if (r.loop === 'ours') return `${oursOverBare(rate)(l).toFixed(2)}×`;
  if (r.loop === 'ours+fast-stacks') return `${(rate(r) / rate(l.bare)).toFixed(2)}× (ours/this ${(rate(l.ours) / rate(r)).toFixed(2)}×)`;
  if (r.loop === 'bare+provider') return `(ours/this ${(rate(l.ours) / rate(r)).toFixed(2)}×)`;
  return '';
}

/** `ratioOf` of every level (its reps), grouped by session count in the order run; levels it gives no ratio for are left out. */
function ratiosBySessions(levels: Level[], ratioOf: (l: Level) => number | undefined): [number, number[]][] {
  const out = new Map<number, number[]>();
  for (const l of levels) {
    const r = ratioOf(l);
    if (r !== undefined) out.set(l.sessions, [...(out.get(l.sessions) ?? []), r]);
  }
  return [...out];
}

function perTurn(r: Run, metric: string): string {
  return r.serverWork ? (total(r.serverWork, metric) / r.turns).toFixed(1) : 'n/a';
}

/** The server's work per turn by operation at the largest level, ours beside bare: the operations where the two differ most first. */
function serverWorkTable(l: Level, reps: number): string {
  const ours = l.ours.serverWork ?? new Map<string, number>();
  const bare = l.bare.serverWork ?? new Map<string, number>();
  const rows = [...new Set([...ours.keys(), ...bare.keys()])]
    .map((k) => ({ k, o: (ours.get(k) ?? 0) / l.ours.turns, b: (bare.get(k) ?? 0) / l.bare.turns }))
    .filter((r) => Math.max(r.o, r.b) >= 0.05)
    .sort((x, y) => Math.abs(y.o - y.b) - Math.abs(x.o - x.b) || y.o - x.o)
    .slice(0, 30);
  // The dev server runs every storage operation on one SQLite connection: their summed time per
  // turn is roughly the serial part of a turn (an operation's time includes its wait for it).
  const storageMs = (r: Run) => {
    const work = r.serverWork ?? new Map<string, number>();
    return (total(work, 'persistence_ms') + total(work, 'visibility_persistence_ms')) / r.turns;
  };
  return [
    `\nserver work per turn at ${l.sessions} sessions${reps > 1 ? ` (rep ${l.rep})` : ''}, by operation (service_requests: calls a service answered; persistence_requests: storage operations):`,
    `storage time per turn (all operations): ours ${storageMs(l.ours).toFixed(1)} ms, bare ${storageMs(l.bare).toFixed(1)} ms`,
    table([
      ['metric', 'service', 'operation', 'ours/turn', 'bare/turn'],
      ...rows.map((r) => [...r.k.split('|'), r.o.toFixed(2), r.b.toFixed(2)]),
    ]),
  ].join('\n');
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '100,500,1000' },
      turns: { type: 'string', default: '10' },
      'latency-ms': { type: 'string', default: '1000' },
      'in-memory': { type: 'boolean', default: false },
      address: { type: 'string' },
      'sticky-timeout': { type: 'string' },
      'worker-nice': { type: 'string', default: '10' },
      'server-metrics': { type: 'string' },
      reps: { type: 'string', default: '1' },
      provider: { type: 'boolean', default: false },
      'fast-stacks': { type: 'boolean', default: false },
    },
  });
  const reps = Number(values.reps);
  if (!Number.isInteger(reps) || reps < 1) {
    console.error(`--reps must be a whole number ≥ 1, got '${values.reps}'`);
    process.exit(2);
  }
  const workerNice = Number(values['worker-nice']);
  if (!Number.isInteger(workerNice) || workerNice < 0 || workerNice > 19) {
    console.error(`--worker-nice must be a whole number from 0 to 19, got '${values['worker-nice']}'`);
    process.exit(2);
  }
  throughput({
    sessions: values.sessions.split(',').map(Number),
    turns: Number(values.turns),
    latencyMs: Number(values['latency-ms']),
    inMemory: values['in-memory'],
    reps,
    provider: values.provider,
    fastStacks: values['fast-stacks'],
    ...(values.address ? { address: values.address } : {}),
    ...(values['server-metrics'] ? { serverMetrics: values['server-metrics'].split(',') } : {}),
    ...(values['sticky-timeout'] ? { stickyTimeout: values['sticky-timeout'] as Duration } : {}),
    workerNice,
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
