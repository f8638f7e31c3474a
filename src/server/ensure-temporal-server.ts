/**
 * Find (or build) the full Temporal server and its SQL schema tool, for `durable-agent server
 * --postgres` (ARCHITECTURE.md#temporal-on-postgresql).
 *
 * Built from source with Go into the same cache as the CLI (`go install
 * go.temporal.io/server/cmd/server@v1.29.1 …/cmd/tools/sql@v1.29.1`), beside the PostgreSQL schema
 * files of that module version, copied out of the Go module cache so a later `go clean -modcache`
 * cannot take them away. Nothing prebuilt is downloaded.
 *
 * `scripts/ensure-temporal-server.ts` is its command line (CI builds it ahead of the tests).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireLock, cacheDir, findGo, goInstall, isExecutableFile, TemporalBuildError, TemporalNotFoundError } from './ensure-temporal';

const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
const TEMPORAL_SERVER_VERSION = 'v1.30.8';
/** The temporalio/server and admin-tools images of the same release (docker-compose.yml). */
export const TEMPORAL_SERVER_IMAGE_VERSION = TEMPORAL_SERVER_VERSION.slice(1);

export interface TemporalServerInstall {
  /** The server binary (`temporal-server` in Temporal's images). */
  server: string;
  /** The SQL schema tool (`temporal-sql-tool` in Temporal's images). */
  sqlTool: string;
  /** `schema/postgresql/v12` of the server module: `temporal/versioned`, `visibility/versioned`. */
  schemaDir: string;
  /** `docker/config_template.yaml`: the environment variables the temporalio/server image reads. */
  dockerConfigTemplate: string;
}

function serverInstallDir(): string {
  return path.join(cacheDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

function installPaths(dir = serverInstallDir()): TemporalServerInstall {
  return {
    server: path.join(dir, 'bin', 'server'),
    sqlTool: path.join(dir, 'bin', 'sql'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
    dockerConfigTemplate: path.join(dir, 'docker', 'config_template.yaml'),
  };
}

function complete(install: TemporalServerInstall): boolean {
  return (
    isExecutableFile(install.server) &&
    isExecutableFile(install.sqlTool) &&
    fs.existsSync(path.join(install.schemaDir, 'temporal', 'versioned')) &&
    fs.existsSync(path.join(install.schemaDir, 'visibility', 'versioned')) &&
    fs.existsSync(install.dockerConfigTemplate)
  );
}

/** Copy the PostgreSQL schema files (and the image's config template) of the server module from the Go module cache. */
function copyModuleFiles(goBin: string, install: TemporalServerInstall): void {
  const r = spawnSync(goBin, ['env', 'GOMODCACHE'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } });
  const moduleDir = path.join((r.stdout ?? '').trim(), `${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`);
  const copies: [string, string][] = [
    [path.join(moduleDir, 'schema', 'postgresql', 'v12'), install.schemaDir],
    [path.join(moduleDir, 'docker', 'config_template.yaml'), install.dockerConfigTemplate],
  ];
  for (const [src, dest] of copies) {
    if (r.status !== 0 || !fs.existsSync(src)) {
      throw new TemporalBuildError(
        `${src} is missing: the Go module cache does not hold ${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`,
      );
    }
    fs.rmSync(dest, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.cpSync(src, dest, { recursive: true });
  }
  // Module-cache files are read-only; ours need not be (so a rebuild can replace them).
  for (const entry of fs.readdirSync(install.schemaDir, { recursive: true, withFileTypes: true })) {
    fs.chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }
  fs.chmodSync(install.dockerConfigTemplate, 0o644);
}

/** The server, schema tool and schema files, building them with Go on first use (with progress). */
export async function ensureTemporalServer(opts: { log?: (line: string) => void; quiet?: boolean } = {}): Promise<TemporalServerInstall> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const info = opts.quiet ? () => undefined : log;
  const dir = serverInstallDir();
  const install = installPaths(dir);
  if (complete(install)) {
    info(`[temporal-server] using cached ${dir}`);
    return install;
  }
  const goBin = findGo();
  if (!goBin) {
    throw new TemporalNotFoundError(
      `The Temporal server is built from source with Go, and Go is not installed. Install Go (https://go.dev/dl/) and rerun: it is built into ${dir}. ` +
        'Or run the server with docker compose (docker-compose.yml).',
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  const release = await acquireLock(path.join(dir, 'build.lock'), log, `the Temporal server ${TEMPORAL_SERVER_VERSION}`);
  try {
    if (complete(install)) {
      info(`[temporal-server] using ${dir}, built by another process`);
      return install;
    }
    await goInstall(goBin, path.dirname(install.server), log, {
      packages: [
        `${TEMPORAL_SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`,
        `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
      ],
      label: `the Temporal server ${TEMPORAL_SERVER_VERSION} and temporal-sql-tool`,
      tag: '[temporal-server]',
    });
    copyModuleFiles(goBin, install);
  } finally {
    release();
  }
  if (!complete(install)) throw new TemporalBuildError(`go install finished but ${dir} is incomplete`);
  info(`[temporal-server] using ${dir}`);
  return install;
}
