/**
 * What a tool is, and what it gets when it runs. A tool never throws for a failure the model
 * can act on: it returns an error outcome (ARCHITECTURE.md#tools-fail-as-data). The registry turns anything thrown
 * anyway into one.
 */
import type { z } from 'zod';
import type { RunToolInput, ToolContext, ToolOutcome, ToolSpec } from '../../shared/tools';
import type { ToolOps } from './ops';

export interface ToolExecContext {
  context: ToolContext;
  /** The activity's cancellation signal; Bash kills its process group on abort. */
  signal: AbortSignal;
  /** Activity heartbeat (a no-op outside an activity). */
  heartbeat(details?: unknown): void;
  /** Activity attempt number, 1-based. */
  attempt: number;
  /** Heartbeat details left by the previous attempt, if any. */
  previousHeartbeat?: unknown;
  /**
   * Identifies this activity across its attempts (workflow id / run id / activity id), for the
   * attempt journal; absent outside an activity.
   */
  attemptKey?: string;
  ops: ToolOps;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds tools of many input types
export interface ToolDefinition<I = any> {
  name: string;
  description: string;
  schema: z.ZodType<I>;
  /** Read-only tools of one turn may run in parallel. */
  readOnly: boolean;
  /** Must not throw for failures the model can act on: return `toolError(...)` instead. */
  execute(input: I, ctx: ToolExecContext): Promise<string | ToolOutcome>;
}

type RegistryExecContext = Omit<ToolExecContext, 'context' | 'ops'> & { ops?: ToolOps };

export interface ToolRegistry {
  /** JSON Schema via `z.toJSONSchema`, in registration order (built-ins first). */
  specs(): ToolSpec[];
  has(name: string): boolean;
  /** Validates, runs and caps a call. Never rejects for a tool failure; returns `isError`. */
  run(input: RunToolInput, exec: RegistryExecContext): Promise<ToolOutcome>;
}

export function toolError(content: string, extra: Omit<ToolOutcome, 'content' | 'isError'> = {}): ToolOutcome {
  return { content, isError: true, ...extra };
}

export function toolOk(content: string, extra: Omit<ToolOutcome, 'content' | 'isError'> = {}): ToolOutcome {
  return { content, isError: false, ...extra };
}

/** `{code}` of a Node system error, or undefined. */
export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}
