/**
 * The PostgreSQL side of `durable-agent server --postgres URL`: read the URL, check that the
 * database server answers and takes the credentials (before anything is built), create the two
 * databases if missing, and set up or upgrade their schemas with temporal-sql-tool — the same
 * commands docker-compose.yml's schema service runs (ARCHITECTURE.md#temporal-on-postgresql).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';

/** Bad input or an unusable database: the command exits 2 with this message. */
export class PostgresSetupError extends Error {
  readonly code = 2;
  constructor(message: string) {
    super(message);
    this.name = 'PostgresSetupError';
  }
}

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  /** History, tasks, namespaces… (Temporal's "default" store). */
  database: string;
  /** Workflow listing and search attributes: `<database>_visibility`. */
  visibilityDatabase: string;
}

/** Database names we put into SQL and config unquoted: keep them to plain identifiers. */
const DB_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** The URL with its password masked, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/**
 * `postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE]`. DATABASE (default `temporal`) names the
 * main database; the visibility database is `DATABASE_visibility`. Query parameters are refused
 * by name: none of them would reach the Temporal server's config.
 */
export function parsePostgresUrl(raw: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PostgresSetupError(`--postgres: '${redactUrl(raw)}' is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new PostgresSetupError(`--postgres: the URL must start with postgres:// (got ${url.protocol}//)`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host.length === 0) {
    throw new PostgresSetupError(
      `--postgres: the URL has no host; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE (got '${redactUrl(raw)}')`,
    );
  }
  const params = [...url.searchParams.keys()];
  if (params.length > 0) {
    throw new PostgresSetupError(
      `--postgres: URL parameter '${params[0]}' is not supported (TLS and options: write the server config yourself, see docs/OPERATIONS.md)`,
    );
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'temporal';
  if (!DB_NAME.test(database)) {
    throw new PostgresSetupError(
      `--postgres: database name '${database}' must be lower-case letters, digits and _ (at most 48), starting with a letter or _`,
    );
  }
  return {
    host,
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || 'postgres',
    password: decodeURIComponent(url.password),
    database,
    visibilityDatabase: `${database}_visibility`,
  };
}

function describe(t: PostgresTarget): string {
  return `PostgreSQL at ${t.host}:${t.port} (user ${t.user})`;
}

/** Turn a pg connection error into what the user must fix. */
function connectionProblem(t: PostgresTarget, err: unknown): PostgresSetupError {
  const e = err as { code?: string; message?: string };
  const msg = e.message ?? String(err);
  switch (e.code) {
    case '28P01':
      return new PostgresSetupError(`${describe(t)} refused the password in the --postgres URL (wrong password)`);
    case '28000':
      return new PostgresSetupError(`${describe(t)} refused the login: ${msg}`);
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return new PostgresSetupError(`${describe(t)} is unreachable (${e.code}): is it running, and is the --postgres host and port right?`);
  }
  if (/password/i.test(msg) && t.password.length === 0) {
    return new PostgresSetupError(`${describe(t)} asks for a password and the --postgres URL has none`);
  }
  if (/timeout/i.test(msg)) return new PostgresSetupError(`${describe(t)} is unreachable (no answer within 5 s)`);
  return new PostgresSetupError(`${describe(t)}: ${msg}`);
}

async function connect(t: PostgresTarget, database: string): Promise<Client> {
  const client = new Client({ host: t.host, port: t.port, user: t.user, password: t.password, database, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined); // a dropped connection surfaces in the pending query
  await client.connect();
  return client;
}

/** Connect to the server's maintenance database (`postgres`, else `template1`): proves reachability and credentials. */
async function connectAdmin(t: PostgresTarget): Promise<Client> {
  try {
    return await connect(t, 'postgres');
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw connectionProblem(t, err);
  }
  try {
    return await connect(t, 'template1');
  } catch (err) {
    throw connectionProblem(t, err);
  }
}

/** Check reachability and credentials without changing anything. */
export async function checkPostgres(t: PostgresTarget): Promise<void> {
  const client = await connectAdmin(t);
  await client.end();
}

/** The schema version directories shipped with the server (`vX.Y` → [X, Y]), newest last. */
function shippedVersions(versionedDir: string): number[][] {
  return fs
    .readdirSync(versionedDir)
    .map((d) => /^v(\d+)\.(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), Number(m[2])])
    .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
}

function compareVersions(a: number[], b: number[]): number {
  return a[0]! - b[0]! || a[1]! - b[1]!;
}

/** The two databases and where their schemas live under schema/postgresql/v12. */
function schemaTargets(t: PostgresTarget): { database: string; dir: 'temporal' | 'visibility' }[] {
  return [
    { database: t.database, dir: 'temporal' },
    { database: t.visibilityDatabase, dir: 'visibility' },
  ];
}

/**
 * temporal-sql-tool's arguments for one database: create it, set up the version table, apply every
 * versioned step. docker-compose.yml's schema service runs exactly these (a test compares them).
 * The password goes in SQL_PASSWORD, never on a command line.
 */
export function schemaCommands(opts: { host: string; port: number | string; user: string; database: string; versionedDir: string }): {
  create: string[];
  setup: string[];
  update: string[];
} {
  const base = ['--plugin', 'postgres12', '--ep', opts.host, '-p', String(opts.port), '-u', opts.user, '--db', opts.database];
  return {
    create: [...base, 'create-database'],
    setup: [...base, 'setup-schema', '-v', '0.0'],
    update: [...base, 'update-schema', '-d', opts.versionedDir],
  };
}

function runTool(sqlTool: string, args: string[], password: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(sqlTool, args, { env: { ...process.env, SQL_PASSWORD: password }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    const onData = (b: Buffer) => out.push(b.toString('utf8'));
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      const text = out.join('').trim();
      if (code === 0) resolve();
      else reject(new Error(`temporal-sql-tool ${args.join(' ')} failed (exit ${code}):\n${text.split('\n').slice(-15).join('\n')}`));
    });
  });
}

