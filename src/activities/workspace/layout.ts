/**
 * Where workspaces live on a tools host (docs/ARCHITECTURE.md#workspaces): one root, the same path
 * on every host, holding the mirrors, the sessions' folders and, outside those folders, what the
 * tools host keeps about each (its metadata, its base repository, its patch).
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { workspaceSlug } from '../../shared/workspace';

const WORKSPACES_ENV_VAR = 'DURABLE_AGENT_WORKSPACES';

/** `DURABLE_AGENT_WORKSPACES`, else `${XDG_CACHE_HOME:-~/.cache}/durable-agent/workspaces`. */
export function workspacesRoot(env: NodeJS.ProcessEnv, home = os.homedir()): string {
  const set = env[WORKSPACES_ENV_VAR]?.trim();
  if (set) return path.resolve(set);
  const cache = env.XDG_CACHE_HOME?.trim() || path.join(home, '.cache');
  return path.join(path.resolve(cache), 'durable-agent', 'workspaces');
}

/**
 * The queue only this host's tools worker polls: a session provisioned here is pinned to it. A
 * tools queue already named after the host (`agent-tools@build-1` on build-1) is its own.
 */
export function hostQueueFor(toolsQueue: string, host = os.hostname()): string {
  return toolsQueue.endsWith(`@${host}`) ? toolsQueue : `${toolsQueue}@${host}`;
}

const sha256hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Prefix of a folder being made; never a session's folder, removed when found by a later attempt. */
export const TEMP_PREFIX = '.tmp-';

export interface MirrorPaths {
  /** The bare mirror: `<root>/mirrors/<sha256(url) 16 hex>.git`. */
  dir: string;
  /** Held while the mirror is cloned or fetched, across processes. */
  lock: string;
  /** Its mtime: the mirror's last fetch. */
  stamp: string;
}

export function mirrorPaths(root: string, url: string): MirrorPaths {
  const dir = path.join(root, 'mirrors', `${sha256hex(url).slice(0, 16)}.git`);
  return { dir, lock: `${dir}.lock`, stamp: `${dir}.fetched` };
}

export interface SessionPaths {
  slug: string;
  /** The session's folder, its cwd. */
  folder: string;
  /** What the tools host knows of it (SessionMeta); written before the folder is in place. */
  meta: string;
  /** A git dir of the tools host's own: the base commit (copy), and every diff's objects. */
  gitDir: string;
  /** The last diff's patch. */
  patch: string;
  /** Held while the folder is made. */
  lock: string;
  /** The index of the session's checkpoints (ARCHITECTURE.md#checkpoints): outside the folder, so its own `.git` is never touched. */
  ckptIndex: string;
  /** Held while a checkpoint is taken. */
  ckptLock: string;
  /** A restore of a plain folder (no SessionMeta): what was restored where, for a retry. */
  restored: string;
}

export function sessionPaths(root: string, sessionId: string): SessionPaths {
  const slug = workspaceSlug(sessionId, sha256hex);
  const meta = path.join(root, 'meta', slug);
  return {
    slug,
    folder: path.join(root, 'sessions', slug),
    meta: `${meta}.json`,
    gitDir: `${meta}.git`,
    patch: `${meta}.patch`,
    lock: `${meta}.lock`,
    ckptIndex: `${meta}.ckpt-index`,
    ckptLock: `${meta}.ckpt-lock`,
    restored: `${meta}.restored`,
  };
}

/** A temp folder beside `final`, distinct per attempt. */
export function tempFolderFor(final: string): string {
  const rand = Math.random().toString(36).slice(2, 8);
  return path.join(path.dirname(final), `${TEMP_PREFIX}${path.basename(final)}-${process.pid}-${rand}`);
}

/** What the tools host keeps about a session's folder, outside it. */
export interface SessionMeta {
  sessionId: string;
  kind: 'git' | 'copy';
  source: { git?: string; ref?: string; copy?: string; checkpoint?: { session: string; turn: number; commit: string; ref: string } };
  path: string;
  base: string;
  /** The mirror a git workspace borrows objects from. */
  mirror?: string;
  createdAt: string;
  /** Restored on this host from this checkpoint commit (restoreWorkspace): a retry finds it done. */
  checkpoint?: string;
}

/** The tools host's checkpoint repository (ARCHITECTURE.md#checkpoints): bare, every session's checkpoints. */
export interface CheckpointRepoPaths {
  dir: string;
  /** Held while it is created. */
  lock: string;
}

export function checkpointRepoPaths(root: string): CheckpointRepoPaths {
  const dir = path.join(root, 'checkpoints.git');
  return { dir, lock: `${dir}.lock` };
}
