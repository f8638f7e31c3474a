/**
 * Find (or build) the Temporal CLI, which embeds the dev server we run for tests, the demo and
 * `durable-agent server`.
 *
 * Order: $DURABLE_AGENT_TEMPORAL_BIN; `temporal` on PATH; the cached build at
 * `${XDG_CACHE_HOME:-~/.cache}/durable-agent/bin/temporal`; else build it from source with Go
 * (`go install github.com/temporalio/cli/cmd/temporal@v1.5.1`, later tags cannot be
 * `go install`ed). Nothing downloads a prebuilt binary.
 *
 * `scripts/ensure-temporal.ts` is its command line (used by CI to build the CLI ahead of the tests).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
const TEMPORAL_CLI_VERSION = 'v1.5.1';

export interface EnsureTemporalOptions {
  /** Suppress the informational lines (where the binary was found). Build progress is always
   *  printed: a first build takes minutes and silence would look like a hang. */
  quiet?: boolean;
  /** Where progress lines go (default: stderr). */
  log?: (line: string) => void;
}

/** Thrown when no Temporal CLI is available and none can be built. `code` is the exit code. */
export class TemporalNotFoundError extends Error {
  readonly code = 2;
  constructor(message: string) {
    super(message);
    this.name = 'TemporalNotFoundError';
  }
}

/** Thrown when `go install` fails. */
export class TemporalBuildError extends Error {
  readonly code = 1;
  constructor(message: string) {
    super(message);
    this.name = 'TemporalBuildError';
  }
}

export function cacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && xdg.length > 0 ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'durable-agent');
}

function cachedBinaryPath(): string {
  return path.join(cacheDir(), 'bin', process.platform === 'win32' ? 'temporal.exe' : 'temporal');
}

export function isExecutableFile(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Full path of `name` on PATH, or undefined. */
function whichSync(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d.length > 0);
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** `<bin> --version` output if the binary runs, else undefined. */
function temporalVersion(bin: string): string | undefined {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error || r.status !== 0) return undefined;
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  return out.length > 0 ? out : 'temporal (unknown version)';
}

export function findGo(): string | undefined {
  const onPath = whichSync('go');
  if (onPath) return onPath;
  // The usual tarball install location, often not on a non-login shell's PATH.
  const usual = '/usr/local/go/bin/go';
  return isExecutableFile(usual) ? usual : undefined;
}

