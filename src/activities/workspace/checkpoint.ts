/**
 * Workspace checkpoints on a tools host (docs/ARCHITECTURE.md#checkpoints): after a turn, the
 * session's folder recorded as a commit in the host's own bare repository `<root>/checkpoints.git`
 * and pushed to the checkpoint remote when one is set; and the way back, a checkpoint's files
 * written into a folder (restoring a session on another host, or provisioning a fork).
 *
 * Git runs with `GIT_DIR` = the checkpoint repository, `GIT_WORK_TREE` = the folder and
 * `GIT_INDEX_FILE` = the session's own index in `meta/` (kept between turns, so a turn's `add -A`
 * hashes only what changed). The folder's `.git` (its index, branches, stash, HEAD, config) is
 * never read or written. What is recorded is what `git add -A` sees: untracked files included,
 * files the folder's `.gitignore` files (or the worker's global excludes) ignore left out, and
 * never a path component named `.git`. A nested repository (a folder holding a `.git` with a
 * commit checked out) is recorded as git records it, a gitlink (its commit id, not its files), and
 * restored as an empty folder; one without a commit is skipped (`--ignore-errors`, which also
 * skips a file that cannot be read rather than failing the turn's checkpoint).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CHECKPOINT_REMOTE_ENV, checkpointRef, type CheckpointInput, type CheckpointResult } from '../../shared/checkpoint';
import { NoWorkspace } from './diff';
import { BASE_IDENTITY, GitError, gitText, lastLines, redact, type GitRunner } from './git';
import { checkpointRepoPaths, sessionPaths, tempFolderFor, type SessionPaths } from './layout';
import { withDirLock } from './lock';

export interface CheckpointDeps {
  root: string;
  git: GitRunner;
  signal?: AbortSignal;
  /** The checkpoint remote as the worker read it (DURABLE_AGENT_CHECKPOINT_REMOTE); absent or empty: none. */
  checkpointRemote?: string;
  /** A push still running after this long is stopped: `pushed: 'failed'`, the checkpoint stands. */
  pushTimeoutMs?: number;
}

const DEFAULT_PUSH_TIMEOUT_MS = 120_000;

/** The checkpoint is neither in this host's repository nor (when one is set) in the remote: retrying cannot help. */
export class CheckpointUnavailable extends Error {}
/** The remote could not be reached or read: it may come back. */
export class CheckpointFetchFailed extends Error {}

/**
 * Set in the checkpoint repository when it is made. Never collected (`gc.auto 0`, no auto
 * maintenance): another session's `add` → `commit-tree` → `update-ref` is always in flight, and
 * its new objects are unreachable until the ref is written; the session git dirs of restored and
 * forked folders borrow its objects too. No reflogs (a ref per turn). No embedded-repository
 * advice on every turn's stderr, no line-ending conversion from the worker's global config.
 * zlib level 1: checkpoint 0 of 10k files (73 MB) in 1.3 s instead of 2.1 s, the pack 7% larger;
 * pushes pack at that level too.
 */
const REPO_CONFIG: [string, string][] = [
  ['gc.auto', '0'],
  ['core.compression', '1'],
  ['maintenance.auto', 'false'],
  ['core.logAllRefUpdates', 'false'],
  ['advice.addEmbeddedRepo', 'false'],
  ['core.autocrlf', 'false'],
];

/** Checkpoint commits: a fixed name, the real time. */
const CHECKPOINT_IDENTITY = {
  GIT_AUTHOR_NAME: 'durable-agent',
  GIT_AUTHOR_EMAIL: 'durable-agent@localhost',
  GIT_COMMITTER_NAME: 'durable-agent',
  GIT_COMMITTER_EMAIL: 'durable-agent@localhost',
};

const exists = (p: string) =>
  fsp.stat(p).then(
    () => true,
    () => false,
  );

