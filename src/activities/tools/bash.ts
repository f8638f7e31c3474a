/**
 * Bash: one `bash -c` subprocess per call, in its own process group so a timeout or an abort
 * kills everything it started — inside a bubblewrap sandbox where the session and the worker
 * allow it (docs/ARCHITECTURE.md#bash-sandbox). Not idempotent, so a retried attempt whose
 * predecessor had started refuses to run the command again (ARCHITECTURE.md#side-effects-reported-as-unknown).
 */
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import type { Launch } from '../sandbox';
import { buildChildEnv } from './env';
import type { ToolContext } from '../../shared/tools';
import { killGroup, type ToolOps } from './ops';
import { toolError, toolOk, type ToolDefinition } from './types';

const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
const BASH_MAX_OUTPUT_CHARS = 30_000;
const HEARTBEAT_EVERY_MS = 1_000;

export const BASH_INTERRUPTED_MESSAGE =
  'The previous attempt of this command was interrupted (worker lost) and its effects are unknown. ' +
  'Inspect the workspace before retrying it.';

/** Commands whose exit status 1 means "no match" / "differs" / "false", not failure. */
const EXIT_1_IS_AN_ANSWER = new Set(['grep', 'egrep', 'fgrep', 'rg', 'diff', 'test', '[']);

