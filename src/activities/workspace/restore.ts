/**
 * A session's folder made again from a checkpoint on another tools host, when its own host is
 * lost (docs/ARCHITECTURE.md#checkpoints). Every host has the same workspaces root, so the folder
 * goes at the same absolute path. The checkpoint comes from this host's checkpoint repository or
 * the checkpoint remote. Like provisioning: under the session's lock, built in a temp folder
 * beside the final one, the metadata written, then renamed into place; a retry that finds the same
 * checkpoint restored returns the same answer.
 *
 * - `git`: cloned again from the host's mirror, HEAD (and branch) at the session's base, its index
 *   the base's, its files the checkpoint's: `git diff` and `workspaceDiff` show the agent's work
 *   against the same base. The agent's own commits, branches and stash are not in a checkpoint.
 * - `copy`: the checkpoint's files, the base a commit of checkpoint 0's files made here.
 * - `cwd` (a plain folder, maybe outside the root): only where nothing is, or an empty folder.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { RestoreKind, RestoreWorkspaceInput } from '../../shared/checkpoint';
import { commitBaseFrom, ensureCheckpointCommit, materialize, type CheckpointDeps } from './checkpoint';
import { gitText } from './git';
import { sessionPaths, tempFolderFor, TEMP_PREFIX, type SessionMeta, type SessionPaths } from './layout';
import { withDirLock } from './lock';
import { clearLeftovers, cloneInto, readFinished, writeAtomic } from './provision';

/** Restoring here would overwrite something, or cannot put the folder where asked: retrying cannot help. */
export class RestoreRefused extends Error {}

export interface Restored {
  path: string;
  base: string;
  kind: RestoreKind;
}

/** What a plain folder's restore left in `meta/<slug>.restored`. */
interface RestoreRecord {
  sessionId: string;
  path: string;
  checkpoint: string;
  base: string;
  restoredAt: string;
}

export async function restore(input: RestoreWorkspaceInput, deps: CheckpointDeps): Promise<Restored> {
  const p = sessionPaths(deps.root, input.sessionId);
  await fsp.mkdir(path.dirname(p.meta), { recursive: true });
  if (input.kind === 'cwd') return restorePlain(input, p, deps);
  if (path.resolve(input.path) !== p.folder) {
    throw new RestoreRefused(
      `session ${input.sessionId}: ${input.path} is not where this host keeps its folder (${p.folder}); every tools host needs the same workspaces root`,
    );
  }
  const git = input.kind === 'git' ? input.source?.git : undefined;
  if (input.kind === 'git' && (!git || !input.base)) {
    throw new RestoreRefused(`session ${input.sessionId}: a git workspace is restored from its repository and base, and one is missing`);
  }
  await fsp.mkdir(path.dirname(p.folder), { recursive: true });
  const what = `session ${input.sessionId}`;
  return withDirLock(
    p.lock,
    async () => {
      const done = await readFinished(p, input.sessionId);
      if (done && done.checkpoint === input.checkpoint.commit && done.kind === input.kind) {
        return { path: done.path, base: done.base, kind: done.kind };
      }
      // Before anything is removed: a checkpoint that cannot be had leaves the folder as it was.
      const repo = await ensureCheckpointCommit(input.checkpoint, what, deps);
      if (input.kind === 'copy' && input.baseCheckpoint) await ensureCheckpointCommit(input.baseCheckpoint, what, deps);
      await clearLeftovers(p);
      const tmp = tempFolderFor(p.folder);
      try {
        let base: string;
        let mirror: string | undefined;
        if (git !== undefined) {
          const source = { git, ...(input.source?.ref !== undefined ? { ref: input.source.ref } : {}) };
          ({ base, mirror } = await cloneInto(tmp, source, deps, { commit: input.base!, files: false }));
          await materialize(repo, input.checkpoint.commit, tmp, p.ckptIndex, deps);
          await settleClone(tmp, deps);
        } else {
          await fsp.mkdir(tmp);
          await materialize(repo, input.checkpoint.commit, tmp, p.ckptIndex, deps);
          base = await commitBaseFrom(p, repo, input.baseCheckpoint?.commit ?? input.checkpoint.commit, deps);
        }
        const meta: SessionMeta = {
          sessionId: input.sessionId,
          kind: input.kind as 'git' | 'copy',
          source: input.source ?? {},
          path: p.folder,
          base,
          ...(mirror ? { mirror } : {}),
          createdAt: new Date().toISOString(),
          checkpoint: input.checkpoint.commit,
        };
        await writeAtomic(p.meta, JSON.stringify(meta, null, 2));
        await fsp.rename(tmp, p.folder);
        return { path: p.folder, base, kind: input.kind };
      } finally {
        await fsp.rm(tmp, { recursive: true, force: true });
      }
    },
    deps.signal,
  );
}