/** The host's checkpoint repository, made (under a lock, in a temp folder renamed into place) if missing. */
async function ensureCheckpointRepo(deps: CheckpointDeps): Promise<string> {
  const { dir, lock } = checkpointRepoPaths(deps.root);
  if (await exists(path.join(dir, 'HEAD'))) return dir;
  await withDirLock(
    lock,
    async () => {
      if (await exists(path.join(dir, 'HEAD'))) return;
      const tmp = tempFolderFor(dir);
      try {
        await gitText(deps.git, { args: ['init', '--quiet', '--bare', tmp], signal: deps.signal });
        for (const [k, v] of REPO_CONFIG) await gitText(deps.git, { args: ['config', k, v], env: { GIT_DIR: tmp }, signal: deps.signal });
        await fsp.rm(dir, { recursive: true, force: true });
        await fsp.rename(tmp, dir);
      } finally {
        await fsp.rm(tmp, { recursive: true, force: true });
      }
    },
    deps.signal,
  );
  return dir;
}

async function resolve(repo: string, rev: string, { git, signal }: CheckpointDeps): Promise<string | undefined> {
  const r = await git({ args: ['rev-parse', '--verify', '--quiet', '--end-of-options', rev], env: { GIT_DIR: repo }, signal });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
}

/** `git add -A` of the folder into the session's index, then its tree. */
async function snapshotTree(repo: string, folder: string, index: string, deps: CheckpointDeps): Promise<string> {
  const { git, signal } = deps;
  const env = { GIT_DIR: repo, GIT_WORK_TREE: folder, GIT_INDEX_FILE: index };
  for (let attempt = 0; ; attempt++) {
    // Without an index every file is new: written into one pack as they are hashed (bulk
    // check-in, for files of at least core.bigFileThreshold bytes) rather than as a loose object
    // each — 10k files in 0.65 s instead of 2.9 s on a 2-core VM whose file creation is slow
    // (docs/BENCHMARKS.md §16). A later turn adds the few files it changed as loose objects,
    // so the packs stay one per session and folder.
    const fresh = !(await exists(index));
    try {
      const add = await git({
        args: [...(fresh ? ['-c', 'core.bigFileThreshold=1'] : []), 'add', '--all', '--ignore-errors'],
        cwd: folder,
        env,
        signal,
      });
      // 1: some paths could not be added (a nested repository without a commit, an unreadable
      // file); the rest are in the index.
      if (add.code !== 0 && add.code !== 1) throw new GitError(['add'], add);
      return await gitText(git, { args: ['write-tree'], cwd: folder, env, signal });
    } catch (e) {
      // An index kept from a checkpoint repository since removed names objects it lacks: afresh, once.
      if (attempt > 0 || signal?.aborted) throw e;
      await fsp.rm(index, { force: true });
    }
  }
}

/**
 * Records the folder as turn `input.turn`'s checkpoint: a commit on `input.parent` (none when the
 * files are as in the parent), its ref `refs/checkpoints/<slug>/<run>/<turn>`, pushed to the
 * remote when one is set. A failed push is reported, never thrown: the turn goes on.
 */
