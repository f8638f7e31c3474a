/**
 * Launcher for the Temporal dev server (`temporal server start-dev`, embedded in the Temporal
 * CLI): used by the jest global setup, the demo, and `durable-agent server`.
 *
 * It binds to 127.0.0.1, registers our search attributes at startup, and resolves only once the
 * frontend answers and those attributes are visible, so callers can start workers at once.
 *
 * Past 300 lines: the launcher and its CLI entry (`durable-agent server`: arguments, port checks,
 * shutdown) stay together because they share the start-up and readiness logic.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { Connection } from '@temporalio/client';
import { ensureTemporal } from './ensure-temporal';
import { connectTemporal } from './connection';

/** Custom search attributes every session workflow may set, with their Temporal types. */
export const AGENT_SEARCH_ATTRIBUTES = {
  AgentStatus: 'Keyword',
  AgentModel: 'Keyword',
  AgentTurns: 'Int',
  AgentCostUsd: 'Double',
  AgentBatchId: 'Keyword',
} as const;

/** temporal.api.enums.v1.IndexedValueType numbers, for operatorService.addSearchAttributes. */
export const INDEXED_VALUE_TYPE: Record<(typeof AGENT_SEARCH_ATTRIBUTES)[keyof typeof AGENT_SEARCH_ATTRIBUTES], number> = {
  Keyword: 2,
  Int: 3,
  Double: 4,
};
type AddSearchAttributesRequest = Parameters<Connection['operatorService']['addSearchAttributes']>[0];

const DEFAULT_DB_FILE = path.join('.durable-agent', 'temporal.db');
const IN_MEMORY = ':memory:';
const HOST = '127.0.0.1';

/**
 * Settings start-dev's own defaults get wrong for an agent runner (ARCHITECTURE.md#dev-server-throttle).
 * The history service reads its transfer queue at most 20 times a second per shard, and start-dev
 * has one shard: every activity or workflow task waits ~50 ms to be dispatched, 200 ms per turn.
 */
const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  // A model call goes straight to the worker whose workflow task scheduled it (ARCHITECTURE.md#model-calls-on-the-workflow-queue).
  'system.enableActivityEagerExecution': true,
  // start-dev turns this on so that a search attribute is usable the moment it is created; it then
  // reads the attribute definitions from the store at every start, upsert and visibility write
  // (three reads a turn). Off, as on any production server: a new attribute is usable a second or
  // so later (probe() waits for ours).
  'system.forceSearchAttributesCacheRefreshOnRead': false,
};
/** WAL lets readers (polls, queries) run beside the writer; `synchronous` stays FULL, so a commit is as durable as before. */
const DEV_SERVER_SQLITE_PRAGMAS: Readonly<Record<string, string>> = { journal_mode: 'wal' };

export interface DevServerOptions {
  /** gRPC frontend port; a free one when omitted. */
  port?: number;
  /** Web UI port; a free one when omitted (ignored with `ui: false`). */
  uiPort?: number;
  /** Serve the server's own Prometheus metrics on this port (`/metrics`); 0 = a free one; off when omitted. */
  metricsPort?: number;
  /** SQLite file, relative to cwd (default `.durable-agent/temporal.db`); ':memory:' = no file. */
  dbFile?: string;
  /** Serve the Web UI (default true). */
  ui?: boolean;
  /** Namespace to create besides `default` (search attributes are checked in it). */
  namespace?: string;
  /** `--dynamic-config-value KEY=JSON` settings, over DEV_SERVER_DYNAMIC_CONFIG (a key set here wins). */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** `--sqlite-pragma NAME=VALUE` settings, over DEV_SERVER_SQLITE_PRAGMAS (file databases only). */
  sqlitePragma?: Record<string, string>;
  /** Receives every output line of the server process. */
  log?: (line: string) => void;
  /** Path of the `temporal` binary; found or built with ensureTemporal() when omitted. */
  temporalBin?: string;
  /** How long to wait for the server to answer (default 60 s). */
  startTimeoutMs?: number;
}

export interface DevServer {
  /** `host:port` of the gRPC frontend, for TEMPORAL_ADDRESS / Connection.connect. */
  address: string;
  /** Web UI URL, when the UI is on. */
  uiUrl?: string;
  port: number;
  uiPort?: number;
  /** The server's Prometheus endpoint (`http://127.0.0.1:PORT/metrics`), when `metricsPort` was given. */
  metricsUrl?: string;
  /** Absolute path of the SQLite file, or ':memory:'. */
  dbFile: string;
  namespace: string;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
  process: ChildProcess;
}

