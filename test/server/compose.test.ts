/**
 * docker-compose.yml, checked without a Docker engine: it validates against the Compose
 * specification's JSON schema (vendored in test/fixtures/compose, from compose-spec/compose-spec),
 * every image is pinned, every environment variable it gives our image is one the program it runs
 * reads (and every one it gives the Temporal server, one the server image reads), and the schema,
 * config and registration commands are the ones `durable-agent server --postgres` runs natively.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import ts from 'typescript';
import YAML from 'yaml';
import { HISTORY_SHARDS, SERVER_DYNAMIC_CONFIG } from '../../src/server/cluster';
import { ensureTemporalServer, TEMPORAL_SERVER_IMAGE_VERSION, type TemporalServerInstall } from '../../src/server/ensure-temporal-server';
import { schemaCommands } from '../../src/server/postgres';
import { AGENT_SEARCH_ATTRIBUTES } from '../../src/server/dev-server';

const ROOT = path.resolve(__dirname, '..', '..');
const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = YAML.parse(text, { merge: true }) as {
  services: Record<
    string,
    { image?: string; build?: unknown; command?: string[]; environment?: Record<string, string>; volumes?: string[]; profiles?: string[] }
  >;
};
const services = compose.services;
const ourVersion = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let install: TemporalServerInstall;
beforeAll(async () => {
  install = await ensureTemporalServer({ quiet: true });
}, 900_000);

function validator() {
  const schema = JSON.parse(readFileSync(path.join(ROOT, 'test', 'fixtures', 'compose', 'compose-spec.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  delete schema.$schema; // draft-07, Ajv's default; its URL form here is not one Ajv has registered
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

test('docker-compose.yml validates against the Compose specification schema (and a broken copy does not)', () => {
  const validate = validator();
  // Compose resolves YAML merge keys (<<: *durable-agent) before it validates: so do we.
  expect(validate(compose) ? [] : validate.errors).toEqual([]);
  // The schema really checks: a misspelt service key and a depends_on that is neither list nor map are rejected.
  const broken = YAML.parse(text, { merge: true }) as { services: Record<string, Record<string, unknown>> };
  broken.services.worker!.healthchek = broken.services.worker!.healthcheck;
  broken.services.temporal!.depends_on = 'temporal-schema';
  expect(validate(broken)).toBe(false);
  expect(JSON.stringify(validate.errors)).toContain('healthchek');
});

test('every image is pinned to a version; our own image is built here and tagged with the package version', () => {
  for (const [name, svc] of Object.entries(services)) {
    expect({ name, image: svc.image }).toEqual({ name, image: expect.stringMatching(/^[a-z0-9./-]+:\d+\.\d+(\.\d+)?[\w.-]*$/) });
    if (svc.build !== undefined) expect({ name, image: svc.image }).toEqual({ name, image: `durable-agent:${ourVersion}` });
  }
  expect(services.temporal!.image).toBe(`temporalio/server:${TEMPORAL_SERVER_IMAGE_VERSION}`);
  // From 1.30 the admin-tools image is tagged with the server release alone (no tctl/cli suffix).
  expect(services['temporal-schema']!.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_IMAGE_VERSION}`);
  expect(services['temporal-setup']!.image).toBe(services['temporal-schema']!.image);
});

test('the worker is restarted when its process dies (a workflow-thread crash ends the whole process)', () => {
  expect((services.worker as { restart?: string }).restart).toBe('unless-stopped');
});

/** Files reachable by static imports from `entry` (the program a service runs). */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const options: ts.CompilerOptions = { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, allowJs: false };
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const body = readFileSync(file, 'utf8');
    const refs = ts.preProcessFile(body, true, true).importedFiles.map((r) => r.fileName);
    // cli.ts loads each command's module through lazy('<path>'): follow those too.
    for (const m of body.matchAll(/lazy<[^>]*>\('([^']+)'\)/g)) refs.push(m[1]!);
    for (const ref of refs) {
      const resolved = ts.resolveModuleName(ref, file, options, ts.sys).resolvedModule;
      if (resolved && !resolved.isExternalLibraryImport && resolved.resolvedFileName.startsWith(path.join(ROOT, 'src')))
        visit(resolved.resolvedFileName);
    }
  };
  visit(path.join(ROOT, entry));
  return [...seen];
}

