/**
 * The real PostgreSQL of the test machine (127.0.0.1:5432, user postgres; CI has it too) for the
 * `--postgres` tests: every test gets databases of its own, named for this run, dropped after.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePortOn } from '../../src/server/cluster';
import { parsePostgresUrl, type PostgresTarget } from '../../src/server/postgres';

export const TEST_POSTGRES = process.env.DURABLE_AGENT_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432';

let n = 0;

/** A `--postgres` URL naming databases no other run uses. */
export function uniqueDatabaseUrl(label: string): string {
  return `${TEST_POSTGRES}/da_${label}_${process.pid}_${Date.now().toString(36)}_${n++}`;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const t = parsePostgresUrl(TEST_POSTGRES);
  const c = new Client({ host: t.host, port: t.port, user: t.user, password: t.password, database: 'postgres' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Drop both databases of `url` (connections left by a killed server are terminated). */
export async function dropDatabases(url: string): Promise<void> {
  const t = parsePostgresUrl(url);
  await admin(async (c) => {
    for (const db of [t.database, t.visibilityDatabase]) await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  });
}

/** Run one statement in one of `target`'s databases; its rows. */
export async function sqlIn(target: PostgresTarget, database: string, text: string): Promise<Record<string, unknown>[]> {
  const c = new Client({ host: target.host, port: target.port, user: target.user, password: target.password, database });
  await c.connect();
  try {
    return (await c.query(text)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

export async function databaseExists(name: string): Promise<boolean> {
  return admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
}

/**
 * A PostgreSQL of the test's own that asks for a password (the machine's trusts every local
 * login, so a wrong password cannot be shown on it): `initdb --auth=scram-sha-256` in a temp dir,
 * started on a free port, as the `postgres` user when the tests run as root.
 */
export async function startPasswordPostgres(password: string): Promise<{ url(pw: string): string; stop(): void }> {
  const bindir = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout?.trim();
  const dirs = [bindir, ...readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`)].filter(
    (d): d is string => !!d && existsSync(path.join(d, 'initdb')),
  );
  if (dirs.length === 0) throw new Error('initdb not found (PostgreSQL server binaries are needed for this test)');
  const bin = (name: string) => path.join(dirs[0]!, name);
  const dir = mkdtempSync(path.join(tmpdir(), 'da-pgpw-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(asRoot ? 'runuser' : cmd, asRoot ? ['-u', 'postgres', '--', cmd, ...args] : args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  };
  writeFileSync(path.join(dir, 'pw'), password);
  if (asRoot) spawnSync('chown', ['-R', 'postgres', dir]);
  run(bin('initdb'), ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${path.join(dir, 'pw')}`]);
  const port = await freePortOn(['127.0.0.1']);
  run(bin('pg_ctl'), [
    '-D',
    path.join(dir, 'data'),
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    'start',
  ]);
  return {
    url: (pw) => `postgres://postgres:${encodeURIComponent(pw)}@127.0.0.1:${port}/da_pw`,
    stop: () => {
      run(bin('pg_ctl'), ['-D', path.join(dir, 'data'), '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
