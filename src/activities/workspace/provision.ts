/**
 * Making a session's folder (docs/ARCHITECTURE.md#workspaces): a `git clone --shared` from the
 * host's mirror of the repository, a copy of a template folder, or another session's checkpoint
 * (a fork), the last two with their base committed in a git dir outside the folder. Built in a
 * temp folder beside the final one, its metadata written, then renamed into place: a retry finds
 * the finished folder and returns the same answer, or removes what a crashed attempt left and
 * starts again.
 */
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { WorkspaceOption } from '../../shared/workspace';
import { checkpointInto } from './checkpoint';
import { BASE_IDENTITY, gitText, type GitRunner } from './git';
import { sessionPaths, tempFolderFor, TEMP_PREFIX, type SessionMeta, type SessionPaths } from './layout';
import { withDirLock } from './lock';
import { ensureMirror } from './mirror';

export interface ProvisionDeps {
  root: string;
  git: GitRunner;
  signal?: AbortSignal;
  /** Test seam: awaited at named steps (a test kills the process there). */
  pause?: (step: 'before-rename') => Promise<void>;
  /** Where a checkpoint this host lacks is fetched from (`workspace: {checkpoint}`). */
  checkpointRemote?: string;
}

/** The finished folder's metadata, or undefined when there is none (or the folder is missing). */
export async function readFinished(p: SessionPaths, sessionId: string): Promise<SessionMeta | undefined> {
  let meta: SessionMeta;
  try {
    meta = JSON.parse(await fsp.readFile(p.meta, 'utf8')) as SessionMeta;
  } catch {
    return undefined;
  }
  if (meta.sessionId !== sessionId) throw new Error(`${p.meta} belongs to session ${meta.sessionId}, not ${sessionId}`);
  const st = await fsp.stat(p.folder).catch(() => undefined);
  return st?.isDirectory() ? meta : undefined;
}

/** What crashed attempts left for this session: temp folders, a folder never finished. */
export async function clearLeftovers(p: SessionPaths): Promise<void> {
  const dir = path.dirname(p.folder);
  const prefix = `${TEMP_PREFIX}${p.slug}-`;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    if (name.startsWith(prefix)) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
  await fsp.rm(p.folder, { recursive: true, force: true });
  await fsp.rm(p.gitDir, { recursive: true, force: true });
  await fsp.rm(p.meta, { force: true });
  await fsp.rm(p.ckptIndex, { force: true });
}

export async function provision(sessionId: string, workspace: WorkspaceOption, deps: ProvisionDeps): Promise<SessionMeta> {
  const p = sessionPaths(deps.root, sessionId);
  await fsp.mkdir(path.dirname(p.folder), { recursive: true });
  await fsp.mkdir(path.dirname(p.meta), { recursive: true });
  return withDirLock(
    p.lock,
    async () => {
      const done = await readFinished(p, sessionId);
      if (done) return done;
      await clearLeftovers(p);
      const tmp = tempFolderFor(p.folder);
      try {
        const made: { base: string; mirror?: string } =
          workspace.git !== undefined
            ? await cloneInto(tmp, { git: workspace.git, ...(workspace.ref !== undefined ? { ref: workspace.ref } : {}) }, deps)
            : workspace.checkpoint !== undefined
              ? await checkpointInto(tmp, workspace.checkpoint, p, deps)
              : await copyInto(tmp, workspace.copy!, p, deps);
        const meta: SessionMeta = {
          sessionId,
          kind: workspace.git !== undefined ? 'git' : 'copy',
          source: workspace,
          path: p.folder,
          base: made.base,
          ...(made.mirror ? { mirror: made.mirror } : {}),
          createdAt: new Date().toISOString(),
        };
        // Metadata first, then the folder: a folder in place always has its metadata, and
        // metadata without a folder is an unfinished attempt, redone.
        await writeAtomic(p.meta, JSON.stringify(meta, null, 2));
        await deps.pause?.('before-rename');
        await fsp.rename(tmp, p.folder);
        return meta;
      } finally {
        await fsp.rm(tmp, { recursive: true, force: true });
      }
    },
    deps.signal,
  );
}

export async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fsp.writeFile(tmp, text);
  await fsp.rename(tmp, file);
}

