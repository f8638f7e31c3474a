/**
 * Shared by the benchmarks: the stack on a dev server of their own (SQLite in a temp dir, as
 * `durable-agent server` runs it), history timestamps, /proc readings, and plain-text output.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { bundleSessionWorkflows, fastWorkflowStacksFromEnv } from '../src/worker/bundle';
import { bundleWithoutPreload, quietBundlerLogger } from '../src/testing/workflow-modules';
import type { CreateWorkerOptions } from '../src/worker/worker';
import type { DevServer, DevServerOptions } from '../src/server/dev-server';
import type { ScriptedModel, ScriptedModelOptions } from '../src/testing/scripted-model';
import { quietSdkLogs, startStack, type Stack, type StackOptions } from '../src/testing/stack';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Keep the SDK's INFO lines (worker state changes) out of the figures. */
export const quietRuntime = (): void => quietSdkLogs('ERROR');

/**
 * The benchmarks' stack (src/testing/stack.ts) on a dev server of its own — SQLite in a temp dir
 * (or in memory), one task-queue partition — and the scripted model without request bodies.
 * The stack's in-process worker runs only if `worker` is given.
 */
export async function startBenchStack(
  opts: {
    inMemory?: boolean;
    worker?: StackOptions['worker'];
    model?: Partial<ScriptedModelOptions>;
    taskQueue?: string;
    dynamicConfig?: DevServerOptions['dynamicConfig'];
    /** A running server (`host:port`, e.g. \`durable-agent server --postgres\`) instead of a dev server of our own. */
    address?: string;
  } = {},
): Promise<{ stack: Stack; server: DevServer | undefined; model: ScriptedModel; dir: string }> {
  quietRuntime();
  const dir = mkdtempSync(path.join(tmpdir(), 'da-bench-'));
  const stack = await startStack({
    ...(opts.address ? { address: opts.address } : {}),
    devServer: {
      dbFile: opts.inMemory ? ':memory:' : path.join(dir, 'temporal.db'),
      ui: false,
      metricsPort: 0,
      startTimeoutMs: 120_000,
      dynamicConfig: { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1, ...opts.dynamicConfig },
    },
    model: { scripted: { keepMessages: false, ...opts.model } },
    worker: opts.worker ?? false,
    ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}),
  });
  return { stack, server: stack.server, model: stack.model!, dir };
}

export function eventMs(e: HistoryEvent): number {
  return Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
}

/** Times (ms) at which activities of `type` were scheduled, in history order. */
export function scheduledTimes(events: HistoryEvent[], type: string): number[] {
  return events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).map(eventMs);
}

/** Started → completed of each activity of `type` (its execution on the worker, as the server saw it). */
export function runTimes(events: HistoryEvent[], type: string): number[] {
  const ids = new Set(
    events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).map((e) => String(e.eventId)),
  );
  const started = new Map<string, number>();
  const out: number[] = [];
  for (const e of events) {
    const s = e.activityTaskStartedEventAttributes;
    if (s && ids.has(String(s.scheduledEventId))) started.set(String(s.scheduledEventId), eventMs(e));
    const c = e.activityTaskCompletedEventAttributes;
    if (c && started.has(String(c.scheduledEventId))) out.push(eventMs(e) - started.get(String(c.scheduledEventId))!);
  }
  return out;
}

/** Scheduled → started of every activity and workflow task: how long tasks wait to be dispatched. */
export function dispatchWaits(events: HistoryEvent[]): number[] {
  const scheduled = new Map<string, number>();
  const out: number[] = [];
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes || e.workflowTaskScheduledEventAttributes) scheduled.set(String(e.eventId), eventMs(e));
    const id = e.activityTaskStartedEventAttributes?.scheduledEventId ?? e.workflowTaskStartedEventAttributes?.scheduledEventId;
    if (id !== undefined && id !== null && scheduled.has(String(id))) out.push(eventMs(e) - scheduled.get(String(id))!);
  }
  return out;
}

/** Started → completed of every workflow task: the worker's time to run one activation and answer. */
export function workflowTaskRunTimes(events: HistoryEvent[]): number[] {
  const started = new Map<string, number>();
  const out: number[] = [];
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) started.set(String(e.eventId), eventMs(e));
    const id = e.workflowTaskCompletedEventAttributes?.startedEventId;
    if (id !== undefined && id !== null && started.has(String(id))) out.push(eventMs(e) - started.get(String(id))!);
  }
  return out;
}

export function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

/** The middle value; for an even count, the mean of the two middle ones. */
export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

/** Resident set size of a process, in bytes (Linux). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** CPU time (user + system) a process has used so far, in ms (Linux). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** A process's write calls (to files and sockets) and the bytes it sent to storage so far (`/proc/PID/io`: syscw, write_bytes). */
export function writesOf(pid: number): { calls: number; bytes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return { calls: field('syscw'), bytes: field('write_bytes') };
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

/** The 1-minute load average: figures taken on a busy machine say so. */
export function load(): string {
  return `load average ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores`;
}

export const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : 'n/a');
export const mib = (x: number): string => `${(x / 2 ** 20).toFixed(1)} MiB`;

