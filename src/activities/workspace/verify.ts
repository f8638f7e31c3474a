/**
 * A workspace's `verify` command (docs/ARCHITECTURE.md#workspaces): run in the folder exactly as
 * the session's Bash runs a command — the same sandbox launch, environment and process-group
 * kill (src/activities/tools/bash.ts) — and judged by its exit code.
 */
import type { RunVerifyInput, VerifyOutcome } from '../../shared/workspace';
import { bashArgv, runCommand, type OutputSink } from '../tools/bash';
import type { ToolOps } from '../tools/ops';

/** How much of the combined output the outcome keeps: its end, where test runners put the summary. */
export const VERIFY_TAIL_BYTES = 4 * 1024;

/** Keeps the last `max` bytes of what it is given (cut at a character boundary). */
class TailCapture implements OutputSink {
  private chunks: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly max = VERIFY_TAIL_BYTES) {}
  add(text: string): void {
    const b = Buffer.from(text, 'utf8');
    this.chunks.push(b);
    this.bytes += b.length;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0]!.length >= this.max) this.bytes -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, all.length - this.max);
    // Not in the middle of a UTF-8 sequence: skip continuation bytes.
    while (start < all.length && (all[start]! & 0xc0) === 0x80) start++;
    return all.subarray(start).toString('utf8');
  }
}

export interface VerifyDeps {
  ops: ToolOps;
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

export async function verify(input: RunVerifyInput, deps: VerifyDeps): Promise<VerifyOutcome> {
  const started = Date.now();
  const tail = new TailCapture();
  const errorOutcome = (error: string): VerifyOutcome => ({
    verdict: 'error',
    exitCode: null,
    durationMs: Date.now() - started,
    outputTail: tail.text(),
    error,
  });
  const folder = await deps.ops.fs.stat(input.path).catch(() => undefined);
  if (!folder?.isDirectory) return errorOutcome(`could not run: the workspace ${input.path} is not a directory on this host`);
  const launch = await deps.ops.sandbox.launch({
    ...(input.sandbox ? { settings: input.sandbox } : {}),
    cwd: input.path,
    additionalDirectories: input.additionalDirectories,
    sessionId: input.sessionId,
    argv: bashArgv(input.command),
    commandText: input.command,
  });
  if (launch.kind === 'refused') return errorOutcome(`could not run: ${launch.message}`);
  const run = await runCommand(
    launch,
    input.timeoutMs,
    { ops: deps.ops, context: { cwd: input.path, env: input.env }, signal: deps.signal, heartbeat: deps.heartbeat },
    tail,
  );
  if (run.spawnError) return errorOutcome(`could not run: failed to start ${launch.file}: ${run.spawnError.message}`);
  if (run.timedOut) return errorOutcome(`timed out after ${input.timeoutMs} ms; its process group was killed`);
  if (run.aborted) return errorOutcome('cancelled before it finished');
  const exitCode = run.exitCode ?? -1;
  return { verdict: exitCode === 0 ? 'pass' : 'fail', exitCode, durationMs: Date.now() - started, outputTail: tail.text() };
}