type PortFlag = '--port' | '--ui-port' | '--metrics-port';

/** A port we were asked to use is taken; nothing was started. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly flag: PortFlag = '--port',
  ) {
    super(`port ${port} is already in use (another Temporal server?); choose another with ${flag} <n>`);
    this.name = 'PortInUseError';
  }
}

/** The server process exited, or did not become ready, during startup. */
export class DevServerStartError extends Error {
  constructor(
    message: string,
    readonly outputTail: string,
  ) {
    super(outputTail.length > 0 ? `${message}\n--- server output (tail) ---\n${outputTail}` : message);
    this.name = 'DevServerStartError';
  }
}

/** Resolves true when `port` can be bound on 127.0.0.1 right now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    srv.listen({ port, host: HOST, exclusive: true }, () => {
      srv.close(() => resolve(true));
    });
  });
}

/** A port that was free a moment ago (bind port 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: HOST, exclusive: true }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('could not allocate a free port'))));
    });
  });
}

async function choosePort(requested: number | undefined, flag: PortFlag, avoid: number[]): Promise<number> {
  if (requested !== undefined) {
    if (!(await portIsFree(requested))) throw new PortInUseError(requested, flag);
    return requested;
  }
  for (let i = 0; i < 20; i++) {
    const p = await freePort();
    if (!avoid.includes(p)) return p;
  }
  throw new Error('could not allocate a free port');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How many times a start that lost a port to another process is tried (ports are picked free, then bound by the server). */
const START_ATTEMPTS = 3;

/**
 * Start a dev server; resolves once its frontend answers and our search attributes exist. A
 * server that dies at start because a port it was about to bind was taken meanwhile (the ports
 * are found free, then bound by the server, and start-dev picks its internal ones the same way) is
 * started again on fresh ports, up to three times in all.
 */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(opts);
    } catch (e) {
      if (!(e instanceof DevServerStartError) || !/address already in use/.test(e.outputTail) || attempt >= START_ATTEMPTS) throw e;
      opts.log?.(`[dev-server] a port was taken while the server started; starting it again (attempt ${attempt + 1} of ${START_ATTEMPTS})`);
    }
  }
}

async function startDevServerOnce(opts: DevServerOptions): Promise<DevServer> {
  const ui = opts.ui ?? true;
  const namespace = opts.namespace ?? 'default';
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const log = opts.log;

  const port = await choosePort(opts.port, '--port', []);
  const uiPort = ui ? await choosePort(opts.uiPort, '--ui-port', [port]) : undefined;
  const metricsPort =
    opts.metricsPort === undefined ? undefined : await choosePort(opts.metricsPort || undefined, '--metrics-port', [port, uiPort ?? port]);

  const dbOpt = opts.dbFile ?? DEFAULT_DB_FILE;
  const dbFile = dbOpt === IN_MEMORY ? IN_MEMORY : path.resolve(dbOpt);
  if (dbFile !== IN_MEMORY) fs.mkdirSync(path.dirname(dbFile), { recursive: true });

  const bin = opts.temporalBin ?? (await ensureTemporal({ quiet: true }));

  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port), '--namespace', 'default'];
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (uiPort !== undefined) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (metricsPort !== undefined) args.push('--metrics-port', String(metricsPort));
  if (dbFile !== IN_MEMORY) {
    args.push('--db-filename', dbFile);
    for (const [name, value] of Object.entries({ ...DEV_SERVER_SQLITE_PRAGMAS, ...opts.sqlitePragma })) {
      args.push('--sqlite-pragma', `${name}=${value}`);
    }
  }
  args.push('--log-level', 'warn');
  for (const [name, type] of Object.entries(AGENT_SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }

  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  // What went wrong is said once, before a Go panic's goroutine stacks fill the tail: keep it.
  let panic: string[] | undefined;
  const onLine = (line: string): void => {
    if (line.trim().length === 0) return;
    if (panic && panic.length < 3) panic.push(line);
    else if (!panic && /^(panic|fatal error): |address already in use/.test(line)) panic = [line];
    tail.push(line);
    if (tail.length > 40) tail.shift();
    log?.(line);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (buf: Buffer) => {
      const lines = (partial + buf.toString('utf8')).split(/\r?\n/);
      partial = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    stream?.on('end', () => {
      if (partial.length > 0) onLine(partial);
      partial = '';
    });
  }

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  // 'close' (not 'exit'): the output pipes are drained by then, so the tail is complete.
  const exited = new Promise<void>((resolve) => {
    child.once('close', (code, signal) => {
      exitInfo = { code, signal };
      resolve();
    });
  });
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });

  // If our own process exits without stop() (crash, process.exit), take the server down too.
  const onParentExit = (): void => {
    if (!exitInfo) child.kill('SIGTERM');
  };
  process.once('exit', onParentExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!exitInfo && !spawnError) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      process.removeListener('exit', onParentExit);
      child.stdout?.destroy();
      child.stderr?.destroy();
    })();
    return stopping;
  };

  const address = `${HOST}:${port}`;
  try {
    await waitUntilReady(address, namespace, timeoutMs, () => exitInfo ?? spawnError, exited);
  } catch (err) {
    const reason =
      spawnError !== undefined
        ? `could not run ${bin}: ${spawnError.message}`
        : exitInfo !== undefined
          ? `temporal server start-dev exited early (${exitInfo.signal ?? `code ${exitInfo.code}`})`
          : err instanceof Error
            ? err.message
            : String(err);
    await stop();
    const output = panic && !tail.includes(panic[0]!) ? [...panic, '…', ...tail] : tail;
    throw new DevServerStartError(reason, output.join('\n'));
  }

  return {
    address,
    uiUrl: uiPort !== undefined ? `http://${HOST}:${uiPort}` : undefined,
    ...(metricsPort !== undefined ? { metricsUrl: `http://${HOST}:${metricsPort}/metrics` } : {}),
    port,
    uiPort,
    dbFile,
    namespace,
    stop,
    process: child,
  };
}

