/**
 * Kill harness: real `durable-agent worker` processes against a dev server of our own (SQLite
 * file in a temp dir), SIGKILLed at chosen points — mid model stream, mid Bash command, between
 * turns — and a dev server that can be killed and restarted on the same file.
 *
 * Each worker slot may get its own scripted model server (same scenarios), so a model request
 * tells us which worker process is making it; a running Bash command is found as a child process
 * of its worker (`/proc`). Nothing is mocked: the workers are `node bin/durable-agent.js worker`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DurableAgentClient, type SessionHandle } from '../../src/client/client';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { BASH_INTERRUPTED_MESSAGE } from '../../src/activities/tools/bash';
import { startScriptedModel, type ScenarioInput, type ScriptedModel } from '../../src/testing/scripted-model';
import type { ResultMessage } from '../../src/shared/events';
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from '../../src/shared/messages';
import { TEST_DYNAMIC_CONFIG } from '../global-setup';
import { workflowBundle } from './harness';
import { perFile } from './per-file';
import { waitFor } from './wait';
import { connectTemporal } from '../../src/server/connection';

export const REPO_ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(REPO_ROOT, 'bin', 'durable-agent.js');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The workflow bundle written to `dir` once, for DURABLE_AGENT_WORKFLOW_BUNDLE. */
export async function writeWorkflowBundle(dir: string): Promise<string> {
  const file = path.join(dir, 'workflow-bundle.js');
  if (!existsSync(file)) writeFileSync(file, (await workflowBundle()).code);
  return file;
}

// ---------------------------------------------------------------------------------------------
// The dev server, restartable on the same SQLite file and port.

