/**
 * One bare mirror per repository URL on each tools host (docs/ARCHITECTURE.md#workspaces): cloned
 * once, fetched when a ref is missing or a branch may have moved, shared read-only by every
 * session cloned from it. Serialized per URL inside the process (a promise chain) and across
 * processes (a directory lock), so 200 jobs on one repository clone it once.
 */
import { promises as fsp } from 'node:fs';
import { gitText, type GitRunner } from './git';
import { mirrorPaths, tempFolderFor } from './layout';
import { withDirLock } from './lock';

/** A branch or tag name resolved in a mirror fetched longer ago than this is fetched again first. */
const MIRROR_FRESH_MS = 60_000;

export class RefNotFound extends Error {}

export interface MirrorDeps {
  root: string;
  git: GitRunner;
  signal?: AbortSignal;
}

const chains = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier call for the same key in this process has settled. */
function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => undefined);
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return next;
}

const looksLikeSha = (ref: string) => /^[0-9a-f]{7,40}$/i.test(ref);

/**
 * The mirror of `url` (cloned if missing) and the commit `ref` names in it (fetching first when
 * the ref is a name and the last fetch is stale, or when it does not resolve). Throws RefNotFound
 * when it does not resolve after a fetch, a GitError when the clone or fetch fails.
 */
export function ensureMirror(url: string, ref: string | undefined, deps: MirrorDeps): Promise<{ mirror: string; commit: string }> {
  const paths = mirrorPaths(deps.root, url);
  return serialized(paths.dir, () =>
    withDirLock(
      paths.lock,
      async () => {
        const { git, signal } = deps;
        const resolve = async () => {
          const r = await git({
            args: ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref ?? 'HEAD'}^{commit}`],
            cwd: paths.dir,
            signal,
          });
          return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
        };
        const stamp = async () => {
          const now = new Date();
          await fsp.writeFile(paths.stamp, '');
          await fsp.utimes(paths.stamp, now, now);
        };
        if (!(await exists(paths.dir))) {
          const tmp = tempFolderFor(paths.dir);
          try {
            await gitText(git, { args: ['clone', '--mirror', '--quiet', '--', url, tmp], signal });
            // Never pruned or collected: sessions cloned with --shared borrow these objects, and a
            // commit that left every branch upstream may still be a session's base.
            for (const [k, v] of [
              ['gc.auto', '0'],
              ['remote.origin.prune', 'false'],
              ['fetch.prune', 'false'],
            ]) {
              await gitText(git, { args: ['config', k!, v!], cwd: tmp, signal });
            }
            await fsp.rename(tmp, paths.dir);
          } finally {
            await fsp.rm(tmp, { recursive: true, force: true });
          }
          await stamp();
        } else {
          const named = ref === undefined || !looksLikeSha(ref);
          const fetchedAt = await fsp.stat(paths.stamp).then(
            (s) => s.mtimeMs,
            () => 0,
          );
          const commit = await resolve();
          if (commit && !(named && Date.now() - fetchedAt > MIRROR_FRESH_MS)) return { mirror: paths.dir, commit };
          try {
            await gitText(git, { args: ['fetch', '--quiet', '--tags', '--force', 'origin'], cwd: paths.dir, signal });
          } catch (e) {
            // Only a freshness check failed (the host is offline, the server hiccuped): the mirror's
            // commit for the name stands, rather than failing every job of the batch.
            if (commit && !signal?.aborted) return { mirror: paths.dir, commit };
            throw e;
          }
          await stamp();
        }
        const commit = await resolve();
        if (!commit) throw new RefNotFound(ref ?? 'HEAD');
        return { mirror: paths.dir, commit };
      },
      deps.signal,
    ),
  );
}

const exists = (p: string) =>
  fsp.stat(p).then(
    () => true,
    () => false,
  );