export const BashInput = z.strictObject({
  command: z.string().min(1).describe('The command to execute'),
  timeout: z
    .number()
    .int()
    .positive()
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Optional timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS})`),
  description: z.string().optional().describe('Clear, concise description of what this command does in 5-10 words, in active voice.'),
});
export type BashInput = z.infer<typeof BashInput>;

/** First word of the last simple command (the one whose status is the exit code), quote-aware. */
export function lastCommandName(command: string): string {
  const segments: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    const redirect = ch === '&' && (command[i - 1] === '>' || command[i - 1] === '<' || command[i + 1] === '>');
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"') cur += command[++i] ?? '';
      else cur += ch;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '\\') cur += command[++i] ?? '';
    else if ('|&;\n'.includes(ch) && !redirect) {
      segments.push(cur);
      cur = '';
    } else cur += ch;
  }
  segments.push(cur);
  const last =
    segments
      .map((s) => s.trim())
      .filter(Boolean)
      .pop() ?? '';
  const words = last.split(/\s+/).filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  const first = words[0] ?? '';
  return first.slice(first.lastIndexOf('/') + 1);
}

function previousAttemptStarted(details: unknown): boolean {
  return typeof details === 'object' && details !== null && (details as { started?: unknown }).started === true;
}

/** Keeps the first `max` characters of the combined output and counts what it drops. */
class OutputCapture {
  head = '';
  cutChars = 0;
  cutLines = 0;
  private lastCut = '';
  constructor(private readonly max: number) {}
  add(text: string): void {
    const room = this.max - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.cutChars += text.length;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.cutLines++;
    this.lastCut = text[text.length - 1]!;
  }
  /** Lines not shown, counting a final line without a newline. */
  get droppedLines(): number {
    return this.cutLines + (this.cutChars > 0 && this.lastCut !== '\n' ? 1 : 0);
  }
}

/** Where a command's output goes, decoded, as it arrives. */
export interface OutputSink {
  add(text: string): void;
}

export interface CommandRun {
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  spawnError?: Error;
}

/** stderr joins stdout inside the child, so the model sees them in the order they were written;
 *  `exec` keeps it one process, and the command text reaches the inner bash -c unchanged. */
export function bashArgv(command: string): string[] {
  return ['bash', '-c', 'exec bash -c "$1" 2>&1', 'bash', command];
}

export interface CommandRunContext {
  ops: ToolOps;
  context: Pick<ToolContext, 'cwd' | 'env'>;
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

/**
 * Runs a launched command (what `Sandbox.launch` returned) the way Bash does: the session's
 * environment, its own process group killed at `timeoutMs` or on abort, a heartbeat every second.
 * Also the runner of a workspace's `verify` command (ARCHITECTURE.md#workspaces).
 */
export function runCommand(
  launch: Exclude<Launch, { kind: 'refused' }>,
  timeoutMs: number,
  ctx: CommandRunContext,
  capture: OutputSink,
): Promise<CommandRun> {
  const { ops, context, signal } = ctx;
  const env = { ...buildChildEnv({ base: ops.baseEnv, scrub: ops.scrubEnvNames, sessionEnv: context.env }), ...launch.env };
  const started = Date.now();
  return new Promise((resolve) => {
    const result: CommandRun = { exitCode: null, timedOut: false, aborted: false };
    // Its own process group: killing the group kills what the command started (or, sandboxed,
    // bwrap, whose namespace dies with it).
    const child = ops.spawn(launch.file, launch.args, {
      cwd: context.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
    let quietTimer: NodeJS.Timeout | undefined;
    let exited = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(beat);
      clearTimeout(timer);
      clearTimeout(quietTimer);
      clearTimeout(hardStop);
      signal.removeEventListener('abort', onAbort);
      for (const d of decoders) capture.add(d.end());
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(result);
    };
    // A background job may keep the pipes open after bash exits: wait for a quiet moment, not for EOF.
    const armQuiet = () => {
      clearTimeout(quietTimer);
      quietTimer = setTimeout(finish, 200);
    };
    let hardStop: NodeJS.Timeout | undefined;
    [child.stdout, child.stderr].forEach((stream, i) =>
      stream?.on('data', (chunk: Buffer) => {
        capture.add(decoders[i]!.write(chunk));
        if (exited) armQuiet();
      }),
    );
    const beat = setInterval(() => ctx.heartbeat({ started: true, elapsedMs: Date.now() - started }), HEARTBEAT_EVERY_MS);
    const timer = setTimeout(() => {
      result.timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const onAbort = () => {
      result.aborted = true;
      killGroup(child.pid);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      result.spawnError = err;
      finish();
    });
    child.on('exit', (code, sig) => {
      exited = true;
      result.exitCode = code ?? 128 + (sig ? (osConstants.signals[sig] ?? 0) : 0);
      armQuiet();
      hardStop = setTimeout(finish, 2_000);
    });
    child.on('close', finish);
  });
}

function format(run: CommandRun, capture: OutputCapture, timeoutMs: number, command: string, sandboxed: boolean) {
  let text = capture.head.replace(/\n+$/, '');
  if (capture.cutChars > 0) {
    text +=
      `\n\n... [${capture.droppedLines} lines (${capture.cutChars} characters) truncated] ...\n` +
      '(Output is limited to 30000 characters. Redirect it to a file in the workspace and inspect that ' +
      'with Read (offset/limit) or Grep, or pipe it through head/tail.)';
  }
  const add = (line: string) => (text = text ? `${text}\n${line}` : line);
  let isError = false;
  if (run.timedOut) {
    add(`Command timed out after ${timeoutMs / 1000}s`);
    isError = true;
  } else if (run.aborted) {
    add('Command was aborted before completion');
    isError = true;
  } else if (run.exitCode !== 0) {
    add(`Exit code ${run.exitCode}`);
    isError = !(run.exitCode === 1 && EXIT_1_IS_AN_ANSWER.has(lastCommandName(command)));
  }
  if (!text) text = '(Bash completed with no output)';
  const structured = {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    interrupted: run.aborted,
    truncated: capture.cutChars > 0,
    sandboxed,
  };
  return isError ? toolError(text, { structured }) : toolOk(text, { structured });
}

export const bashTool: ToolDefinition<BashInput> = {
  name: 'Bash',
  description:
    'Executes a bash command in a fresh subprocess in the working directory (no shell state is kept ' +
    'between calls; `cd` does not persist). Output is stdout and stderr combined, limited to ' +
    `${BASH_MAX_OUTPUT_CHARS} characters. Timeout defaults to ${BASH_DEFAULT_TIMEOUT_MS} ms (max ` +
    `${BASH_MAX_TIMEOUT_MS} ms). Prefer Read, Edit, Write, Glob and Grep for file work. Commands usually run ` +
    'in a sandbox: they can write only under the working directory, the additional directories and /tmp ' +
    '(private to the session, kept between calls), some home directories (~/.ssh, ~/.config, …) look empty, ' +
    'the network may be off, and background processes end with the command.',
  schema: BashInput,
  readOnly: false,
  async execute(input, ctx) {
    const journalSaysStarted = ctx.attemptKey !== undefined && ctx.ops.attempts.started(ctx.attemptKey);
    if (ctx.attempt > 1 && (journalSaysStarted || previousAttemptStarted(ctx.previousHeartbeat))) {
      return toolError(BASH_INTERRUPTED_MESSAGE, { structured: { interrupted: true, previousAttempt: true } });
    }
    if (ctx.signal.aborted) return toolError('Command was aborted before it started');
    try {
      if (!(await ctx.ops.fs.stat(ctx.context.cwd)).isDirectory) throw new Error('not a directory');
    } catch {
      return toolError(`Working directory does not exist: ${ctx.context.cwd}`);
    }
    const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;
    const { context } = ctx;
    const launch = await ctx.ops.sandbox.launch({
      settings: context.sandbox,
      cwd: context.cwd,
      additionalDirectories: context.additionalDirectories,
      sessionId: context.sessionId,
      argv: bashArgv(input.command),
      commandText: input.command,
    });
    // Refused before the journal entry: the command provably never started.
    if (launch.kind === 'refused') return toolError(launch.message, { structured: { sandboxed: false, refused: true } });
    // Recorded durably before the process exists: a retry that finds it cannot know whether the
    // command ran, so it says so instead of running it again (ARCHITECTURE.md#side-effects-reported-as-unknown).
    if (ctx.attemptKey !== undefined) ctx.ops.attempts.markStarted(ctx.attemptKey);
    ctx.heartbeat({ started: true });
    const capture = new OutputCapture(BASH_MAX_OUTPUT_CHARS);
    const run = await runCommand(launch, timeoutMs, ctx, capture);
    if (run.spawnError) return toolError(`Failed to start ${launch.file}: ${run.spawnError.message}`);
    return format(run, capture, timeoutMs, input.command, launch.kind === 'sandboxed');
  },
};
