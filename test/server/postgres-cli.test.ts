/**
 * `durable-agent server --postgres URL` as a user runs it (a spawned CLI, the machine's real
 * PostgreSQL): it creates the databases, serves the namespace with our search attributes, prints
 * the address, and stops cleanly on SIGTERM; bad input exits 2 naming the problem — before
 * anything is built, which a fresh cache directory shows.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { canBind, freePortOn } from '../../src/server/cluster';
import { ensureTemporalServer, type TemporalServerInstall } from '../../src/server/ensure-temporal-server';
import { parsePostgresUrl, setupSchemas } from '../../src/server/postgres';
import { AGENT_SEARCH_ATTRIBUTES } from '../../src/server/dev-server';
import { spawnCli } from '../cli/helpers';
import { databaseExists, dropDatabases, sqlIn, startPasswordPostgres, uniqueDatabaseUrl } from '../helpers/postgres';
import { connectTemporal } from '../../src/server/connection';

let install: TemporalServerInstall;
const urls: string[] = [];

beforeAll(async () => {
  install = await ensureTemporalServer({ quiet: true });
}, 900_000);

afterAll(async () => {
  for (const url of urls) await dropDatabases(url);
});

function dbUrl(label: string): string {
  const url = uniqueDatabaseUrl(label);
  urls.push(url);
  return url;
}

/** Run the CLI with an empty cache: any build or schema step would show there. */
async function refused(args: string[]): Promise<{ stderr: string; cache: string }> {
  const cache = mkdtempSync(path.join(tmpdir(), 'da-cache-'));
  const p = spawnCli(['server', ...args], { env: { ...process.env, XDG_CACHE_HOME: cache } });
  const r = await p.done;
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr).not.toContain('[temporal-server]');
  expect(readdirSync(cache)).toEqual([]); // nothing built
  return { stderr: r.stderr, cache };
}

test('bad input exits 2 naming the problem, before anything is built', async () => {
  expect((await refused(['--postgres', dbUrl('x'), '--nodes', '0'])).stderr).toContain('--nodes must be a whole number from 1 to 16');
  expect((await refused(['--nodes', '2'])).stderr).toContain('--nodes needs --postgres URL');
  expect((await refused(['--postgres', 'postgres:///temporal'])).stderr).toContain('--postgres: the URL has no host');
  expect((await refused(['--postgres', 'mysql://h/db'])).stderr).toContain('must start with postgres://');
  expect((await refused(['--postgres', dbUrl('x'), '--ui-port', '8080'])).stderr).toContain('--ui-port is not available with --postgres');
  for (const bad of ['0', 'x', '7233'])
    expect((await refused(['--postgres', dbUrl('x'), '--metrics-port', bad])).stderr).toContain(
      `--metrics-port must be a port number from 1 to 65535 other than --port, got '${bad}'`,
    );
  const closed = await freePortOn(['127.0.0.1']);
  expect((await refused(['--postgres', `postgres://postgres@127.0.0.1:${closed}/temporal`])).stderr).toContain(
    `PostgreSQL at 127.0.0.1:${closed} (user postgres) is unreachable (ECONNREFUSED)`,
  );
}, 120_000);

test('a wrong password exits 2 saying so, before anything is built', async () => {
  const pg = await startPasswordPostgres('right-secret');
  try {
    const { stderr } = await refused(['--postgres', pg.url('wrong-secret')]);
    expect(stderr).toContain('refused the password in the --postgres URL (wrong password)');
    expect(stderr).not.toContain('wrong-secret');
  } finally {
    pg.stop();
  }
}, 120_000);

test('a schema newer than the server binary exits 2 saying so, and is left untouched', async () => {
  const url = dbUrl('newer');
  const target = parsePostgresUrl(url);
  await setupSchemas(target, install, () => undefined);
  await sqlIn(target, target.database, "UPDATE schema_version SET curr_version = '99.0'");
  const p = spawnCli(['server', '--postgres', url, '--port', String(await freePortOn(['127.0.0.1']))]);
  const r = await p.done;
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`database ${target.database} has schema version 99.0, newer than this Temporal server supports`);
  expect(await sqlIn(target, target.database, 'SELECT curr_version FROM schema_version')).toEqual([{ curr_version: '99.0' }]);
}, 120_000);

test('creates the databases, serves the namespace with our search attributes, prints the address, stops on SIGTERM', async () => {
  const url = dbUrl('cli');
  const port = await freePortOn(['127.0.0.1']);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'da-pg-cli-'));
  const p = spawnCli(['server', '--postgres', url, '--port', String(port), '--state-dir', stateDir]);
  // On a failed assertion, still take the server down (SIGTERM is what the test checks anyway).
  const stopOnFailure = () => p.child.exitCode === null && p.child.kill('SIGTERM');
  try {
    await check(p, url, port, stateDir);
  } catch (e) {
    stopOnFailure();
    await p.done;
    throw e;
  }
}, 400_000);

async function check(p: ReturnType<typeof spawnCli>, url: string, port: number, stateDir: string): Promise<void> {
  const target = parsePostgresUrl(url);
  await p.waitForLine(/Press Ctrl-C to stop/, 300_000);
  expect(p.stdout()).toContain(`export TEMPORAL_ADDRESS=127.0.0.1:${port}`);
  expect(await databaseExists(target.database)).toBe(true);
  expect(await databaseExists(target.visibilityDatabase)).toBe(true);
  // 16 history shards, and the dynamic-config fix in the node's config.
  expect(await sqlIn(target, target.database, 'SELECT count(*)::int AS n FROM shards')).toEqual([{ n: 16 }]);
  expect(readFileSync(path.join(stateDir, 'dynamicconfig.yaml'), 'utf8')).toMatch(
    /history\.transferProcessorMaxPollRPS:\n\s+- value: 1000/,
  );

  const connection = await connectTemporal({ address: `127.0.0.1:${port}` });
  try {
    const attrs = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(attrs.customAttributes ?? {})).toEqual(expect.arrayContaining(Object.keys(AGENT_SEARCH_ATTRIBUTES)));
  } finally {
    await connection.close();
  }

  p.child.kill('SIGTERM');
  const r = await p.done;
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('stopped.');
  expect(await canBind(port, '127.0.0.1')).toBe(true); // the server process is gone with it
}
