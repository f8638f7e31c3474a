/**
 * The operations seam: every filesystem and process effect a tool has goes through `ToolOps`, so
 * a tool can be pointed at another filesystem (a sandbox, a remote host) without touching its
 * logic. The default implementation is plain `node:fs` and `node:child_process`.
 */
import { createAttemptJournal, defaultJournalDir, type AttemptJournal } from './attempts';
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { PASS_ENV_VAR, parsePassList, parseScrubList, SCRUB_ENV_VAR } from './env';
import { findExecutable } from './which';
import { createSandbox, sandboxOptionsFromEnv, type Sandbox } from '../sandbox';

export { findExecutable };

/** SIGKILL a process group a command was started in (detached): the command and everything it started. */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export interface FileStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  size: number;
  mtimeMs: number;
}

interface DirEntry {
  name: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
}

/**
 * Given to a file operation when path rules apply (docs/ARCHITECTURE.md#path-rules-on-real-paths):
 * called with the real path of the file actually opened — as the kernel names it, after the open —
 * before a byte is read or written; it throws to refuse. Checking the path before opening leaves a
 * gap a swapped symlink could use; checking the opened file does not.
 */
interface OpenCheck {
  verify(openedPath: string): void;
}

export interface ToolFs {
  readFile(p: string, check?: OpenCheck): Promise<Buffer>;
  /** The first `bytes` bytes of a file (binary sniffing without reading the whole file). */
  readPrefix(p: string, bytes: number, check?: OpenCheck): Promise<Buffer>;
  /** The file as a stream of chunks (line scanning of files too big to hold). */
  readChunks(p: string, check?: OpenCheck): AsyncIterable<Buffer>;
  /** Creates or replaces the content. With a check, a file it created and then refused is removed again. */
  writeFile(p: string, data: string, check?: OpenCheck): Promise<void>;
  /** Follows symlinks. */
  stat(p: string): Promise<FileStat>;
  /** Does not follow a final symlink. */
  lstat(p: string): Promise<FileStat>;
  readdir(p: string): Promise<DirEntry[]>;
  realpath(p: string): Promise<string>;
  readlink(p: string): Promise<string>;
  /** Recursive: creates missing parents, no error when it exists. */
  mkdir(p: string): Promise<void>;
}

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export interface ToolOps {
  fs: ToolFs;
  spawn: SpawnFn;
  /** The environment Bash children start from, before scrubbing (default: the worker's). */
  baseEnv: NodeJS.ProcessEnv;
  /** Extra variable names (or `PREFIX_*` / `*_SUFFIX` patterns) scrubbed from Bash children. */
  scrubEnvNames: string[];
  /** Path of `rg`; null forces Grep's JS fallback. */
  ripgrep: string | null;
  /** Durable record of started attempts of non-idempotent commands (ARCHITECTURE.md#side-effects-reported-as-unknown). */
  attempts: AttemptJournal;
  /** Wraps Bash commands and command hooks in bubblewrap (docs/ARCHITECTURE.md#bash-sandbox). */
  sandbox: Sandbox;
}

export interface ToolOpsOptions {
  fs?: ToolFs;
  spawn?: SpawnFn;
  baseEnv?: NodeJS.ProcessEnv;
  /** Default: the worker's `DURABLE_AGENT_SCRUB_ENV` (comma-separated). */
  scrubEnvNames?: string[];
  /** Default: `rg` looked up on PATH; pass null to force the JS fallback. */
  ripgrep?: string | null;
  /** Default: a journal under $XDG_STATE_HOME (or ~/.local/state)/durable-agent/attempts. */
  attempts?: AttemptJournal;
  /** Default: from DURABLE_AGENT_BWRAP / DURABLE_AGENT_SANDBOX / DURABLE_AGENT_SANDBOX_DENY_READ. */
  sandbox?: Sandbox;
}

function toStat(s: import('node:fs').Stats): FileStat {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymbolicLink: s.isSymbolicLink(),
    size: s.size,
    mtimeMs: s.mtimeMs,
  };
}

/** The path of an open file as the kernel has it (Linux); elsewhere, the realpath of the name just opened. */
async function openedPath(fh: fsp.FileHandle, p: string): Promise<string> {
  try {
    return await fsp.readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return fsp.realpath(p);
  }
}

