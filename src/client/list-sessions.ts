/**
 * The SDK's `listSessions()`, over Temporal: the SDK reads session files from
 * `~/.claude/projects`; here every session is a workflow, found through visibility (one listing,
 * no per-session request). A session resumed under its id, or continued as new, has several runs:
 * they are one session here, created when its first run started. Subagents' sessions (children
 * started by `Task`) are not listed, as the SDK lists them apart.
 */
import path from 'node:path';
import * as api from '../shared/api';
import { ConfigError } from '../shared/config-error';
import { DurableAgentClient, type ConnectOptions } from './client';
import { quote } from './stream';
import { listRuns, type ListedRun } from './visibility';

/** The SDK's `ListSessionsOptions`, plus where the Temporal server is. */
export interface ListSessionsOptions {
  /** Only sessions started with this `cwd` (a relative path is resolved against `process.cwd()`). */
  dir?: string;
  /** At most this many (after `offset`). */
  limit?: number;
  /** Skip this many of the sorted sessions first. */
  offset?: number;
  /** Accepted, changes nothing: a session's folder is matched by its `cwd` alone. */
  includeWorktrees?: boolean;
  /** Accepted, changes nothing: every session is started by a program (`query()`, the CLI, a batch). */
  includeProgrammatic?: boolean;
  /** Refused: Temporal history is the session store. */
  sessionStore?: unknown;
  /** Ours: where the Temporal server is (default: TEMPORAL_* variables / the default profile). */
  connection?: ConnectOptions;
  /** Ours: use this client instead of connecting (it is not closed). */
  client?: DurableAgentClient;
}

/** The SDK's `SDKSessionInfo`; fields the SDK reads from a session file that we do not have are absent. */
export interface SDKSessionInfo {
  sessionId: string;
  /** The session's first prompt (its first line, at most 200 characters), else its id. */
  summary: string;
  /** When its last run closed; for a session still running, the time of the listing. */
  lastModified: number;
  fileSize?: number;
  customTitle?: string;
  firstPrompt?: string;
  gitBranch?: string;
  cwd?: string;
  tag?: string;
  /** When its first run started. */
  createdAt?: number;
  archived?: boolean;
}

/**
 * Sessions, most recently modified first (running ones first): `dir` keeps those started with that
 * `cwd`, `offset` and `limit` page through them.
 */
export async function listSessions(options: ListSessionsOptions = {}): Promise<SDKSessionInfo[]> {
  if (options.sessionStore !== undefined) {
    throw new ConfigError(
      'listSessions: option sessionStore is not supported by durable-agent: Temporal history is the session store',
      'sessionStore',
    );
  }
  for (const key of ['limit', 'offset'] as const) {
    const n = options[key];
    if (n !== undefined && !(Number.isInteger(n) && n >= 0)) throw new ConfigError(`listSessions: ${key} must be a whole number ≥ 0`, key);
  }
  const dir = options.dir === undefined ? undefined : path.resolve(options.dir);
  const client = options.client ?? (await DurableAgentClient.connect(options.connection));
  try {
    const now = Date.now();
    const runs = new Map<string, ListedRun[]>();
    for await (const run of listRuns(client.client, `WorkflowType = ${quote(api.WORKFLOW_TYPE)}`, { codecs: client.payloadCodecs })) {
      const list = runs.get(run.workflowId) ?? [];
      list.push(run);
      runs.set(run.workflowId, list);
    }
    const sessions = [...runs.values()]
      .filter((r) => !isSubagent(r[0]!, runs))
      .map((r) => sessionInfo(r, now))
      .filter((s) => dir === undefined || s.cwd === dir)
      .sort((a, b) => b.lastModified - a.lastModified || (b.createdAt ?? 0) - (a.createdAt ?? 0) || a.sessionId.localeCompare(b.sessionId));
    const offset = options.offset ?? 0;
    return sessions.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
  } finally {
    if (!options.client) await client.close();
  }
}

/**
 * A subagent's session: its parent session started it as `<parent>/task/<tool use id>`
 * (src/workflows/session/subagents.ts), so its parent is its id's prefix — listed too, or named by the server.
 */
function isSubagent(run: ListedRun, sessions: Map<string, unknown>): boolean {
  const at = run.workflowId.lastIndexOf('/task/');
  if (at <= 0) return false;
  const parent = run.workflowId.slice(0, at);
  return run.parentWorkflowId === parent || sessions.has(parent);
}

/** One session from its runs: created by the first, modified by the last; the first prompt the earliest memo holds. */
function sessionInfo(runs: ListedRun[], now: number): SDKSessionInfo {
  const byStart = [...runs].sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const first = byStart[0]!;
  const running = runs.some((r) => r.status === 'RUNNING');
  const lastModified = running ? now : Math.max(...runs.map((r) => (r.closeTime ?? r.startTime).getTime()));
  const memo = <T>(key: string): T | undefined =>
    byStart.map((r) => r.memo[key]).find((v) => typeof v === 'string' && v !== '') as T | undefined;
  const firstPrompt = memo<string>('firstPrompt');
  const cwd = memo<string>('cwd');
  return {
    sessionId: first.workflowId,
    summary: firstPrompt ?? first.workflowId,
    lastModified,
    ...(firstPrompt !== undefined ? { firstPrompt } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
    createdAt: first.startTime.getTime(),
  };
}
