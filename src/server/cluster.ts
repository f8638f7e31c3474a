/**
 * The full Temporal server on PostgreSQL, as one node or a cluster of N nodes on this machine
 * (ARCHITECTURE.md#temporal-on-postgresql): node i binds 127.0.0.(i+1) with the same ports, all
 * nodes share the database, and they find each other through its cluster_membership table —
 * exactly how servers on several hosts form a cluster.
 *
 * Each node runs the four services (frontend, history, matching, worker) in one process. The
 * first start registers the namespace and our search attributes; every start waits until each
 * node's frontend serves them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import YAML from 'yaml';
import { AGENT_SEARCH_ATTRIBUTES, INDEXED_VALUE_TYPE, PortInUseError } from './dev-server';
import type { TemporalServerInstall } from './ensure-temporal-server';
import type { PostgresTarget } from './postgres';
import { connectTemporal } from './connection';

/** History shards: fixed when the database is first used (Temporal cannot change it later). */
export const HISTORY_SHARDS = 16;

/**
 * Dynamic config every node gets. The history service reads each shard's transfer queue at most
 * `transferProcessorMaxPollRPS` times a second (default 20, i.e. a ~50 ms wait per hop of a
 * session); 1000 removes that wait without measurable cost (ARCHITECTURE.md#temporal-on-postgresql).
 * Eager activity dispatch hands a model call to the worker that scheduled it
 * (ARCHITECTURE.md#model-calls-on-the-workflow-queue).
 */
export const SERVER_DYNAMIC_CONFIG: Record<string, unknown> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'system.enableActivityEagerExecution': true,
  'limit.maxIDLength': 255,
  // Worker Versioning (ARCHITECTURE.md#deploys): deployment versions, and a pinned session told
  // that its deployment's current build changed, so it moves at its next continue-as-new. Both
  // are 1.30's defaults, set here so that a server whose defaults differ still deploys the same.
  'system.enableDeploymentVersions': true,
  'system.enableSendTargetVersionChanged': true,
};

/** Ports every node uses on its own address. */
export interface NodePorts {
  frontend: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** Temporal's usual ports, used with the default `--port 7233`. */
export const DEFAULT_PORTS: NodePorts = {
  frontend: 7233,
  frontendMembership: 6933,
  history: 7234,
  historyMembership: 6934,
  matching: 7235,
  matchingMembership: 6935,
  worker: 7239,
  workerMembership: 6939,
};

export interface PostgresServerOptions {
  target: PostgresTarget;
  install: TemporalServerInstall;
  /** Where configs and node logs go. */
  stateDir: string;
  /** Server processes (default 1); node i binds 127.0.0.(i+1). */
  nodes?: number;
  /** The ports; the frontend port alone means the others are chosen free. Default: free ports. */
  ports?: Partial<NodePorts>;
  namespace?: string;
  /** Every output line of every node, prefixed `[node N]`. */
  log?: (line: string) => void;
  /** Per start-up (default 120 s). */
  startTimeoutMs?: number;
  /** Dynamic config over SERVER_DYNAMIC_CONFIG (a key set here wins), e.g. shorter intervals in a test. */
  dynamicConfig?: Record<string, unknown>;
  /**
   * Serve each node's server metrics for Prometheus on its own address at this port (its
   * requests, storage operations and background tasks, by operation). Default: not served.
   */
  metricsPort?: number;
}

interface ServerNode {
  index: number;
  ip: string;
  /** `ip:port` of this node's frontend. */
  address: string;
  process: ChildProcess;
  logFile: string;
}

export interface PostgresServer {
  /** The first node's frontend (any node's frontend serves the whole cluster). */
  address: string;
  addresses: string[];
  namespace: string;
  ports: NodePorts;
  nodes: ServerNode[];
  /** Each node's Prometheus endpoint (`http://IP:PORT/metrics`), when `metricsPort` was given. */
  metricsUrls?: string[];
  /** SIGTERM every node, SIGKILL after 15 s; resolves once all exited. Idempotent. */
  stop(): Promise<void>;
}

function nodeIp(index: number): string {
  return `127.0.0.${index + 1}`;
}

export function canBind(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Can `port` be bound on every one of `hosts`? */
async function freeOnAll(port: number, hosts: string[]): Promise<boolean> {
  return (await Promise.all(hosts.map((h) => canBind(port, h)))).every(Boolean);
}

/** Temporal keeps each node's ports in a PostgreSQL smallint (cluster_membership): they must stay below 32768. */
export const MAX_PORT = 32767;
const LOW_PORTS = { from: 20000, to: MAX_PORT };

/** A port below MAX_PORT that is free on every node address (kernel-chosen ports are above it). */
export async function freePortOn(hosts: string[], avoid: Set<number> = new Set()): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (LOW_PORTS.to - LOW_PORTS.from));
    if (avoid.has(port)) continue;
    if (await freeOnAll(port, hosts)) return port;
  }
  throw new Error('could not find a free port on every node address');
}

