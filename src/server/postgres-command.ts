/**
 * `durable-agent server --postgres URL [--nodes N]`: the full Temporal server on PostgreSQL until
 * Ctrl-C (ARCHITECTURE.md#temporal-on-postgresql). Checks the database before building anything,
 * builds the server on first use, sets up or upgrades the schema, starts the node(s), registers
 * the namespace and our search attributes, prints the address.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { PortInUseError } from './dev-server';
import { DEFAULT_PORTS, HISTORY_SHARDS, MAX_PORT, startPostgresServer, type PostgresServer } from './cluster';
import { ensureTemporalServer } from './ensure-temporal-server';
import { checkPostgres, parsePostgresUrl, PostgresSetupError, redactUrl, setupSchemas } from './postgres';

const DEFAULT_STATE_DIR = path.join('.durable-agent', 'postgres-server');
/** Loopback addresses 127.0.0.1 … 127.0.0.16. */
const MAX_NODES = 16;

const POSTGRES_SERVER_USAGE = `usage: durable-agent server --postgres URL [--nodes N] [--port 7233] [--metrics-port N] [--namespace default] [--state-dir DIR]

Runs the full Temporal server (frontend, history, matching, worker services; ${HISTORY_SHARDS} history shards)
on PostgreSQL until Ctrl-C. The server is built from source with Go on first use.
  --postgres URL   postgres://USER:PASSWORD@HOST:PORT/DATABASE — DATABASE (default temporal) and
                   DATABASE_visibility are created if missing; their schema is set up or upgraded
  --nodes N        N server processes forming one cluster on 127.0.0.1 … 127.0.0.N (default 1)
  --port N         gRPC frontend port on each node address (default 7233)
  --metrics-port N serve each node's server metrics for Prometheus at http://NODE-ADDRESS:N/metrics
  --namespace NS   namespace to register (default 'default')
  --state-dir DIR  where node configs and logs go (default ${DEFAULT_STATE_DIR})
The Web UI is not served in this mode: run the temporal-ui service of docker-compose.yml.`;

/** Options of the dev server that do not apply here, with why. */
const REFUSED: Record<string, string> = {
  '--db': 'the history lives in PostgreSQL',
  '--ui-port': 'the Web UI is the temporal-ui service of docker-compose.yml',
  '--no-ui': 'there is no Web UI to turn off in this mode',
};

/**
 * CLI entry; resolves with the exit code (0 after Ctrl-C, 2 bad input or unusable database, 1 otherwise).
 * @public loaded by name through the CLI's lazy(), which knip cannot follow
 */