export async function checkpoint(input: CheckpointInput, deps: CheckpointDeps): Promise<CheckpointResult> {
  const started = performance.now();
  const { git, signal } = deps;
  const st = await fsp.stat(input.path).catch(() => undefined);
  if (!st?.isDirectory()) throw new NoWorkspace(`session ${input.sessionId}: its folder ${input.path} is not on this host`);
  const repo = await ensureCheckpointRepo(deps);
  const p = sessionPaths(deps.root, input.sessionId);
  const ref = checkpointRef(p.slug, input.run, input.turn);
  await fsp.mkdir(path.dirname(p.ckptIndex), { recursive: true });
  const made = await withDirLock(
    p.ckptLock,
    async () => {
      // Under the session's lock, git's own lock files for its index and its refs are ones a
      // killed git left behind.
      await fsp.rm(`${p.ckptIndex}.lock`, { force: true });
      await fsp.rm(path.join(repo, `${ref}.lock`), { force: true });
      const tree = await snapshotTree(repo, input.path, p.ckptIndex, deps);
      // A parent this repository lacks (made on a host since lost, never pushed): a root commit.
      const parentTree = input.parent ? await resolve(repo, `${input.parent}^{tree}`, deps) : undefined;
      const parent = parentTree !== undefined ? input.parent : undefined;
      let commit: string;
      let changed: boolean;
      if (parent !== undefined && parentTree === tree) {
        commit = parent;
        changed = false;
      } else {
        changed = true;
        // A retry of a turn whose checkpoint was made (the answer lost): the same commit again.
        const [was, wasTree, ...wasParents] = (
          await gitText(git, { args: ['for-each-ref', '--format=%(objectname) %(tree) %(parent)', ref], env: { GIT_DIR: repo }, signal })
        ).split(' ');
        if (was && wasTree === tree && wasParents.join(' ') === (parent ?? '')) {
          commit = was;
        } else {
          commit = await gitText(git, {
            args: ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', `turn ${input.turn} of ${input.sessionId}`],
            env: { GIT_DIR: repo, ...CHECKPOINT_IDENTITY },
            signal,
          });
        }
      }
      // Every checkpointed turn has its ref, an unchanged one at its parent's commit: a record
      // the workflow keeps always names a ref that exists.
      await gitText(git, { args: ['update-ref', ref, commit], env: { GIT_DIR: repo }, signal });
      return { commit, changed };
    },
    signal,
  );
  const push = await pushRef(repo, ref, deps);
  return {
    turn: input.turn,
    commit: made.commit,
    ref,
    changed: made.changed,
    ...push,
    durationMs: Math.round(performance.now() - started),
  };
}

/**
 * `git push <remote> +<ref>:<ref>`: forced, since a retried turn may have made another commit for
 * the same ref. The objects sent are those the remote's refs (the session's earlier checkpoints
 * among them) do not reach: a turn's push carries what an earlier failed push did not.
 */
async function pushRef(repo: string, ref: string, deps: CheckpointDeps): Promise<Pick<CheckpointResult, 'pushed' | 'pushError'>> {
  const remote = deps.checkpointRemote?.trim();
  if (!remote) return { pushed: 'local' };
  const limitMs = deps.pushTimeoutMs ?? DEFAULT_PUSH_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(limitMs);
  const signal = deps.signal ? AbortSignal.any([deps.signal, timeout]) : timeout;
  const r = await deps.git({ args: ['push', '--quiet', '--no-verify', '--', remote, `+${ref}:${ref}`], env: { GIT_DIR: repo }, signal });
  deps.signal?.throwIfAborted();
  if (r.code === 0) return { pushed: 'remote' };
  const why = timeout.aborted ? `stopped after ${limitMs} ms` : lastLines(r.stderr) || `exit ${r.code}`;
  return { pushed: 'failed', pushError: redact(`git push to the checkpoint remote failed: ${why}`) };
}

const COMMIT_ID = /^[0-9a-f]{40,64}$/;
const CHECKPOINT_REF = /^refs\/checkpoints\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

async function hasCommit(repo: string, commit: string, { git, signal }: CheckpointDeps): Promise<boolean> {
  return (await git({ args: ['cat-file', '-e', `${commit}^{commit}`], env: { GIT_DIR: repo }, signal })).code === 0;
}

/**
 * Makes sure `c.commit` is in the host's checkpoint repository: there already, or fetched from the
 * remote by its ref (with its history). `what` names the session for messages.
 */