/** Complete `requested` with free ports; a requested port that is taken is an error (PortInUseError for the frontend). */
async function choosePorts(requested: Partial<NodePorts>, hosts: string[], metricsPort?: number): Promise<NodePorts> {
  const out: Partial<NodePorts> = {};
  const taken = new Set<number>();
  if (metricsPort !== undefined) {
    if (!(await freeOnAll(metricsPort, hosts))) throw new Error(`metrics port ${metricsPort} is already in use`);
    taken.add(metricsPort);
  }
  for (const key of Object.keys(DEFAULT_PORTS) as (keyof NodePorts)[]) {
    const want = requested[key];
    if (want === undefined) continue;
    if (want === metricsPort) throw new Error(`port ${want} (${key}) is also the metrics port`);
    if (!(await freeOnAll(want, hosts))) {
      if (key === 'frontend') throw new PortInUseError(want);
      throw new Error(`port ${want} (${key}) is already in use`);
    }
    out[key] = want;
    taken.add(want);
  }
  for (const key of Object.keys(DEFAULT_PORTS) as (keyof NodePorts)[]) {
    if (out[key] !== undefined) continue;
    out[key] = await freePortOn(hosts, taken);
    taken.add(out[key]);
  }
  return out as NodePorts;
}

/** The server config of one node (Temporal's config/development-postgres12.yaml, filled in). */
function nodeConfig(opts: {
  target: PostgresTarget;
  ip: string;
  firstIp: string;
  ports: NodePorts;
  dynamicConfigFile: string;
  metricsPort?: number;
}): string {
  const { target: t, ip, ports } = opts;
  // Each of a node's four services has its own pools: at most 4 × (8 + 3) connections per node,
  // about half of that idle, so several nodes fit PostgreSQL's default max_connections (100).
  const sql = (databaseName: string, maxConns: number, maxIdleConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`,
      connectProtocol: 'tcp',
      user: t.user,
      password: t.password,
      maxConns,
      maxIdleConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number) => ({ rpc: { grpcPort, membershipPort, bindOnIP: ip } });
  const config = {
    log: { stdout: true, level: 'warn' },
    persistence: {
      numHistoryShards: HISTORY_SHARDS,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: { default: sql(t.database, 8, 3), visibility: sql(t.visibilityDatabase, 3, 1) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: ip },
      ...(opts.metricsPort === undefined
        ? {}
        : { metrics: { prometheus: { timerType: 'histogram', listenAddress: `${ip}:${opts.metricsPort}` } } }),
    },
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `${opts.firstIp}:${ports.frontend}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: opts.dynamicConfigFile, pollInterval: '10s' },
  };
  return YAML.stringify(config);
}

/** Temporal's dynamic config file format: each key a list of {value, constraints}. */
function dynamicConfigFile(values: Record<string, unknown>): string {
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) doc[k] = [{ value: v, constraints: {} }];
  return YAML.stringify(doc);
}

function spawnNode(opts: {
  install: TemporalServerInstall;
  root: string;
  index: number;
  ip: string;
  port: number;
  log?: (line: string) => void;
}): ServerNode {
  const logFile = path.join(opts.root, 'server.log');
  const logStream = fs.createWriteStream(logFile, { flags: 'a' });
  const child = spawn(
    opts.install.server,
    ['--root', opts.root, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (buf: Buffer) => {
      logStream.write(buf);
      const lines = (partial + buf.toString('utf8')).split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim().length > 0) opts.log?.(`[node ${opts.index + 1}] ${line}`);
    });
  }
  child.once('close', () => logStream.end());
  return { index: opts.index, ip: opts.ip, address: `${opts.ip}:${opts.port}`, process: child, logFile };
}