function notFoundMessage(): string {
  return [
    'No Temporal CLI found, and Go is not installed to build one.',
    'Get one of these, then rerun:',
    '  - install it with a package manager, e.g. `brew install temporal`',
    "  - Temporal's install script: `curl -sSf https://temporal.download/cli.sh | sh` (puts `temporal` in ~/.temporalio/bin; add it to PATH)",
    '  - or skip the CLI: `docker compose up` with the temporalio/auto-setup image, and point TEMPORAL_ADDRESS at it',
    `  - or install Go (https://go.dev/dl/) and rerun: the CLI is built from source into ${cachedBinaryPath()}`,
    'You can also set DURABLE_AGENT_TEMPORAL_BIN to the path of an existing `temporal` binary.',
  ].join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take the build lock; resolves with a release function. Waits while another live process
 *  holds it; removes a lock left by a dead process. */
export async function acquireLock(lockPath: string, log: (line: string) => void, what = 'the Temporal CLI'): Promise<() => void> {
  const start = Date.now();
  let lastHeartbeat = start;
  let announced = false;
  for (;;) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return () => {
        try {
          fs.unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = NaN;
    try {
      holder = parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
    } catch {
      continue; // vanished between open and read: retry at once
    }
    if (Number.isFinite(holder) && !pidAlive(holder)) {
      log(`[temporal] removing stale build lock left by dead process ${holder}`);
      try {
        fs.unlinkSync(lockPath);
      } catch {
        // someone else removed it
      }
      continue;
    }
    if (!Number.isFinite(holder) && Date.now() - start < 2000) {
      // Lock file just created, pid not written yet.
      await sleep(100);
      continue;
    }
    if (!announced) {
      log(
        `[temporal] another process (pid ${Number.isFinite(holder) ? holder : '?'}) is building ${what}; waiting for it (lock: ${lockPath})`,
      );
      announced = true;
    }
    if (Date.now() - lastHeartbeat >= 15_000) {
      lastHeartbeat = Date.now();
      log(`[temporal] still waiting for the other build... ${Math.round((Date.now() - start) / 1000)}s elapsed`);
    }
    await sleep(1000);
  }
}

/** What `goInstall` builds: the package paths with their version, and a name for progress lines. */
export interface GoInstallTarget {
  packages: string[];
  label: string;
  /** Prefix of progress lines, e.g. `[temporal]`. */
  tag: string;
}

const CLI_TARGET: GoInstallTarget = {
  packages: [`${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`],
  label: `the Temporal CLI ${TEMPORAL_CLI_VERSION}`,
  tag: '[temporal]',
};

export async function goInstall(
  goBin: string,
  binDir: string,
  log: (line: string) => void,
  target: GoInstallTarget = CLI_TARGET,
): Promise<void> {
  const { tag } = target;
  const start = Date.now();
  log(`${tag} building ${target.label} from source with ${goBin} into ${binDir}`);
  log(`${tag} the first build takes a few minutes (downloads modules, compiles the server); later runs reuse it`);
  const child = spawn(goBin, ['install', ...target.packages], {
    env: { ...process.env, GOTOOLCHAIN: 'local', GOBIN: binDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const onData = (buf: Buffer): void => {
    for (const line of buf.toString('utf8').split(/\r?\n/)) {
      if (line.trim().length === 0) continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      log(`${tag}   ${line}`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const heartbeat = setInterval(() => {
    log(`${tag} still building... ${Math.round((Date.now() - start) / 1000)}s elapsed`);
  }, 15_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c) => resolve(c));
    });
    if (code !== 0) {
      throw new TemporalBuildError(`go install ${target.packages.join(' ')} failed (exit ${code}):\n${tail.join('\n')}`);
    }
  } finally {
    clearInterval(heartbeat);
  }
  log(`${tag} built in ${Math.round((Date.now() - start) / 1000)}s`);
}

/** Path of a runnable Temporal CLI, building it with Go if needed. */
export async function ensureTemporal(opts: EnsureTemporalOptions = {}): Promise<string> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const info = opts.quiet ? () => undefined : log;

  const fromEnv = process.env.DURABLE_AGENT_TEMPORAL_BIN;
  if (fromEnv && fromEnv.length > 0) {
    const version = temporalVersion(fromEnv);
    if (!version) {
      throw new TemporalNotFoundError(`DURABLE_AGENT_TEMPORAL_BIN=${fromEnv} does not run (\`${fromEnv} --version\` failed)`);
    }
    info(`[temporal] using DURABLE_AGENT_TEMPORAL_BIN=${fromEnv} (${version})`);
    return fromEnv;
  }

  const onPath = whichSync('temporal');
  if (onPath) {
    const version = temporalVersion(onPath);
    if (version) {
      info(`[temporal] using ${onPath} from PATH (${version})`);
      return onPath;
    }
    info(`[temporal] ignoring ${onPath} on PATH: \`--version\` failed`);
  }

  const cached = cachedBinaryPath();
  const cachedVersion = isExecutableFile(cached) ? temporalVersion(cached) : undefined;
  if (cachedVersion) {
    info(`[temporal] using cached ${cached} (${cachedVersion})`);
    return cached;
  }

  const goBin = findGo();
  if (!goBin) throw new TemporalNotFoundError(notFoundMessage());

  const binDir = path.dirname(cached);
  fs.mkdirSync(binDir, { recursive: true });
  const release = await acquireLock(path.join(cacheDir(), 'temporal-build.lock'), log);
  try {
    // Another process may have finished the build while we waited for the lock.
    const version = isExecutableFile(cached) ? temporalVersion(cached) : undefined;
    if (version) {
      info(`[temporal] using ${cached} (${version}), built by another process`);
      return cached;
    }
    await goInstall(goBin, binDir, log);
  } finally {
    release();
  }
  const version = temporalVersion(cached);
  if (!version) throw new TemporalBuildError(`go install finished but ${cached} does not run`);
  info(`[temporal] using ${cached} (${version})`);
  return cached;
}