export async function runPostgresServerCommand(argv: string[]): Promise<number> {
  const out = (s: string): void => void process.stdout.write(`${s}\n`);
  const err = (s: string): void => void process.stderr.write(`${s}\n`);

  for (const arg of argv) {
    const flag = arg.split('=')[0]!;
    if (flag in REFUSED) {
      err(`error: ${flag} is not available with --postgres: ${REFUSED[flag]}`);
      return 2;
    }
  }
  let values: {
    postgres?: string;
    nodes?: string;
    port?: string;
    'metrics-port'?: string;
    namespace?: string;
    'state-dir'?: string;
    help?: boolean;
  };
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        postgres: { type: 'string' },
        nodes: { type: 'string' },
        port: { type: 'string' },
        'metrics-port': { type: 'string' },
        namespace: { type: 'string' },
        'state-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    err(`error: ${(e as Error).message}\n\n${POSTGRES_SERVER_USAGE}`);
    return 2;
  }
  if (values.help) {
    out(POSTGRES_SERVER_USAGE);
    return 0;
  }
  if (values.postgres === undefined) {
    err(
      `error: --nodes needs --postgres URL (a cluster shares one database; the SQLite dev server is one process)\n\n${POSTGRES_SERVER_USAGE}`,
    );
    return 2;
  }
  const nodes = values.nodes === undefined ? 1 : Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    err(`error: --nodes must be a whole number from 1 to ${MAX_NODES}, got '${values.nodes}'`);
    return 2;
  }
  const port = values.port === undefined ? DEFAULT_PORTS.frontend : Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
    err(`error: --port must be a port number from 1 to ${MAX_PORT} (Temporal stores it in a smallint), got '${values.port}'`);
    return 2;
  }
  const metricsPort = values['metrics-port'] === undefined ? undefined : Number(values['metrics-port']);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 1 || metricsPort > 65535 || metricsPort === port)) {
    err(`error: --metrics-port must be a port number from 1 to 65535 other than --port, got '${values['metrics-port']}'`);
    return 2;
  }

  let signalled: NodeJS.Signals | undefined;
  let onSignal: (sig: NodeJS.Signals) => void = (sig) => {
    signalled = sig;
  };
  const handler = (sig: NodeJS.Signals): void => onSignal(sig);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  let server: PostgresServer | undefined;
  let ready = false;
  try {
    const target = parsePostgresUrl(values.postgres);
    // Reachability and credentials first: a wrong URL must not cost a multi-minute build.
    await checkPostgres(target);
    const install = await ensureTemporalServer({ quiet: true });
    if (signalled) return 0;
    await setupSchemas(target, install, err);
    if (signalled) return 0;
    // With the default port, Temporal's usual internal ports; with another, free ones (so several can run).
    const ports = port === DEFAULT_PORTS.frontend ? DEFAULT_PORTS : { frontend: port };
    server = await startPostgresServer({
      target,
      install,
      nodes,
      ports,
      metricsPort,
      namespace: values.namespace ?? 'default',
      stateDir: values['state-dir'] ?? DEFAULT_STATE_DIR,
      // Start-up logs transient errors (shards not yet owned); after it, show the server's errors.
      log: (line) => {
        if (ready && !signalled && /"level":"(error|fatal|dpanic|panic)"/.test(line)) err(line);
      },
    });
    ready = true;
    out(`Temporal server is running on PostgreSQL (${nodes === 1 ? 'one node' : `${nodes} nodes, one cluster`}).`);
    out(`  gRPC address: ${server.address}`);
    if (nodes > 1) out(`  every node:   ${server.addresses.join(', ')}`);
    out(`  namespace:    ${server.namespace}`);
    if (server.metricsUrls) out(`  metrics:      ${server.metricsUrls.join(', ')}`);
    out(`  database:     ${redactUrl(values.postgres)} (${target.database}, ${target.visibilityDatabase})`);
    out(`  logs:         ${path.resolve(values['state-dir'] ?? DEFAULT_STATE_DIR)}/node-*/server.log`);
    out('Point workers and clients at it with:');
    out(`  export TEMPORAL_ADDRESS=${server.address}`);
    out('Press Ctrl-C to stop.');

    const running = server;
    const outcome = await new Promise<'signal' | 'exited'>((resolve) => {
      if (signalled) return resolve('signal');
      onSignal = (sig) => {
        signalled = sig;
        resolve('signal');
      };
      // Ctrl-C reaches the nodes too (same process group): give our own handler a moment first.
      for (const node of running.nodes) node.process.once('exit', () => setTimeout(() => resolve('exited'), 500));
    });
    if (outcome === 'exited') {
      const dead = running.nodes.find((n) => n.process.exitCode !== null || n.process.signalCode !== null);
      err(
        `Temporal server node ${(dead?.index ?? 0) + 1} exited unexpectedly (${dead?.process.signalCode ?? `code ${dead?.process.exitCode}`}); see ${dead?.logFile}`,
      );
      await running.stop();
      return 1;
    }
    out(`\nreceived ${signalled}, stopping the Temporal server...`);
    await running.stop();
    out('stopped.');
    return 0;
  } catch (e) {
    await server?.stop();
    if (e instanceof PostgresSetupError || e instanceof PortInUseError) {
      err(`error: ${e.message}`);
      return 2;
    }
    if (signalled) return 0;
    err(e instanceof Error ? e.message : String(e));
    const code = (e as { code?: unknown }).code;
    return typeof code === 'number' ? code : 1;
  } finally {
    process.removeListener('SIGINT', handler);
    process.removeListener('SIGTERM', handler);
  }
}