function tailOf(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type AddSearchAttributesRequest = Parameters<Connection['operatorService']['addSearchAttributes']>[0];

/** Register the namespace and our search attributes through `address` (idempotent). */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const connection = await connectTemporal({ address, connectTimeout: '3s' });
  try {
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (err) {
      if ((err as { code?: number }).code !== 5) throw err; // NOT_FOUND
      try {
        await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') });
      } catch (e) {
        if ((e as { code?: number }).code !== 6) throw e; // ALREADY_EXISTS: another node's start won
      }
    }
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.keys(AGENT_SEARCH_ATTRIBUTES).filter((n) => !(n in (have.customAttributes ?? {})));
    if (missing.length === 0) return;
    const searchAttributes: Record<string, number> = {};
    for (const name of missing)
      searchAttributes[name] = INDEXED_VALUE_TYPE[AGENT_SEARCH_ATTRIBUTES[name as keyof typeof AGENT_SEARCH_ATTRIBUTES]];
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes } as AddSearchAttributesRequest);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Ready: the frontend at `address` serves the namespace (through its cache) with our search attributes. */
async function nodeReady(address: string, namespace: string): Promise<void> {
  const connection = await connectTemporal({ address, connectTimeout: '3s' });
  try {
    await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.keys(AGENT_SEARCH_ATTRIBUTES).filter((n) => !(n in (have.customAttributes ?? {})));
    if (missing.length > 0) throw new Error(`search attributes not visible yet: ${missing.join(', ')}`);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Start the nodes on an already set-up database; resolves once every frontend serves the namespace. */
export async function startPostgresServer(opts: PostgresServerOptions): Promise<PostgresServer> {
  const n = opts.nodes ?? 1;
  const namespace = opts.namespace ?? 'default';
  const ips = Array.from({ length: n }, (_, i) => nodeIp(i));
  const ports = await choosePorts(opts.ports ?? {}, ips, opts.metricsPort);
  fs.mkdirSync(opts.stateDir, { recursive: true });
  const dynamicConfigPath = path.resolve(opts.stateDir, 'dynamicconfig.yaml');
  fs.writeFileSync(dynamicConfigPath, dynamicConfigFile({ ...SERVER_DYNAMIC_CONFIG, ...opts.dynamicConfig }));

  const nodes: ServerNode[] = [];
  const launch = (i: number): ServerNode => {
    const root = path.resolve(opts.stateDir, `node-${i + 1}`);
    fs.mkdirSync(path.join(root, 'config'), { recursive: true });
    // The config holds the database password: readable by this user only.
    fs.writeFileSync(
      path.join(root, 'config', 'development.yaml'),
      nodeConfig({
        target: opts.target,
        ip: ips[i]!,
        firstIp: ips[0]!,
        ports,
        dynamicConfigFile: dynamicConfigPath,
        metricsPort: opts.metricsPort,
      }),
      {
        mode: 0o600,
      },
    );
    fs.chmodSync(path.join(root, 'config', 'development.yaml'), 0o600);
    const node = spawnNode({ install: opts.install, root, index: i, ip: ips[i]!, port: ports.frontend, log: opts.log });
    nodes.push(node);
    return node;
  };

  const onParentExit = (): void => {
    for (const node of nodes) if (node.process.exitCode === null && node.process.signalCode === null) node.process.kill('SIGTERM');
  };
  process.once('exit', onParentExit);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all(
        nodes.map(async (node) => {
          const p = node.process;
          if (p.exitCode !== null || p.signalCode !== null) return;
          const closed = new Promise<void>((resolve) => p.once('close', () => resolve()));
          p.kill('SIGTERM');
          const killer = setTimeout(() => p.kill('SIGKILL'), 15_000);
          await closed;
          clearTimeout(killer);
        }),
      );
      process.removeListener('exit', onParentExit);
    })();
    return stopping;
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 120_000);
  const addresses = ips.map((ip) => `${ip}:${ports.frontend}`);
  let registered = false;
  let lastError = 'no answer yet';
  try {
    // One node at a time: the first start of a database initialises the cluster metadata, and
    // two nodes racing to do that would make one of them exit.
    for (let i = 0; i < n; i++) {
      const node = launch(i);
      for (;;) {
        const dead = nodes.find((x) => x.process.exitCode !== null || x.process.signalCode !== null);
        if (dead)
          throw new Error(
            `node ${dead.index + 1} exited during start-up (${dead.process.signalCode ?? `code ${dead.process.exitCode}`})\n${tailOf(dead.logFile)}`,
          );
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for node ${node.index + 1} at ${node.address} (${lastError})\n${tailOf(node.logFile)}`);
        try {
          if (!registered) {
            await registerNamespace(node.address, namespace);
            registered = true;
          }
          await nodeReady(node.address, namespace);
          break;
        } catch (err) {
          lastError = err instanceof Error ? err.message : String(err);
          await sleep(500);
        }
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const metricsUrls = opts.metricsPort === undefined ? undefined : ips.map((ip) => `http://${ip}:${opts.metricsPort}/metrics`);
  return { address: addresses[0]!, addresses, namespace, ports, nodes, stop, metricsUrls };
}