/** Environment variable names a program reads: env.X, env['X'], and the name constants it passes around. */
function envNamesRead(entry: string): Set<string> {
  const names = new Set<string>();
  let usesEnvconfig = false;
  for (const file of reachable(entry)) {
    const body = readFileSync(file, 'utf8');
    for (const m of body.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"`]([A-Z][A-Z0-9_]+)['"`]\])/g)) names.add((m[1] ?? m[2])!);
    for (const m of body.matchAll(/['"`]((?:DURABLE_AGENT|OPENAI|TEMPORAL)_[A-Z0-9_]+)['"`]/g)) names.add(m[1]!);
    usesEnvconfig ||= body.includes("'@temporalio/envconfig'");
  }
  if (usesEnvconfig) {
    const lib = path.join(ROOT, 'node_modules', '@temporalio', 'envconfig', 'lib');
    for (const f of readdirSync(lib).filter((f) => f.endsWith('.js'))) {
      for (const m of readFileSync(path.join(lib, f), 'utf8').matchAll(/['"`](TEMPORAL_[A-Z0-9_]+)['"`]/g)) names.add(m[1]!);
    }
  }
  return names;
}

test('every environment variable given to our image is one the program it runs reads', () => {
  const entries: Record<string, string> = {
    worker: 'src/worker/main.ts',
    'scripted-model': 'src/testing/scripted-model-cli.ts',
    run: 'src/cli/main.ts',
  };
  const ours = Object.entries(services).filter(([, svc]) => svc.image === `durable-agent:${ourVersion}`);
  expect(ours.map(([n]) => n).sort()).toEqual(['demo', 'scripted-model', 'worker', 'worker-demo']);
  for (const [name, svc] of ours) {
    const command = svc.command![0]!;
    const entry = entries[command];
    expect({ name, command, known: entry !== undefined }).toEqual({ name, command, known: true });
    const read = envNamesRead(entry!);
    expect(read.has('OPENAI_API_KEY') || command !== 'worker').toBe(true); // the scan finds what the worker reads
    const unread = Object.keys(svc.environment ?? {}).filter((k) => !read.has(k));
    expect({ name, unread }).toEqual({ name, unread: [] });
  }
  // A variable nothing reads is caught.
  expect(envNamesRead('src/worker/main.ts').has('DURABLE_AGENT_NO_SUCH_SETTING')).toBe(false);
});

test('the Temporal server gets only variables its image reads, our shard count, and our dynamic config', () => {
  const template = readFileSync(install.dockerConfigTemplate, 'utf8');
  const imageReads = new Set([...template.matchAll(/\.Env\.([A-Z0-9_]+)/g)].map((m) => m[1]!));
  const env = services.temporal!.environment!;
  expect(Object.keys(env).filter((k) => !imageReads.has(k))).toEqual([]);
  expect(env).toMatchObject({
    DB: 'postgres12',
    NUM_HISTORY_SHARDS: String(HISTORY_SHARDS),
    DBNAME: 'temporal',
    VISIBILITY_DBNAME: 'temporal_visibility',
  });
  // The mounted dynamic config file is the one named by DYNAMIC_CONFIG_FILE_PATH, and holds SERVER_DYNAMIC_CONFIG.
  const mount = services.temporal!.volumes!.find((v) => v.split(':')[1] === env.DYNAMIC_CONFIG_FILE_PATH);
  expect(mount).toBeDefined();
  const file = YAML.parse(readFileSync(path.join(ROOT, mount!.split(':')[0]!), 'utf8')) as Record<string, { value: unknown }[]>;
  const values = Object.fromEntries(Object.entries(file).map(([k, v]) => [k, v[0]!.value]));
  expect(values).toEqual(SERVER_DYNAMIC_CONFIG);
});

test('the schema service runs the temporal-sql-tool commands --postgres runs, and registers our search attributes', () => {
  const script = services['temporal-schema']!.command!.join('\n');
  const lines = script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const expected: string[] = [];
  for (const [database, dir] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const cmds = schemaCommands({
      host: 'postgresql',
      port: 5432,
      user: 'temporal',
      database,
      versionedDir: `/etc/temporal/schema/postgresql/v12/${dir}/versioned`,
    });
    expected.push(...[cmds.create, cmds.setup, cmds.update].map((args) => `temporal-sql-tool ${args.join(' ')}`));
  }
  expect(lines).toEqual(expected);
  // The password reaches the tool as it does natively: SQL_PASSWORD, never a flag.
  expect(Object.keys(services['temporal-schema']!.environment!)).toEqual(['SQL_PASSWORD']);
  // Same database names as the server's environment.
  expect(services.temporal!.environment!.POSTGRES_SEEDS).toBe('postgresql');
  expect(services.temporal!.environment!.POSTGRES_USER).toBe('temporal');

  const setup = services['temporal-setup']!.command!.join('\n');
  const create = setup.split('\n').find((l) => l.includes('search-attribute create'))!;
  const pairs = [...create.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => [m[1], m[2]]);
  expect(Object.fromEntries(pairs)).toEqual(AGENT_SEARCH_ATTRIBUTES);
});