export interface ChaosServer {
  readonly address: string;
  readonly dbFile: string;
  /** How many times the server was (re)started. */
  readonly starts: number;
  /** SIGKILL (or, with `graceful`, SIGTERM) the server and start it again on the same file and port. */
  restart(opts?: { graceful?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export async function startChaosServer(dir: string): Promise<ChaosServer> {
  const dbFile = path.join(dir, 'temporal.db');
  const tail: string[] = [];
  const start = (port?: number) =>
    startDevServer({
      port,
      dbFile,
      ui: false,
      dynamicConfig: TEST_DYNAMIC_CONFIG,
      startTimeoutMs: 90_000,
      log: (line) => {
        tail.push(line);
        if (tail.length > 100) tail.shift();
      },
    });
  let server: DevServer = await start();
  let starts = 1;
  return {
    address: server.address,
    dbFile,
    get starts() {
      return starts;
    },
    async restart({ graceful = false, downMs = 0 } = {}) {
      if (!graceful) server.process.kill('SIGKILL');
      await server.stop();
      await sleep(downMs);
      // The same port: workers and clients keep their address and reconnect by themselves.
      server = await start(server.port);
      starts++;
    },
    stop: () => server.stop(),
  };
}

// ---------------------------------------------------------------------------------------------
// Worker processes.

export type Role = 'workflow' | 'model' | 'tools';

export interface WorkerProcessOptions {
  address: string;
  modelUrl: string;
  bundlePath: string;
  name: string;
  roles?: Role[];
  /** Run this script (through tsx) instead of `durable-agent worker`; it must log the same "…; ready" line. */
  script?: string;
  /** Set last: e.g. DURABLE_AGENT_TASK_QUEUE for another harness's queues, or the sandbox variables. */
  env?: NodeJS.ProcessEnv;
  /** A command the worker runs under, e.g. `unshare …` for a host of its own; it must exec its arguments. */
  prefix?: string[];
}

export interface WorkerProcess {
  readonly name: string;
  readonly pid: number;
  readonly roles: Role[];
  /** Resolves once the worker says it is polling; rejects if it exits first. */
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly alive: boolean;
  /** Whether the process ended without kill()/stop() being asked for. */
  readonly crashed: boolean;
  /** SIGKILL; resolves once the process is gone. Its Bash children (own process groups) live on. */
  kill(): Promise<void>;
  /** SIGTERM (graceful shutdown); resolves once the process is gone. */
  stop(): Promise<void>;
  /** The last lines it wrote to stdout/stderr. */
  output(): string;
}

/**
 * A tools worker acting as a host of its own on this machine (ARCHITECTURE.md#checkpoints): in its
 * own mount and UTS namespaces, with `dir` bound at the workspaces root `root` (the same path on
 * every such host) and `name` as its host name, so its host queue is its own. Needs root.
 */
export function spawnToolsHost(opts: {
  address: string;
  modelUrl: string;
  taskQueue: string;
  name: string;
  dir: string;
  root: string;
  env?: NodeJS.ProcessEnv;
}): WorkerProcess {
  return spawnWorker({
    address: opts.address,
    modelUrl: opts.modelUrl,
    bundlePath: '',
    name: opts.name,
    roles: ['tools'],
    prefix: [
      'unshare',
      '--mount',
      '--uts',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$1" "$2" && hostname "$3" && shift 3 && exec "$@"',
      'sh',
      opts.dir,
      opts.root,
      opts.name,
    ],
    env: {
      DURABLE_AGENT_TASK_QUEUE: opts.taskQueue,
      DURABLE_AGENT_WORKSPACES: opts.root,
      DURABLE_AGENT_SANDBOX: 'off',
      ...opts.env,
    },
  });
}

export function spawnWorker(opts: WorkerProcessOptions): WorkerProcess {
  const roles = opts.roles ?? ['workflow', 'model', 'tools'];
  const args = opts.script ? ['--require', 'tsx/cjs', opts.script] : [CLI, 'worker', ...(opts.roles ? ['--roles', roles.join(',')] : [])];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: opts.address,
    OPENAI_BASE_URL: opts.modelUrl,
    OPENAI_API_KEY: 'chaos-test-key',
    DURABLE_AGENT_WORKFLOW_BUNDLE: opts.bundlePath,
  };
  // The default queues, whatever the parent process may have chosen.
  delete env.DURABLE_AGENT_TASK_QUEUE;
  delete env.DURABLE_AGENT_TOOLS_TASK_QUEUE;
  delete env.TEMPORAL_NAMESPACE;
  Object.assign(env, opts.env);
  const [file, ...pre] = opts.prefix ?? [];
  const child: ChildProcess = file
    ? spawn(file, [...pre, process.execPath, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let markReady: () => void = () => undefined;
  let alive = true;
  let asked = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      alive = false;
      resolve({ code, signal });
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    void exited.then(({ code, signal }) =>
      reject(new Error(`worker ${opts.name} exited before it was ready (${signal ?? `code ${code}`}):\n${lines.join('\n')}`)),
    );
  });
  ready.catch(() => undefined); // observed by whoever awaits it
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (buf: Buffer) => {
      const parts = (partial + buf.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > 200) lines.shift();
        if (/\] connected to .*; ready$/.test(line)) markReady();
      }
    });
  }
  const end = async (signal: NodeJS.Signals) => {
    asked = true;
    if (alive) child.kill(signal);
    await exited;
  };
  return {
    name: opts.name,
    pid: child.pid!,
    roles,
    ready,
    exited,
    get alive() {
      return alive;
    },
    get crashed() {
      return !alive && !asked;
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    output: () => lines.join('\n'),
  };
}

/** Live processes whose parent is `pid` (a worker's running Bash commands). Linux /proc. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid …" — comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(entry));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// A cluster: one server, N worker slots, the scripted model(s), a client, and the kill points.

export interface Slot {
  readonly index: number;
  /** The scripted model this slot's workers call (shared by all slots with `sharedModel`). */
  readonly model: ScriptedModel;
  worker: WorkerProcess | undefined;
  roles?: Role[];
}

export interface KillRecord {
  at: number;
  slot: number;
  pid: number;
  point: 'mid-stream' | 'mid-bash' | 'between-turns' | 'any';
  /** For mid-stream: the scenario and turn whose stream was cut. */
  detail?: string;
}