/** One readiness probe: frontend answers and our search attributes are listed and usable in `namespace`.
 *  With `addMissing`, registers missing attributes first: start-dev registers --search-attribute
 *  only when it creates the namespace, so a database file made before an attribute joined our
 *  list lacks it. */
async function probe(address: string, namespace: string, addMissing: boolean): Promise<void> {
  const connection = await connectTemporal({ address, connectTimeout: '3s' });
  try {
    await connection.workflowService.getSystemInfo({});
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    const have = Object.keys(res.customAttributes ?? {});
    const missing = (Object.keys(AGENT_SEARCH_ATTRIBUTES) as (keyof typeof AGENT_SEARCH_ATTRIBUTES)[]).filter(
      (name) => !have.includes(name),
    );
    if (missing.length === 0) {
      // Listed is not yet usable: the frontend maps a new attribute's name once it re-reads the
      // namespace (a second or so after an add; DEV_SERVER_DYNAMIC_CONFIG keeps its caches). A
      // query naming every attribute fails until then.
      const names = Object.keys(AGENT_SEARCH_ATTRIBUTES).map((name) => `${name} IS NULL`);
      await connection.workflowService.countWorkflowExecutions({ namespace, query: names.join(' AND ') });
      return;
    }
    if (addMissing) {
      const searchAttributes: Record<string, number> = {};
      for (const name of missing) searchAttributes[name] = INDEXED_VALUE_TYPE[AGENT_SEARCH_ATTRIBUTES[name]];
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes } as AddSearchAttributesRequest);
    }
    throw new Error(`search attributes not visible yet: ${missing.join(', ')}`);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function waitUntilReady(
  address: string,
  namespace: string,
  timeoutMs: number,
  dead: () => unknown,
  exited: Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const processEnded = exited.then(() => Promise.reject(new Error('server process ended')));
  processEnded.catch(() => undefined);
  let lastError = 'no answer yet';
  let frontendAnswered = false;
  let triedAdding = false;
  while (Date.now() < deadline) {
    if (dead()) throw new Error('server process ended');
    const addMissing: boolean = frontendAnswered && !triedAdding;
    triedAdding ||= addMissing;
    try {
      const attempt = probe(address, namespace, addMissing);
      attempt.catch(() => undefined); // observed via the race; keeps a lost race from going unhandled
      await Promise.race([attempt, processEnded]);
      return;
    } catch (err) {
      if (dead()) throw err;
      lastError = err instanceof Error ? err.message : String(err);
      if (lastError.startsWith('search attributes not visible')) frontendAnswered = true;
    }
    await sleep(250);
  }
  throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for the Temporal dev server at ${address} (${lastError})`);
}

// ---------------------------------------------------------------------------------------------
// `durable-agent server`

const SERVER_USAGE = `usage: durable-agent server [--port 7233] [--ui-port 8233] [--db FILE] [--namespace default] [--no-ui]

Runs a local Temporal dev server (SQLite-backed) until Ctrl-C.
  --port N         gRPC frontend port (default 7233)
  --ui-port N      Web UI port (default 8233)
  --db FILE        SQLite file (default ${DEFAULT_DB_FILE}); ':memory:' keeps nothing
  --namespace NS   namespace to create besides 'default'
  --no-ui          do not serve the Web UI
The full Temporal server on PostgreSQL instead (--nodes N: a cluster): durable-agent server --postgres URL --help
`;

function parsePort(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${flag} must be a port number (1-65535), got '${value}'`);
  return n;
}