export async function ensureCheckpointCommit(c: { commit: string; ref: string }, what: string, deps: CheckpointDeps): Promise<string> {
  if (!COMMIT_ID.test(c.commit)) throw new CheckpointUnavailable(`${what}: ${JSON.stringify(c.commit)} is not a commit id`);
  if (!CHECKPOINT_REF.test(c.ref) || c.ref.includes('..'))
    throw new CheckpointUnavailable(`${what}: ${JSON.stringify(c.ref)} is not a checkpoint ref`);
  const repo = await ensureCheckpointRepo(deps);
  if (await hasCommit(repo, c.commit, deps)) return repo;
  const remote = deps.checkpointRemote?.trim();
  if (!remote) {
    throw new CheckpointUnavailable(
      `${what}: checkpoint ${c.ref} (commit ${c.commit.slice(0, 12)}) is not on this host and ${CHECKPOINT_REMOTE_ENV} is not set on it, so it cannot be fetched`,
    );
  }
  const { git, signal } = deps;
  const r = await git({
    args: ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', remote, `+${c.ref}:${c.ref}`],
    env: { GIT_DIR: repo },
    signal,
  });
  signal?.throwIfAborted();
  if (r.code !== 0) {
    if (/couldn't find remote ref/i.test(r.stderr))
      throw new CheckpointUnavailable(`${what}: checkpoint ${c.ref} is not in the checkpoint remote`);
    throw new CheckpointFetchFailed(redact(`${what}: cannot fetch checkpoint ${c.ref} from the checkpoint remote: ${lastLines(r.stderr)}`));
  }
  if (!(await hasCommit(repo, c.commit, deps))) {
    throw new CheckpointUnavailable(`${what}: the checkpoint remote's ${c.ref} is not commit ${c.commit.slice(0, 12)}`);
  }
  return repo;
}

/**
 * Writes `commit`'s files into `dir` (`read-tree` + `checkout-index`: modes and symlinks as
 * recorded; a gitlink becomes an empty folder), recording them with their stat data in `index`,
 * the session's checkpoint index: its next checkpoint hashes only what changed since.
 */
export async function materialize(
  repo: string,
  commit: string,
  dir: string,
  index: string,
  { git, signal }: CheckpointDeps,
): Promise<void> {
  const env = { GIT_DIR: repo, GIT_WORK_TREE: dir, GIT_INDEX_FILE: index };
  await fsp.rm(index, { force: true });
  await gitText(git, { args: ['read-tree', commit], cwd: dir, env, signal });
  await gitText(git, { args: ['checkout-index', '--all', '--force', '-u'], cwd: dir, env, signal });
}

/**
 * The session's git dir made afresh with `commit`'s files as its base commit (the fixed identity
 * and message of a copied folder's base, so the same files give the same base). It borrows the
 * checkpoint repository's objects (never collected): the base is one commit object, not a copy.
 */
export async function commitBaseFrom(p: SessionPaths, repo: string, commit: string, { git, signal }: CheckpointDeps): Promise<string> {
  await fsp.rm(p.gitDir, { recursive: true, force: true });
  await gitText(git, { args: ['init', '--quiet', '--bare', p.gitDir], signal });
  await fsp.writeFile(path.join(p.gitDir, 'objects', 'info', 'alternates'), `${path.join(repo, 'objects')}\n`);
  const env = { GIT_DIR: p.gitDir, ...BASE_IDENTITY };
  const tree = await gitText(git, { args: ['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], env, signal });
  const base = await gitText(git, { args: ['commit-tree', tree, '-m', 'workspace base'], env, signal });
  await gitText(git, { args: ['update-ref', 'refs/heads/base', base], env, signal });
  return base;
}

/**
 * A new session's folder from another session's checkpoint (`workspace: {checkpoint}`, a fork):
 * its files written into `dir`, committed as the base like a copied folder's.
 */
export async function checkpointInto(
  dir: string,
  c: { session: string; commit: string; ref: string },
  p: SessionPaths,
  deps: CheckpointDeps,
): Promise<{ base: string }> {
  const repo = await ensureCheckpointCommit(c, `session ${c.session}`, deps);
  await fsp.mkdir(dir);
  await materialize(repo, c.commit, dir, p.ckptIndex, deps);
  return { base: await commitBaseFrom(p, repo, c.commit, deps) };
}