export interface Cluster {
  readonly server: ChaosServer;
  readonly client: DurableAgentClient;
  readonly slots: Slot[];
  readonly dir: string;
  readonly kills: KillRecord[];
  /** Workers that died without being killed by us (a crash is a finding, not noise). */
  readonly crashes: { slot: number; pid: number; output: string }[];
  addScenario(s: ScenarioInput | ScenarioInput[]): void;
  /** Start a worker process in `slot` (killing nothing); resolves when it polls. `env` is set
   *  last (e.g. TEMPORAL_ADDRESS of a proxy in front of the server). */
  spawn(slot: number, roles?: Role[], env?: NodeJS.ProcessEnv): Promise<WorkerProcess>;
  kill(slot: number, point?: KillRecord['point'], detail?: string): Promise<void>;
  /**
   * Wait for a model request (optionally of `scenario`), let its stream run `afterMs`, then
   * SIGKILL the worker making it. With `minChunks`, wait instead until that many chunks were sent
   * (the stream has started, at a point of the test's choosing). Returns the slot killed.
   */
  killMidStream(opts?: {
    scenario?: string;
    turnIndex?: number;
    afterMs?: number;
    minChunks?: number;
    timeoutMs?: number;
  }): Promise<number>;
  /**
   * Wait until some worker has a Bash command running, then (after `afterMs`, default at once)
   * SIGKILL that worker. Returns the slot killed.
   */
  killMidBash(opts?: { timeoutMs?: number; slots?: number[]; afterMs?: number }): Promise<number>;
  /**
   * A kill at a chosen point: wait until every file in `markers` exists (written by the tool
   * itself, e.g. a Bash command's first step), then SIGKILL the worker in `slot`.
   */
  killAtMarkers(slot: number, markers: string[], point: KillRecord['point'], timeoutMs?: number): Promise<void>;
  /** SIGKILL the process groups of Bash commands orphaned by kills, so none completes later. */
  endOrphans(): void;
  /** Every slot with a live worker. */
  liveSlots(): number[];
  close(): Promise<void>;
}

export interface ClusterOptions {
  slots: number;
  /** One scripted model for all slots (fault attempts counted across workers) instead of one each. */
  sharedModel?: boolean;
  /** Dir for the database, the bundle and workspaces; a fresh temp dir by default. */
  dir?: string;
}

/**
 * One cluster for the test file: started in `beforeAll` (then `setup`, e.g. spawning workers),
 * closed in `afterAll`. The returned object stands for it from the first test on.
 */
