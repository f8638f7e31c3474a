/** Real temp dirs and a registry runner for tool tests (no mocks: real fs, real processes). */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolOps, createToolRegistry, type ToolDefinition, type ToolOps, type ToolOpsOptions } from '../../src/activities/tools';
import type { ToolContext, ToolOutcome } from '../../src/shared/tools';

export { processesNamed } from '../helpers/processes';

const made: string[] = [];

/** A fresh real directory (realpath'd, so expected paths compare equal). */
export async function tempDir(prefix = 'da-tools-'): Promise<string> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => fs.rm(d, { recursive: true, force: true })));
}

export function context(cwd: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { sessionId: 's-test', toolUseId: 'toolu_test', cwd, additionalDirectories: [], env: {}, ...extra };
}

export interface CallOptions {
  ctx?: Partial<ToolContext>;
  ops?: ToolOps;
  opsOptions?: ToolOpsOptions;
  signal?: AbortSignal;
  attempt?: number;
  previousHeartbeat?: unknown;
  attemptKey?: string;
  heartbeats?: unknown[];
  extraTools?: ToolDefinition[];
}

/** Runs one call through the registry, exactly as the runTool activity will. */
export function call(cwd: string, name: string, input: unknown, opts: CallOptions = {}): Promise<ToolOutcome> {
  const registry = createToolRegistry(opts.extraTools);
  return registry.run(
    { name, input, context: context(cwd, opts.ctx) },
    {
      signal: opts.signal ?? new AbortController().signal,
      heartbeat: (d) => opts.heartbeats?.push(d),
      attempt: opts.attempt ?? 1,
      previousHeartbeat: opts.previousHeartbeat,
      attemptKey: opts.attemptKey,
      ops: opts.ops ?? createToolOps(opts.opsOptions),
    },
  );
}

/** Read a file through the tool and return the stamp a later Write/Edit needs. */
export async function readStamp(cwd: string, file: string): Promise<number> {
  const out = await call(cwd, 'Read', { file_path: file });
  if (out.isError || !out.fileStamps?.[0]) throw new Error(`Read failed: ${out.content}`);
  return out.fileStamps[0].mtimeMs;
}

export async function write(file: string, content: string | Buffer): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
}

/** Set a file's mtime to `secondsAgo` before a fixed instant (deterministic ordering). */
export async function age(file: string, secondsAgo: number): Promise<void> {
  const t = new Date(Date.UTC(2024, 0, 1) - secondsAgo * 1000);
  await fs.utimes(file, t, t);
}