/** CLI entry for `durable-agent server ...`; resolves with the process exit code. */
export async function runServerCommand(argv: string[]): Promise<number> {
  const out = (s: string): void => void process.stdout.write(`${s}\n`);
  const err = (s: string): void => void process.stderr.write(`${s}\n`);

  let port: number;
  let uiPort: number;
  let values: { db?: string; namespace?: string; 'no-ui'?: boolean; help?: boolean };
  try {
    const parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        'ui-port': { type: 'string' },
        db: { type: 'string' },
        namespace: { type: 'string' },
        'no-ui': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    values = parsed.values;
    port = parsePort(parsed.values.port, '--port', 7233);
    uiPort = parsePort(parsed.values['ui-port'], '--ui-port', 8233);
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    err(SERVER_USAGE);
    return 2;
  }
  if (values.help) {
    out(SERVER_USAGE);
    return 0;
  }

  let signalled: NodeJS.Signals | undefined;
  // The server logs at warn level; show its errors while it runs, not the noise of shutting down.
  const serverLog = (line: string): void => {
    if (!signalled && /level=(ERROR|FATAL|DPANIC|PANIC)/.test(line)) err(`[temporal] ${line}`);
  };
  let onSignal: (sig: NodeJS.Signals) => void = (sig) => {
    signalled = sig;
  };
  const handler = (sig: NodeJS.Signals): void => onSignal(sig);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  try {
    let server: DevServer;
    try {
      server = await startDevServer({
        port,
        uiPort,
        ui: !values['no-ui'],
        dbFile: values.db ?? DEFAULT_DB_FILE,
        namespace: values.namespace ?? 'default',
        log: serverLog,
      });
    } catch (e) {
      if (e instanceof PortInUseError) {
        err(e.message);
        return 2;
      }
      if (signalled) return 0;
      err(e instanceof Error ? e.message : String(e));
      const code = (e as { code?: unknown }).code;
      return typeof code === 'number' ? code : 1;
    }

    out('Temporal dev server is running.');
    out(`  gRPC address: ${server.address}`);
    if (server.uiUrl) out(`  Web UI:       ${server.uiUrl}`);
    out(`  namespace:    ${server.namespace}`);
    out(`  database:     ${server.dbFile === IN_MEMORY ? 'in memory (nothing kept)' : server.dbFile}`);
    out('Point workers and clients at it with:');
    out(`  export TEMPORAL_ADDRESS=${server.address}`);
    out('Press Ctrl-C to stop.');

    const outcome = await new Promise<'signal' | 'exited'>((resolve) => {
      if (signalled) return resolve('signal');
      onSignal = (sig) => {
        signalled = sig;
        resolve('signal');
      };
      // On Ctrl-C the server (same process group) gets SIGINT too and may exit before our own
      // handler runs: give the signal a moment to arrive before calling the exit unexpected.
      server.process.once('exit', () => setTimeout(() => resolve('exited'), 500));
    });
    if (outcome === 'exited' && !signalled) {
      err(`the Temporal dev server exited unexpectedly (code ${server.process.exitCode ?? server.process.signalCode})`);
      await server.stop();
      return 1;
    }
    out(`\nreceived ${signalled}, stopping the Temporal dev server...`);
    await server.stop();
    out('stopped.');
    return 0;
  } finally {
    process.removeListener('SIGINT', handler);
    process.removeListener('SIGTERM', handler);
  }
}