export function table(rows: (string | number)[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows
    .map((r) =>
      r
        .map((v, c) => String(v).padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));

export { pool } from '../src/client/pool';

/**
 * The session workflow bundled once into `dir`, for worker processes (DURABLE_AGENT_WORKFLOW_BUNDLE).
 * `fastWorkflowStacks` (default DURABLE_AGENT_FAST_WORKFLOW_STACKS, which the worker processes
 * inherit and check the bundle against) preloads `stack-traces.ts`, so the SDK's promise hook
 * records no stacks (ARCHITECTURE.md#workflow-stack-traces); a worker given this bundle needs
 * the same setting. `BENCH_PLAIN_BUNDLE=1` builds it without any preload (neither the shared
 * libraries, ARCHITECTURE.md#shared-libraries, nor the stack-trace patches), to compare a run with
 * the shared libraries against one without.
 */
export async function writeBundle(dir: string, opts: { fastWorkflowStacks?: boolean } = {}): Promise<string> {
  const fastWorkflowStacks = opts.fastWorkflowStacks ?? fastWorkflowStacksFromEnv();
  const { code } = process.env.BENCH_PLAIN_BUNDLE
    ? await bundleWithoutPreload()
    : await bundleSessionWorkflows({ fastWorkflowStacks, logger: quietBundlerLogger });
  const file = path.join(dir, fastWorkflowStacks ? 'workflow-bundle-fast-stacks.js' : 'workflow-bundle.js');
  writeFileSync(file, code);
  return file;
}

export interface BenchWorker {
  pid: number;
  ready: Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** All it wrote on stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited, however it ended. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `tuning` with BENCH_WORKFLOW_TUNING (JSON, e.g. `{"reuseV8Context":false}` or
 * `{"isolateExecutionTimeout":"60s"}`) over its workflow part: an SDK setting compared side by
 * side on every loop's worker of a benchmark, without a flag of its own.
 */
function withWorkflowTuningFromEnv(tuning: NonNullable<CreateWorkerOptions['tuning']>): NonNullable<CreateWorkerOptions['tuning']> {
  const extra = process.env.BENCH_WORKFLOW_TUNING;
  return extra ? { ...tuning, workflow: { ...tuning.workflow, ...(JSON.parse(extra) as object) } } : tuning;
}

/**
 * bench/worker-process.ts (or `script`, e.g. the bare loop's) in its own process, so its RSS and CPU are its own.
 * BENCH_WORKER_NODE runs it with another `node` binary (every loop's worker alike).
 */
export function spawnBenchWorker(opts: {
  address: string;
  modelUrl?: string;
  bundlePath?: string;
  tuning?: CreateWorkerOptions['tuning'];
  script?: string;
  env?: NodeJS.ProcessEnv;
  /** Run the worker at this niceness (`nice -n`, every thread of it): above 0 it yields the CPU to a server on the same machine. */
  nice?: number;
  /** Keep its stdout with its stderr (`stderr()`) instead of passing it through. */
  captureStdout?: boolean;
  /** The `node` binary to run it with (default: this process's). */
  nodePath?: string;
}): BenchWorker {
  // BENCH_PROF=DIR: each worker process writes a CPU profile per thread there (the workflow threads included).
  const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const node = [
    opts.nodePath ?? process.env.BENCH_WORKER_NODE ?? process.execPath,
    ...profile,
    '--require',
    'tsx/cjs',
    opts.script ?? path.join(__dirname, 'worker-process.ts'),
  ];
  // `nice` execs node in place, so the pid is the worker's and every thread it starts inherits the niceness.
  const [command, ...args] = opts.nice ? ['nice', '-n', String(opts.nice), ...node] : node;
  const child = spawn(command!, args, {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address,
      ...(opts.modelUrl ? { OPENAI_BASE_URL: opts.modelUrl, OPENAI_API_KEY: 'bench' } : {}),
      ...(opts.bundlePath ? { DURABLE_AGENT_WORKFLOW_BUNDLE: opts.bundlePath } : {}),
      BENCH_WORKER_TUNING: JSON.stringify(withWorkflowTuningFromEnv(opts.tuning ?? {})),
      ...opts.env,
    },
    stdio: ['ignore', opts.captureStdout ? 'pipe' : 'inherit', 'pipe'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const exited = exit.then(() => undefined);
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      out += b.toString();
      if (/^ready$/m.test(out)) resolve();
    });
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
    });
    void exited.then(() => reject(new Error(`bench worker exited before it was ready:\n${out}`)));
  });
  ready.catch(() => undefined);
  return {
    pid: child.pid!,
    ready,
    exit,
    stderr: () => out,
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