/** The version recorded in a database's schema_version table, or undefined before setup-schema. */
async function recordedVersion(t: PostgresTarget, database: string): Promise<number[] | undefined> {
  const client = await connect(t, database).catch((err) => Promise.reject(connectionProblem(t, err)));
  try {
    const exists = await client.query("SELECT to_regclass('public.schema_version') IS NOT NULL AS ok");
    if (!exists.rows[0]?.ok) return undefined;
    const r = await client.query('SELECT curr_version FROM schema_version WHERE version_partition = 0 AND db_name = $1', [database]);
    const v = /^(\d+)\.(\d+)/.exec(String(r.rows[0]?.curr_version ?? ''));
    return v ? [Number(v[1]), Number(v[2])] : undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Create the databases that are missing and bring both schemas to the version this server
 * binary ships. Refuses (exit 2) a database whose schema is newer than the binary: an older
 * server on a newer schema would corrupt it.
 */
export async function setupSchemas(
  t: PostgresTarget,
  tools: { sqlTool: string; schemaDir: string },
  log: (line: string) => void,
): Promise<void> {
  const admin = await connectAdmin(t);
  let existing: Set<string>;
  try {
    const r = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [[t.database, t.visibilityDatabase]]);
    existing = new Set(r.rows.map((row: { datname: string }) => row.datname));
  } finally {
    await admin.end().catch(() => undefined);
  }
  for (const { database, dir } of schemaTargets(t)) {
    const versionedDir = path.join(tools.schemaDir, dir, 'versioned');
    const shipped = shippedVersions(versionedDir).at(-1)!;
    const cmds = schemaCommands({ host: t.host, port: t.port, user: t.user, database, versionedDir });
    if (!existing.has(database)) {
      log(`[schema] creating database ${database}`);
      await runTool(tools.sqlTool, cmds.create, t.password);
    }
    const have = await recordedVersion(t, database);
    if (have && compareVersions(have, shipped) > 0) {
      throw new PostgresSetupError(
        `database ${database} has schema version ${have.join('.')}, newer than this Temporal server supports (${shipped.join('.')}): ` +
          'a newer server has used it; run that server version, or point --postgres at another database',
      );
    }
    if (!have) {
      log(`[schema] setting up the ${dir} schema in ${database}`);
      await runTool(tools.sqlTool, cmds.setup, t.password);
    }
    if (!have || compareVersions(have, shipped) < 0) {
      log(`[schema] upgrading ${database} to schema version ${shipped.join('.')}`);
      await runTool(tools.sqlTool, cmds.update, t.password);
    }
  }
}
