/**
 * The contract between the workflow and the tools that run on workers.
 *
 * The workflow never sees a tool's code: it learns the specs once per session through the
 * `listTools` activity and runs a call through `runTool`. Both sides share these shapes.
 */
import type { SandboxSettings, SandboxStatus } from './sandbox';

/** What the model is told about a tool, and what the loop needs to schedule it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input (generated from the tool's zod schema). */
  inputSchema: Record<string, unknown>;
  /** Read-only tools of one turn run in parallel; the rest run one after another in call order. */
  readOnly: boolean;
  /** Bash only: whether the tools worker can sandbox it (docs/ARCHITECTURE.md#bash-sandbox). */
  sandbox?: SandboxStatus;
  /** MCP tools: the server and the server's own tool name (ARCHITECTURE.md#mcp). */
  mcp?: McpToolRef;
}

/** What a spec of an MCP tool carries besides the tool's own fields (ARCHITECTURE.md#mcp). */
interface McpToolRef {
  server: string;
  /** The server's own tool name. */
  tool: string;
  /** One of the resource tools added for a server that has resources. */
  resource?: boolean;
  /** The server connection's version when listed: a call that reports another one means list again. */
  version?: string;
  /** An in-process server of the client that called `query()`: the call is sent to it (ARCHITECTURE.md#client-mcp-tools). */
  client?: true;
}

/** Per-session facts a tool call needs; everything here is small and JSON-safe. */
export interface ToolContext {
  sessionId: string;
  toolUseId: string;
  cwd: string;
  additionalDirectories: string[];
  /** Extra environment for Bash children (the session's `env`). Worker secrets are never added. */
  env: Record<string, string>;
  /** The session's `sandbox` setting; absent: the tools worker's default (docs/ARCHITECTURE.md#bash-sandbox). */
  sandbox?: SandboxSettings;
  /**
   * Read-before-edit stamp for the file a Write/Edit targets: the mtime (ms) recorded when the
   * session last read or wrote it, or undefined if it never did.
   */
  readStamp?: number;
  /**
   * Read/Edit path rules the tool re-checks on every real path it touches, at the moment it
   * touches it (ARCHITECTURE.md#path-rules-on-real-paths). The workflow's decision checked the
   * path as given and its real path before the call; this closes the gap a symlink swapped in
   * between would open, and keeps Grep and Glob from listing or searching denied folders.
   * Absent: no path rules apply (sessions without Read/Edit deny or ask rules).
   */
  pathGuard?: PathGuard;
}

/**
 * Path patterns (the specifiers of `Read(…)` / `Edit(…)` rules, gitignore-style, see
 * shared/permissions/paths.ts) a tool must not touch, with the bases they resolve against.
 */
export interface PathGuard {
  /** Nothing matching is read, listed or searched (Read deny rules; ask rules unless this call was approved). */
  noRead: string[];
  /** Nothing matching is written (Edit deny rules; ask rules unless this call was approved). */
  noEdit: string[];
  /** Absolute real paths not to write unless this call was approved: settings files the session reads, scripts its hooks run. */
  protectedFiles: string[];
  /** What `/x`, `~/x` and relative patterns start from; without `homeDir`, the tools worker's home. */
  bases: { cwd: string; projectRoot?: string; homeDir?: string };
}

export interface RunToolInput {
  name: string;
  input: unknown;
  context: ToolContext;
}

/** What a tool gives back. A tool failure is data (`isError`), never an exception (ARCHITECTURE.md#tools-fail-as-data). */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Structured output for SDK consumers (`tool_use_result`). Kept small. */
  structured?: unknown;
  /**
   * Files this call read or wrote, with their mtime afterwards: the workflow records them so a
   * later Write/Edit can check the file was read and has not changed since.
   */
  fileStamps?: { path: string; mtimeMs: number }[];
}

/** The most a single tool result may carry (characters); keeps every payload far below 2 MiB. */
export const MAX_TOOL_RESULT_CHARS = 100_000;

/** Cut text to `max` characters, saying how much was cut and how to get the rest. */
export function capText(text: string, max: number, how = 'narrow the request to see the rest'): string {
  if (text.length <= max) return text;
  const cut = text.length - max;
  return `${text.slice(0, max)}\n\n... [${cut} characters truncated; ${how}]`;
}

/**
 * POSIX path normalisation without `node:path` (usable in workflow code): collapses `.`/`..`
 * and duplicate slashes. Used to key read-before-edit stamps.
 */
export function normalizePath(p: string): string {
  const abs = p.startsWith('/');
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return (abs ? '/' : '') + parts.join('/');
}