export function useCluster(opts: ClusterOptions, setup?: (c: Cluster) => Promise<unknown>): Cluster {
  return perFile(
    'cluster',
    async () => {
      const c = await startCluster(opts);
      await setup?.(c);
      return c;
    },
    (c) => c.close(),
    180_000,
  );
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dir = opts.dir ?? mkdtempSync(path.join(tmpdir(), 'da-chaos-'));
  const [server, bundlePath] = await Promise.all([startChaosServer(dir), writeWorkflowBundle(dir)]);
  const shared = opts.sharedModel ? await startScriptedModel({ scenarios: [] }) : undefined;
  const slots: Slot[] = [];
  for (let i = 0; i < opts.slots; i++) {
    slots.push({ index: i, model: shared ?? (await startScriptedModel({ scenarios: [] })), worker: undefined });
  }
  const models = [...new Set(slots.map((s) => s.model))];
  const connection = await connectTemporal({ address: server.address });
  const client = await DurableAgentClient.connect({ connection });
  const kills: KillRecord[] = [];
  const crashes: Cluster['crashes'] = [];
  const everSpawned: WorkerProcess[] = [];
  const orphans = new Set<number>();

  const watch = (slot: Slot, w: WorkerProcess) => {
    void w.exited.then(() => {
      if (w.crashed) crashes.push({ slot: slot.index, pid: w.pid, output: w.output() });
    });
  };

  const cluster: Cluster = {
    server,
    client,
    slots,
    dir,
    kills,
    crashes,
    addScenario(s) {
      for (const m of models) m.addScenario(s);
    },
    async spawn(index, roles, env) {
      const slot = slots[index]!;
      if (slot.worker?.alive) throw new Error(`slot ${index} already has a live worker (pid ${slot.worker.pid})`);
      slot.roles = roles ?? slot.roles;
      const w = spawnWorker({
        address: server.address,
        modelUrl: slot.model.url,
        bundlePath,
        name: `w${index}`,
        roles: slot.roles,
        env,
      });
      everSpawned.push(w);
      slot.worker = w;
      watch(slot, w);
      await w.ready;
      return w;
    },
    async kill(index, point = 'any', detail) {
      const w = slots[index]!.worker;
      if (!w?.alive) throw new Error(`slot ${index} has no live worker to kill`);
      for (const c of childrenOf(w.pid)) orphans.add(c);
      kills.push({ at: Date.now(), slot: index, pid: w.pid, point, ...(detail ? { detail } : {}) });
      await w.kill();
    },
    async killMidStream({ scenario, turnIndex, afterMs = 200, minChunks, timeoutMs = 60_000 } = {}) {
      if (shared) throw new Error('killMidStream needs one scripted model per slot (sharedModel: false)');
      const since = Date.now();
      const hit = await waitFor(
        'a model request to kill mid-stream',
        () => {
          for (const slot of slots) {
            if (!slot.worker?.alive || !slot.worker.roles.includes('model')) continue;
            const r = slot.model.requests.find(
              (q) =>
                q.at >= since &&
                q.status === 200 &&
                (minChunks === undefined || (q.chunksSent ?? 0) >= minChunks) &&
                (scenario === undefined || q.scenario === scenario) &&
                (turnIndex === undefined || q.turnIndex === turnIndex),
            );
            if (r) return { slot: slot.index, detail: `${r.scenario}#${r.turnIndex}` };
          }
          return undefined;
        },
        { timeoutMs, everyMs: 10 },
      );
      if (minChunks === undefined) await sleep(afterMs);
      if (!slots[hit.slot]!.worker?.alive) return hit.slot;
      await cluster.kill(hit.slot, 'mid-stream', hit.detail);
      return hit.slot;
    },
    async killMidBash({ timeoutMs = 60_000, slots: only, afterMs = 0 } = {}) {
      const slot = await waitFor(
        'a worker running a Bash command',
        () =>
          slots.find((s) => (only === undefined || only.includes(s.index)) && s.worker?.alive && childrenOf(s.worker.pid).length > 0)
            ?.index,
        { timeoutMs, everyMs: 2 },
      );
      if (afterMs > 0) await sleep(afterMs);
      await cluster.kill(slot, 'mid-bash');
      return slot;
    },
    async killAtMarkers(index, markers, point, timeoutMs = 60_000) {
      await waitFor(`${markers.length} start marker(s) (${markers[0]}, …)`, () => markers.every((m) => existsSync(m)), {
        timeoutMs,
        everyMs: 5,
      });
      await cluster.kill(index, point);
    },
    endOrphans() {
      for (const pid of orphans) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already finished
        }
      }
    },
    liveSlots: () => slots.filter((s) => s.worker?.alive).map((s) => s.index),
    async close() {
      await Promise.all(everSpawned.map((w) => w.kill()));
      // Bash commands orphaned by a SIGKILL run in their own process groups: end any still there.
      cluster.endOrphans();
      await connection.close().catch(() => undefined);
      await Promise.all(models.map((m) => m.close()));
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

// ---------------------------------------------------------------------------------------------
// Waiting through server restarts, and comparing transcripts.

/** The session's result, retrying while the server is unreachable (it may be restarting). */
export async function resultThroughRestarts(handle: SessionHandle, timeoutMs: number): Promise<ResultMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await handle.result();
    } catch (e) {
      if (!isUnavailable(e) || Date.now() > deadline) throw e;
      await sleep(500);
    }
  }
}

