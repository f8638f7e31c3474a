/**
 * One command hook: `sh -c COMMAND` in the session's cwd, in the session's Bash sandbox
 * (docs/ARCHITECTURE.md#bash-sandbox) and its own process group (a timeout or a cancellation
 * kills everything it started), Claude Code's JSON on stdin, the worker's environment by the same
 * allowlist as Bash's (ARCHITECTURE.md#secrets-stay-on-workers) plus CLAUDE_PROJECT_DIR.
 */
import { statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { HookEvent, HookRun } from '../../shared/hooks';
import type { SandboxSettings } from '../../shared/sandbox';
import type { Sandbox } from '../sandbox';
import { buildChildEnv } from '../tools/env';
import { killGroup, type SpawnFn, type ToolOps } from '../tools/ops';
import { capText, commandStdoutDecision } from './output';

export const HOOK_DEFAULT_TIMEOUT_S = 60;
/** stdout beyond this is not read: a decision is small (HOOK_OUTPUT_MAX_BYTES); the rest is noise. */
const STDOUT_MAX_CHARS = 1024 * 1024;
/** After the shell exits, how long its pipes may stay open (a background job holding them). */
const PIPE_GRACE_MS = 1_000;

export interface CommandHookRequest {
  /** For messages and the run's name. */
  name: string;
  event: HookEvent;
  command: string;
  timeoutS?: number;
  cwd: string;
  sessionId: string;
  /** The session's sandbox setting; absent: the worker's default. */
  sandbox?: SandboxSettings;
  /** Writable in the sandbox besides cwd. */
  additionalDirectories: readonly string[];
  /** The session's `env`, added after scrubbing. */
  sessionEnv: Record<string, string>;
  /** JSON text for stdin. */
  stdin: string;
  signal: AbortSignal;
}

/**
 * What to spawn for a command, or why it must not run (a session that requires a sandbox on a
 * worker where none works). The one place a sandbox wraps hook commands (docs/ARCHITECTURE.md#bash-sandbox).
 */
type Launch = { file: string; args: string[]; env?: Record<string, string> } | { refused: string };

export type Launcher = (argv: string[], req: CommandHookRequest) => Promise<Launch>;

/** Unsandboxed: the argv as it is. */
export const directLaunch: Launcher = async ([file, ...args]) => ({ file: file!, args });

/** In the session's sandbox, exactly as its Bash commands run (same settings, cwd, directories, private tmp). */
export function sandboxLauncher(sandbox: Sandbox): Launcher {
  return async (argv, req) => {
    const how = await sandbox.launch({
      ...(req.sandbox ? { settings: req.sandbox } : {}),
      cwd: req.cwd,
      additionalDirectories: req.additionalDirectories,
      sessionId: req.sessionId,
      argv,
      commandText: req.command,
    });
    return how.kind === 'refused' ? { refused: how.message } : { file: how.file, args: how.args, env: how.env };
  };
}

export async function runCommandHook(
  req: CommandHookRequest,
  ops: Pick<ToolOps, 'spawn' | 'baseEnv' | 'scrubEnvNames'>,
  launch: Launcher,
): Promise<HookRun> {
  const started = Date.now();
  const run = (r: Omit<HookRun, 'hook' | 'durationMs'>): HookRun => ({ hook: req.name, durationMs: Date.now() - started, ...r });
  try {
    if (!statSync(req.cwd).isDirectory()) throw new Error('not a directory');
  } catch {
    return run({ outcome: 'error', exitCode: null, error: `working directory does not exist: ${req.cwd}` });
  }
  const timeoutS = req.timeoutS ?? HOOK_DEFAULT_TIMEOUT_S;
  const env = {
    ...buildChildEnv({ base: ops.baseEnv, scrub: ops.scrubEnvNames, sessionEnv: req.sessionEnv }),
    CLAUDE_PROJECT_DIR: req.cwd,
  };
  const how = await launch(['sh', '-c', req.command], req);
  if ('refused' in how) {
    // A guard that cannot run must not let the tool through unguarded: PreToolUse fails closed.
    return run({
      outcome: 'error',
      exitCode: null,
      error: how.refused,
      ...(req.event === 'PreToolUse' ? { blockReason: capText(how.refused) } : {}),
    });
  }
  const p = await spawnAndWait(ops.spawn, {
    file: how.file,
    args: how.args,
    env: { ...env, ...how.env },
    cwd: req.cwd,
    stdin: req.stdin,
    timeoutMs: timeoutS * 1000,
    signal: req.signal,
  });
  // A hook that could not run (not started, not found, not executable, timed out, killed) decided
  // nothing: for PreToolUse that denies the call — a guard that cannot run never waves it through.
  const cannotRun = (r: Omit<HookRun, 'hook' | 'durationMs'> & { error: string }) =>
    run(req.event === 'PreToolUse' ? { ...r, blockReason: couldNotRun(req.name, r.error) } : r);
  if (p.spawnError) return cannotRun({ outcome: 'error', exitCode: null, error: `could not be started (${p.spawnError})` });
  if (p.timedOut)
    return cannotRun({ outcome: 'timeout', exitCode: null, error: `timed out after ${timeoutS} s; its process group was killed` });
  if (p.aborted) return run({ outcome: 'error', exitCode: null, error: 'cancelled; its process group was killed' });
  if (p.exitCode === 2) {
    const reason = p.stderr.trim();
    return run({ outcome: 'blocked', exitCode: 2, ...(reason ? { blockReason: capText(reason) } : {}) });
  }
  if (p.exitCode === 0) {
    const decision = commandStdoutDecision(p.stdout, req.event);
    if (decision && 'problem' in decision) return run({ outcome: 'error', exitCode: 0, error: decision.problem });
    return run({ outcome: 'success', exitCode: 0, ...(decision ? { output: decision.output } : {}) });
  }
  // Described without the command's output: stdout/stderr of a failing hook may hold anything.
  if (p.exitCode === null) return cannotRun({ outcome: 'error', exitCode: null, error: `killed by ${p.exitSignal ?? 'a signal'}` });
  // sh's own codes: the command (or its script) was not found (127) or could not be executed (126).
  if (p.exitCode === 127) return cannotRun({ outcome: 'error', exitCode: 127, error: 'exited 127: command or script not found' });
  if (p.exitCode === 126) return cannotRun({ outcome: 'error', exitCode: 126, error: 'exited 126: command or script not executable' });
  // Any other code is the hook's own answer, a non-blocking error as in Claude Code.
  return run({ outcome: 'error', exitCode: p.exitCode, error: `exited ${p.exitCode}` });
}

/** What the model is told when a PreToolUse hook could not run: which hook, and why. */
export function couldNotRun(hook: string, why: string): string {
  return `The PreToolUse hook ${hook} could not run (${why}), so the call was denied: a guard hook that cannot run never lets a call through.`;
}

interface Spawned {
  exitCode: number | null;
  exitSignal?: string;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  spawnError?: string;
}

function spawnAndWait(
  spawn: SpawnFn,
  opts: { file: string; args: string[]; env: Record<string, string>; cwd: string; stdin: string; timeoutMs: number; signal: AbortSignal },
): Promise<Spawned> {
  return new Promise((resolve) => {
    const result: Spawned = { exitCode: null, stdout: '', stderr: '', timedOut: false, aborted: false };
    if (opts.signal.aborted) return resolve({ ...result, aborted: true });
    const child = spawn(opts.file, opts.args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const limits = { stdout: STDOUT_MAX_CHARS, stderr: STDOUT_MAX_CHARS };
    for (const name of ['stdout', 'stderr'] as const) {
      child[name]?.on('data', (chunk: Buffer) => {
        if (result[name].length < limits[name]) result[name] += decoders[name].write(chunk);
      });
    }
    // A hook that never reads its stdin closes the pipe: not an error.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.stdin);
    let done = false;
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(grace);
      opts.signal.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => {
      result.timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    const onAbort = () => {
      result.aborted = true;
      killGroup(child.pid);
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      result.spawnError = (e as NodeJS.ErrnoException).code ?? e.message;
      finish();
    });
    child.on('exit', (code, sig) => {
      result.exitCode = code;
      if (sig) result.exitSignal = sig;
      grace = setTimeout(finish, PIPE_GRACE_MS);
    });
    child.on('close', finish);
  });
}