/**
 * The clone's index is its base and its files are the checkpoint's. What the base tracks but no
 * checkpoint holds — a file its `.gitignore` ignores (committed with `add -f`), a submodule's
 * folder — is put back from the base, so it does not show as deleted; then the index's stat data
 * is refreshed, so `git status` does not hash every file again.
 */
async function settleClone(dir: string, { git, signal }: CheckpointDeps): Promise<void> {
  const list = async (args: string[]) =>
    (await git({ args: ['ls-files', '-z', ...args], cwd: dir, signal })).stdout
      .toString('utf8')
      .split('\0')
      .filter((s) => s.length > 0);
  const deleted = await list(['--deleted']);
  if (deleted.length > 0) {
    const ignored = new Set(await list(['--cached', '--ignored', '--exclude-standard']));
    const gitlinks = new Set((await list(['--stage'])).filter((l) => l.startsWith('160000 ')).map((l) => l.slice(l.indexOf('\t') + 1)));
    const back = deleted.filter((f) => ignored.has(f) || gitlinks.has(f));
    for (let i = 0; i < back.length; i += 500) {
      await gitText(git, { args: ['checkout-index', '--force', '--', ...back.slice(i, i + 500)], cwd: dir, signal });
    }
  }
  // Exit 1 when files differ from the base: the agent's work, expected.
  await git({ args: ['update-index', '-q', '--refresh'], cwd: dir, signal });
}

async function isEmptyOrAbsent(dir: string): Promise<boolean> {
  const st = await fsp.lstat(dir).catch(() => undefined);
  if (!st) return true;
  return st.isDirectory() && (await fsp.readdir(dir)).length === 0;
}

async function restorePlain(input: RestoreWorkspaceInput, p: SessionPaths, deps: CheckpointDeps): Promise<Restored> {
  const target = path.resolve(input.path);
  const what = `session ${input.sessionId}`;
  return withDirLock(
    p.lock,
    async () => {
      const rec = await fsp
        .readFile(p.restored, 'utf8')
        .then((t) => JSON.parse(t) as RestoreRecord)
        .catch(() => undefined);
      if (
        rec?.sessionId === input.sessionId &&
        rec.path === target &&
        rec.checkpoint === input.checkpoint.commit &&
        (await fsp.stat(target).catch(() => undefined))?.isDirectory()
      ) {
        return { path: target, base: rec.base, kind: 'cwd' };
      }
      if (!(await isEmptyOrAbsent(target))) {
        throw new RestoreRefused(
          `${what}: ${target} already exists and is not an empty folder; a plain folder is restored only where nothing is (move it away to restore it)`,
        );
      }
      const repo = await ensureCheckpointCommit(input.checkpoint, what, deps);
      if (input.baseCheckpoint) await ensureCheckpointCommit(input.baseCheckpoint, what, deps);
      const parent = path.dirname(target);
      await fsp.mkdir(parent, { recursive: true });
      const prefix = `${TEMP_PREFIX}${path.basename(target)}-`;
      for (const name of await fsp.readdir(parent)) {
        if (name.startsWith(prefix)) await fsp.rm(path.join(parent, name), { recursive: true, force: true });
      }
      const tmp = tempFolderFor(target);
      try {
        await fsp.mkdir(tmp);
        await materialize(repo, input.checkpoint.commit, tmp, p.ckptIndex, deps);
        const base = await commitBaseFrom(p, repo, input.baseCheckpoint?.commit ?? input.checkpoint.commit, deps);
        const record: RestoreRecord = {
          sessionId: input.sessionId,
          path: target,
          checkpoint: input.checkpoint.commit,
          base,
          restoredAt: new Date().toISOString(),
        };
        await writeAtomic(p.restored, JSON.stringify(record, null, 2));
        // Onto an empty folder, rename replaces it.
        await fsp.rename(tmp, target);
        return { path: target, base, kind: 'cwd' };
      } finally {
        await fsp.rm(tmp, { recursive: true, force: true });
      }
    },
    deps.signal,
  );
}