/** The transcript query, retried while the server is unreachable. */
export async function transcriptThroughRestarts(handle: SessionHandle, timeoutMs = 60_000): Promise<Message[]> {
  return waitFor(`the transcript of ${handle.sessionId}`, () => handle.transcript(), { timeoutMs, everyMs: 500, ignoreErrors: true });
}

function isUnavailable(e: unknown): boolean {
  const text = `${(e as Error)?.message ?? ''} ${String((e as { cause?: unknown })?.cause ?? '')}`;
  return /UNAVAILABLE|ECONNREFUSED|Connection dropped|No connection established|DEADLINE_EXCEEDED|14 /i.test(text);
}

export interface TranscriptComparison {
  /** tool_use ids whose result says the Bash command's effects are unknown (ARCHITECTURE.md#side-effects-reported-as-unknown) where the
   *  fault-free run has the command's real output. */
  unknownOutcome: string[];
  /** Every other difference, described. */
  mismatches: string[];
}

/**
 * Compare a transcript from a run with faults against the same scenario's fault-free run.
 * Nothing is normalised: the only accepted difference is a Bash result replaced by the
 * "effects are unknown" report, which is what ARCHITECTURE.md#side-effects-reported-as-unknown promises instead of running it twice.
 */
export function compareTranscripts(faultFree: Message[], faulty: Message[]): TranscriptComparison {
  const unknownOutcome: string[] = [];
  const mismatches: string[] = [];
  const toolUses = new Map<string, ToolUseBlock>();
  const n = Math.max(faultFree.length, faulty.length);
  for (let i = 0; i < n; i++) {
    const a = faultFree[i];
    const b = faulty[i];
    if (!a || !b) {
      mismatches.push(
        `message ${i}: ${a ? 'missing in the faulty run' : 'extra in the faulty run'}: ${JSON.stringify(a ?? b).slice(0, 200)}`,
      );
      continue;
    }
    if (a.role !== b.role || typeof a.content !== typeof b.content || !Array.isArray(a.content) || !Array.isArray(b.content)) {
      if (JSON.stringify(a) !== JSON.stringify(b))
        mismatches.push(`message ${i}: ${JSON.stringify(b).slice(0, 300)} ≠ ${JSON.stringify(a).slice(0, 300)}`);
      continue;
    }
    const blocksA = a.content as ContentBlock[];
    const blocksB = b.content as ContentBlock[];
    if (blocksA.length !== blocksB.length) {
      mismatches.push(`message ${i}: ${blocksB.length} blocks ≠ ${blocksA.length}`);
      continue;
    }
    blocksA.forEach((blockA, j) => {
      const blockB = blocksB[j]!;
      if (blockA.type === 'tool_use') toolUses.set(blockA.id, blockA);
      if (JSON.stringify(blockA) === JSON.stringify(blockB)) return;
      if (
        blockA.type === 'tool_result' &&
        blockB.type === 'tool_result' &&
        blockA.tool_use_id === blockB.tool_use_id &&
        toolUses.get(blockA.tool_use_id)?.name === 'Bash' &&
        isUnknownOutcome(blockB)
      ) {
        unknownOutcome.push(blockA.tool_use_id);
        return;
      }
      mismatches.push(`message ${i} block ${j}: ${JSON.stringify(blockB).slice(0, 300)} ≠ ${JSON.stringify(blockA).slice(0, 300)}`);
    });
  }
  return { unknownOutcome, mismatches };
}

export function isUnknownOutcome(block: ToolResultBlock): boolean {
  return block.is_error === true && block.content === BASH_INTERRUPTED_MESSAGE;
}

/** Every tool result in a transcript, by tool_use id. */
export function toolResultsById(transcript: Message[]): Map<string, ToolResultBlock> {
  const out = new Map<string, ToolResultBlock>();
  for (const m of transcript) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as ContentBlock[]) if (b.type === 'tool_result') out.set(b.tool_use_id, b);
  }
  return out;
}
