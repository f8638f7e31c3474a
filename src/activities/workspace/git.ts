/**
 * Running git on the tools host: never a prompt (GIT_TERMINAL_PROMPT=0, no askpass), credentials
 * only from the worker's own environment and credential helper, no `ext::` transport, and
 * cancellable by the activity's signal.
 */
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export interface GitCall {
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Write stdout to this file instead of returning it (a patch may be large). */
  stdoutTo?: string;
}

/** The seam tests count clones through. */
export type GitRunner = (call: GitCall) => Promise<GitResult>;

const SAFE_CONFIG = ['-c', 'protocol.ext.allow=never', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'];

/**
 * glibc's malloc gives memory back after each of git's zlib streams and takes it again for the
 * next, a brk pair per object: `git add -A` of 10k small files made 37k brk calls and took 14–19 s
 * on a loaded 2-core VM, 3.7 s with these (docs/BENCHMARKS.md, section 14). Ignored elsewhere.
 */
const GLIBC_MALLOC = { MALLOC_TOP_PAD_: String(64 << 20), MALLOC_TRIM_THRESHOLD_: String(256 << 20) };

export const runGit: GitRunner = async ({ args, cwd, env, signal, stdoutTo }) => {
  const file = stdoutTo ? await fsp.open(stdoutTo, 'w') : undefined;
  try {
    return await new Promise<GitResult>((resolve) => {
      const child = spawn('git', [...SAFE_CONFIG, ...args], {
        cwd,
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '', LC_ALL: 'C', ...GLIBC_MALLOC, ...env },
        stdio: ['ignore', file ? file.fd : 'pipe', 'pipe'],
        ...(signal ? { signal } : {}),
      });
      const out: Buffer[] = [];
      let stderr = '';
      child.stdout?.on('data', (c: Buffer) => out.push(c));
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.on('error', (e) => resolve({ code: -1, stdout: Buffer.concat(out), stderr: stderr || e.message }));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr }));
    });
  } finally {
    await file?.close();
  }
};

/** Runs git and returns its stdout as text, or throws with its stderr. */
export async function gitText(git: GitRunner, call: GitCall): Promise<string> {
  const r = await git(call);
  if (r.code !== 0) throw new GitError(call.args, r);
  return r.stdout.toString('utf8').trim();
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.find((a) => !a.startsWith('-')) ?? ''} failed (exit ${result.code}): ${redact(lastLines(result.stderr))}`);
  }
}

/** git's last three lines of stderr, on one line. */
export function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' / ');
}

/** Text as it may be shown: no `user:password@` in any URL in it. */
export function redact(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@/\s]*@/gi, '$1***@');
}

/**
 * The identity of the base commit of a copied folder: fixed, so a retry's base is the same commit
 * (and a base made again from the same files on another host, too).
 */
export const BASE_IDENTITY = {
  GIT_AUTHOR_NAME: 'durable-agent',
  GIT_AUTHOR_EMAIL: 'durable-agent@localhost',
  GIT_COMMITTER_NAME: 'durable-agent',
  GIT_COMMITTER_EMAIL: 'durable-agent@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
};