async function openChecked(p: string, flags: string, check: OpenCheck | undefined): Promise<fsp.FileHandle> {
  const fh = await fsp.open(p, flags);
  if (!check) return fh;
  try {
    check.verify(await openedPath(fh, p));
  } catch (e) {
    await fh.close();
    throw e;
  }
  return fh;
}

async function writeChecked(p: string, data: string, check: OpenCheck): Promise<void> {
  let fh: fsp.FileHandle;
  let created = false;
  try {
    // No O_TRUNC before the check: a refused write must leave the file as it was.
    fh = await fsp.open(p, 'r+');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // O_EXCL: never through a symlink that appeared since the path was resolved.
    fh = await fsp.open(p, 'wx');
    created = true;
  }
  const opened = await openedPath(fh, p);
  try {
    check.verify(opened);
  } catch (e) {
    await fh.close();
    if (created) await fsp.unlink(opened).catch(() => undefined);
    throw e;
  }
  try {
    await fh.truncate(0);
    await fh.writeFile(data, 'utf8');
  } finally {
    await fh.close();
  }
}

export const nodeFs: ToolFs = {
  async readFile(p, check) {
    if (!check) return fsp.readFile(p);
    const fh = await openChecked(p, 'r', check);
    try {
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  },
  async readPrefix(p, bytes, check) {
    const fh = await openChecked(p, 'r', check);
    try {
      const buf = Buffer.alloc(bytes);
      const { bytesRead } = await fh.read(buf, 0, bytes, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  },
  readChunks(p, check) {
    if (!check) return createReadStream(p);
    return (async function* () {
      const fh = await openChecked(p, 'r', check);
      // The stream closes the handle when it ends or is destroyed.
      yield* fh.createReadStream() as AsyncIterable<Buffer>;
    })();
  },
  writeFile: (p, data, check) => (check ? writeChecked(p, data, check) : fsp.writeFile(p, data, 'utf8')),
  stat: async (p) => toStat(await fsp.stat(p)),
  lstat: async (p) => toStat(await fsp.lstat(p)),
  async readdir(p) {
    const entries = await fsp.readdir(p, { withFileTypes: true });
    return entries.map((e) => ({
      name: e.name,
      type: e.isFile() ? 'file' : e.isDirectory() ? 'dir' : e.isSymbolicLink() ? 'symlink' : 'other',
    }));
  },
  realpath: (p) => fsp.realpath(p),
  readlink: (p) => fsp.readlink(p),
  mkdir: async (p) => {
    await fsp.mkdir(p, { recursive: true });
  },
};

/**
 * The tools' seam. A worker passes what its settings (src/worker/settings.ts) hold; options left out
 * are read from this process's environment, for ops made outside a worker (tests, defaultToolOps).
 */
export function createToolOps(options: ToolOpsOptions = {}): ToolOps {
  // Checked now, so a bad DURABLE_AGENT_PASS_ENV fails the worker's start-up; read again at each spawn.
  parsePassList((options.baseEnv ?? process.env)[PASS_ENV_VAR]);
  return {
    fs: options.fs ?? nodeFs,
    spawn: options.spawn ?? ((cmd, args, opts) => nodeSpawn(cmd, args, opts)),
    // Read at spawn time, not captured: the worker's environment as it is when a command runs.
    get baseEnv() {
      return options.baseEnv ?? process.env;
    },
    scrubEnvNames: options.scrubEnvNames ?? parseScrubList(process.env[SCRUB_ENV_VAR]),
    ripgrep: options.ripgrep === undefined ? findExecutable('rg') : options.ripgrep,
    attempts: options.attempts ?? createAttemptJournal(defaultJournalDir(process.env)),
    // Built now, so a bad DURABLE_AGENT_SANDBOX fails the worker's start-up, not its first command.
    sandbox: options.sandbox ?? createSandbox(sandboxOptionsFromEnv(process.env)),
  };
}

let defaultOps: ToolOps | undefined;

/** Real node fs / child_process, built on first use (not at import time). */
export function defaultToolOps(): ToolOps {
  defaultOps ??= createToolOps();
  return defaultOps;
}