/**
 * A `git clone --shared` of the host's mirror of `w.git` into `dir`, at where `w.ref` is now (its
 * default branch without one) or at `at.commit` (a restore: the session's base), on a local branch
 * named `w.ref` when that is a branch. `at.files: false`: HEAD and the index set, no file written
 * (the caller writes the files).
 */
export async function cloneInto(
  dir: string,
  w: { git: string; ref?: string },
  deps: ProvisionDeps,
  at: { commit?: string; files?: boolean } = {},
): Promise<{ base: string; mirror: string }> {
  const { git, signal } = deps;
  const { mirror, commit } = await ensureMirror(w.git, at.commit ?? w.ref, deps);
  // --shared: the clone borrows the mirror's objects (objects/info/alternates) and only ever reads
  // them; its own index, refs and new objects are its own. A worktree would keep them in the mirror.
  await gitText(git, { args: ['clone', '--shared', '--no-checkout', '--quiet', '--', mirror, dir], signal });
  const isBranch =
    w.ref !== undefined && (await git({ args: ['show-ref', '--verify', '--quiet', `refs/heads/${w.ref}`], cwd: mirror })).code === 0;
  if (at.files === false) {
    if (isBranch) {
      await gitText(git, { args: ['update-ref', `refs/heads/${w.ref!}`, commit], cwd: dir, signal });
      await gitText(git, { args: ['symbolic-ref', 'HEAD', `refs/heads/${w.ref!}`], cwd: dir, signal });
    } else {
      await gitText(git, { args: ['update-ref', '--no-deref', 'HEAD', commit], cwd: dir, signal });
    }
    await gitText(git, { args: ['read-tree', commit], cwd: dir, signal });
  } else {
    await gitText(git, {
      args: isBranch ? ['checkout', '--quiet', '-B', w.ref!, commit] : ['checkout', '--quiet', '--detach', commit],
      cwd: dir,
      signal,
    });
  }
  await gitText(git, { args: ['remote', 'set-url', 'origin', w.git], cwd: dir, signal });
  return { base: commit, mirror };
}

export class NotADirectory extends Error {}

async function copyInto(dir: string, from: string, p: SessionPaths, deps: ProvisionDeps): Promise<{ base: string }> {
  const st = await fsp.stat(from).catch(() => undefined);
  if (!st) throw new NotADirectory(`${from} does not exist`);
  if (!st.isDirectory()) throw new NotADirectory(`${from} is not a directory`);
  // `cp -a`: symlinks stay symlinks (their targets as written), modes and times kept. Not
  // fs.cp, which walks the tree in JavaScript: 20 s against cp's 1.5 s for 10k files (docs/BENCHMARKS.md).
  await fsp.mkdir(dir);
  await run('cp', ['-a', '--', `${from}/.`, dir], deps.signal);
  const base = await commitBase(dir, p, deps);
  return { base };
}

function run(file: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...(signal ? { signal } : {}), maxBuffer: 1024 * 1024 }, (err, _out, stderr) =>
      err ? reject(new Error(`${file} failed: ${String(stderr).trim() || err.message}`)) : resolve(),
    );
  });
}

/** Commits the folder's files, as `git add -A` sees them, in the session's git dir outside it. */
async function commitBase(dir: string, p: SessionPaths, { git, signal }: ProvisionDeps): Promise<string> {
  await gitText(git, { args: ['init', '--quiet', '--bare', p.gitDir], signal });
  const index = `${p.gitDir}/base-index`;
  const env = { GIT_DIR: p.gitDir, GIT_WORK_TREE: dir, GIT_INDEX_FILE: index, ...BASE_IDENTITY };
  await gitText(git, { args: ['add', '-A'], cwd: dir, env, signal });
  const tree = await gitText(git, { args: ['write-tree'], cwd: dir, env, signal });
  const base = await gitText(git, { args: ['commit-tree', tree, '-m', 'workspace base'], cwd: dir, env, signal });
  // A ref keeps the base (and its objects) from ever being collected.
  await gitText(git, { args: ['update-ref', 'refs/heads/base', base], env, signal });
  await fsp.rm(index, { force: true });
  return base;
}
