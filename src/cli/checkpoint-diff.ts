/**
 * `durable-agent diff ID --from N --to M`: the change between two of a session's checkpoints
 * (ARCHITECTURE.md#checkpoints), taken by git on this machine. The commits are looked for in this
 * tools host's checkpoint repository (`<workspaces root>/checkpoints.git`) and, when they are not
 * there, fetched by their refs from the checkpoint remote (DURABLE_AGENT_CHECKPOINT_REMOTE) into a
 * cache of the client's own.
 */
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKPOINT_REMOTE_ENV, type CheckpointRecord } from '../shared/checkpoint';
import { gitText, redact, runGit, type GitRunner } from '../activities/workspace/git';
import { workspacesRoot } from '../activities/workspace/layout';

/** The commits are in neither place, or there is nowhere to look: bad input (the CLI exits 2). */
export class CheckpointsNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointsNotFoundError';
  }
}

/** The tools host's checkpoint repository: `<workspacesRoot()>/checkpoints.git`. */
export function localCheckpointRepo(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  return path.join(workspacesRoot(env, home), 'checkpoints.git');
}

/** The client's cache of fetched checkpoints: `${XDG_CACHE_HOME:-~/.cache}/durable-agent/checkpoint-cache.git` (bare). */
export function checkpointCacheRepo(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const cache = env.XDG_CACHE_HOME?.trim() || path.join(home, '.cache');
  return path.join(path.resolve(cache), 'durable-agent', 'checkpoint-cache.git');
}

export interface FindOptions {
  sessionId: string;
  /** Default: localCheckpointRepo(). */
  local?: string;
  /** Default: DURABLE_AGENT_CHECKPOINT_REMOTE. */
  remote?: string;
  /** Default: checkpointCacheRepo(). */
  cache?: string;
  git?: GitRunner;
}

async function hasCommit(git: GitRunner, repo: string, commit: string): Promise<boolean> {
  if (!existsSync(repo)) return false;
  const r = await git({ args: [`--git-dir=${repo}`, 'cat-file', '-e', `${commit}^{commit}`] });
  return r.code === 0;
}

async function hasAll(git: GitRunner, repo: string, wanted: CheckpointRecord[]): Promise<boolean> {
  for (const c of wanted) if (!(await hasCommit(git, repo, c.commit))) return false;
  return true;
}

const named = (wanted: CheckpointRecord[]) =>
  [...new Map(wanted.map((c) => [c.commit, `turn ${c.turn} (${c.commit.slice(0, 12)})`])).values()].join(' and ');

/**
 * The git dir that holds every commit of `wanted`: the local checkpoint repository, else the cache
 * after fetching their refs from the remote. Throws CheckpointsNotFoundError naming what is missing
 * and where it was looked for.
 */
export async function findCheckpoints(wanted: CheckpointRecord[], opts: FindOptions): Promise<string> {
  const git = opts.git ?? runGit;
  const local = opts.local ?? localCheckpointRepo();
  const remote = opts.remote ?? process.env[CHECKPOINT_REMOTE_ENV]?.trim();
  const cache = opts.cache ?? checkpointCacheRepo();
  if (await hasAll(git, local, wanted)) return local;
  const what = `the checkpoints of ${opts.sessionId} at ${named(wanted)}`;
  const notLocal = `${what} are not in this host's checkpoint repository ${local}`;
  if (!remote) {
    throw new CheckpointsNotFoundError(
      `${notLocal}, and ${CHECKPOINT_REMOTE_ENV} is not set: run this on the tools host that made them, or set ${CHECKPOINT_REMOTE_ENV} to the checkpoint remote`,
    );
  }
  if (await hasAll(git, cache, wanted)) return cache;
  if (!existsSync(cache)) {
    mkdirSync(path.dirname(cache), { recursive: true });
    await gitText(git, { args: ['init', '--quiet', '--bare', cache] });
  }
  const refspecs = [...new Set(wanted.map((c) => `+${c.ref}:${c.ref}`))];
  const fetched = await git({ args: [`--git-dir=${cache}`, 'fetch', '--quiet', '--no-tags', '--', remote, ...refspecs] });
  const unpushed = wanted.filter((c) => c.pushed !== 'remote');
  const hint = unpushed.length
    ? ` (${unpushed.map((c) => `turn ${c.turn}: ${c.pushed === 'failed' ? 'its push failed' : 'never pushed'}`).join(', ')})`
    : '';
  if (fetched.code !== 0) {
    const why = redact(fetched.stderr.trim().split('\n').slice(-2).join(' / '));
    throw new CheckpointsNotFoundError(
      `${notLocal}, and cannot be fetched from ${CHECKPOINT_REMOTE_ENV} (${redact(remote)})${hint}: ${why}`,
    );
  }
  if (!(await hasAll(git, cache, wanted))) {
    throw new CheckpointsNotFoundError(`${notLocal}, nor at their refs in ${CHECKPOINT_REMOTE_ENV} (${redact(remote)})${hint}`);
  }
  return cache;
}

/** `git diff --binary FROM TO` (or `--stat`) in `repo`: what git apply takes, the same prefixes as a session's patch. */
export async function checkpointPatch(
  repo: string,
  from: string,
  to: string,
  opts: { stat?: boolean; git?: GitRunner } = {},
): Promise<Buffer> {
  const git = opts.git ?? runGit;
  const args = [
    `--git-dir=${repo}`,
    'diff',
    opts.stat ? '--stat' : '--binary',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    from,
    to,
    '--',
  ];
  const r = await git({ args });
  if (r.code !== 0)
    throw new Error(`git diff ${from.slice(0, 12)} ${to.slice(0, 12)} in ${repo} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}
