/**
 * Workspace checkpoints (ARCHITECTURE.md#checkpoints): after every turn whose tools may have
 * changed the files, the tools host records the session's folder as a git commit in a checkpoint
 * repository of its own, outside the folder, and pushes it to the checkpoint remote. One mechanism
 * serves two ends: a session whose tools host is lost goes on elsewhere from its last checkpoint,
 * and `fork --at N` starts a new session from turn N's transcript and files.
 *
 * Shared by the workflow (which records a checkpoint's id, never its content), the tools worker
 * that makes and restores them, and the clients that list, diff and fork them.
 */

/** A git URL (a bare repository on shared storage in the simplest case), read on each tools host. */
export const CHECKPOINT_REMOTE_ENV = 'DURABLE_AGENT_CHECKPOINT_REMOTE';

/** Tools whose calls may change the workspace: a turn with one of these is checkpointed. */
const CHANGING_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Bash', 'Task']);
/** MCP tools (`mcp__server__tool`) may change anything too. */
export function mayChangeWorkspace(toolName: string): boolean {
  return CHANGING_TOOLS.has(toolName) || toolName.startsWith('mcp__');
}

/**
 * Where a checkpoint's commit is kept: `refs/checkpoints/<session slug>/<run>/<turn>`. The slug
 * too is made ref-safe: a session id's `..` survives `workspaceSlug`, and git refuses it in a ref.
 */
export function checkpointRef(sessionSlug: string, run: string, turn: number): string {
  return `refs/checkpoints/${refSafe(sessionSlug)}/${refSafe(run)}/${turn}`;
}

/** A path component git accepts in a ref: `:`, spaces, `..`, `~^?*[\` and control characters become `_`. */
function refSafe(s: string): string {
  const cleaned = s
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/\.{2,}/g, '_')
    .replace(/^\.+|\.lock$|\.+$/g, '_');
  return cleaned.length > 0 ? cleaned : '_';
}

export interface CheckpointInput {
  sessionId: string;
  /** The folder: the session's cwd. */
  path: string;
  /** The session's first run id (`firstExecutionRunId`): a resume under the same id is another run. */
  run: string;
  /** The turn just ended, counted across the whole session (resumes included); 0 = as found. */
  turn: number;
  /** The previous checkpoint's commit: the new one's parent. */
  parent?: string;
}

export interface CheckpointResult {
  turn: number;
  commit: string;
  ref: string;
  /** False when the files were as in `parent` (no new commit: `commit` is the parent's). */
  changed: boolean;
  /** `remote`: pushed to DURABLE_AGENT_CHECKPOINT_REMOTE; `local`: no remote set; `failed`: see `pushError`. */
  pushed: 'remote' | 'local' | 'failed';
  pushError?: string;
  durationMs: number;
}

/** A checkpoint as the workflow records it. */
export interface CheckpointRecord {
  turn: number;
  commit: string;
  ref: string;
  /** Only in the remote when this is `remote`; a host loss restores from the last one that is. */
  pushed: CheckpointResult['pushed'];
}

export type RestoreKind = 'git' | 'copy' | 'cwd';

export interface RestoreWorkspaceInput {
  sessionId: string;
  /** The same absolute path as on the lost host. */
  path: string;
  kind: RestoreKind;
  /** `git`: the repository to re-clone at `base`, so the folder is a clone again. */
  source?: { git?: string; ref?: string; copy?: string };
  base?: string;
  checkpoint: { commit: string; ref: string };
  /**
   * `copy` and `cwd`: checkpoint 0 (the files as the session found them). The session's base
   * commit was made on the lost host; this host commits checkpoint 0's files as the new base, so
   * a diff still shows everything the agent did. Absent: the restored files are the base.
   */
  baseCheckpoint?: { commit: string; ref: string };
}

interface RestoredWorkspace {
  path: string;
  /** The commit diffs are taken against: for `git` the same base; otherwise a commit of checkpoint 0's files made on this host. */
  base: string;
  kind: RestoreKind;
  hostQueue: string;
  host: string;
}

/** `hostAlive`: whether any worker polled the host's queue recently (a busy host is not a lost one). */
export interface HostAliveInput {
  queue: string;
  /** Pollers seen within this long count as alive. */
  withinMs: number;
}

export interface CheckpointActivities {
  /** On the session's host queue (or its tools queue without a workspace). */
  checkpointWorkspace(input: CheckpointInput): Promise<CheckpointResult>;
  /** On the shared tools queue: any host. */
  restoreWorkspace(input: RestoreWorkspaceInput): Promise<RestoredWorkspace>;
}

/** One turn's place in the transcript, for `fork --at` and `resumeSessionAt`. */
export interface TurnMark {
  /** state.messages.length at the end of the turn (its tool results included). */
  end: number;
  /** The uuids of the turn's events in the stream (its assistant message, its tool results). */
  uuids: string[];
}

/** The `checkpoints` query: what `show`, `diff --from/--to` and `fork --at` read. */
export interface CheckpointsView {
  /** Turns so far, counted across the whole session (resumes included). */
  turns: number;
  checkpoints: CheckpointRecord[];
  /** The last checkpoint could not be made or pushed: why. */
  failing?: string;
  /** Transcripts before this turn were compacted away: a fork must be at or after it. */
  compactedAtTurn?: number;
  /** Where the folder is (and on which host), for a restore. */
  path?: string;
}

/** The latest checkpoint at or before `turn`. */
export function checkpointAtOrBefore(list: CheckpointRecord[], turn: number): CheckpointRecord | undefined {
  let best: CheckpointRecord | undefined;
  for (const c of list) if (c.turn <= turn && (!best || c.turn >= best.turn)) best = c;
  return best;
}
