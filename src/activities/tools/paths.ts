/**
 * Path policy: a tool may touch only the session's cwd and its additionalDirectories. The check
 * is on the real path (symlinks resolved), so a link inside the workspace cannot reach out of it.
 */
import * as path from 'node:path';
import type { ToolContext } from '../../shared/tools';
import type { ToolFs } from './ops';
import { errnoCode } from './types';

export type PathCheck =
  | {
      ok: true;
      /** The path as asked for, made absolute and normalised (the key of read stamps). */
      requested: string;
      /** The real path: every existing symlink resolved. Tools operate on this one. */
      real: string;
    }
  | { ok: false; error: string };

const MAX_LINK_HOPS = 40;

/**
 * Real path of `p` even when it does not exist yet: the realpath of its deepest existing
 * ancestor plus the missing tail. A dangling symlink is followed to where it points, so writing
 * "through" it is checked against the policy too.
 */
export async function realpathDeep(fs: ToolFs, p: string, hops = 0): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw Object.assign(new Error(`ELOOP: too many symbolic links: ${p}`), { code: 'ELOOP' });
  try {
    return await fs.realpath(p);
  } catch (err) {
    const code = errnoCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await realpathDeep(fs, parent, hops);
  const candidate = path.join(realParent, path.basename(p));
  let isLink = false;
  try {
    isLink = (await fs.lstat(candidate)).isSymbolicLink;
  } catch {
    // does not exist: the tail is simply missing
  }
  if (!isLink) return candidate;
  const target = await fs.readlink(candidate);
  return realpathDeep(fs, path.resolve(realParent, target), hops + 1);
}

function isInside(child: string, root: string): boolean {
  if (root === '/') return child.startsWith('/');
  return child === root || child.startsWith(`${root}/`);
}

export interface ResolvePathOptions {
  context: ToolContext;
  fs: ToolFs;
  /** Glob and Grep resolve a relative `path` against cwd; file tools require absolute paths. */
  allowRelative?: boolean;
}

export async function resolveToolPath(filePath: string, opts: ResolvePathOptions): Promise<PathCheck> {
  const { context, fs } = opts;
  if (!path.isAbsolute(filePath) && !opts.allowRelative) {
    return { ok: false, error: `File path must be absolute, not relative: ${filePath}` };
  }
  const requested = path.resolve(context.cwd, filePath);
  let real: string;
  try {
    real = await realpathDeep(fs, requested);
  } catch (err) {
    return { ok: false, error: `Cannot resolve path ${requested}: ${errnoCode(err) ?? String(err)}` };
  }
  const dirs = [context.cwd, ...context.additionalDirectories].map((d) => path.resolve(d));
  for (const dir of dirs) {
    let root: string;
    try {
      root = await realpathDeep(fs, dir);
    } catch {
      root = dir;
    }
    if (isInside(real, root)) return { ok: true, requested, real };
  }
  return { ok: false, error: `Path ${requested} is outside the allowed working directories: ${dirs.join(', ')}` };
}

/** Stamps under both the requested and the real path, so the workflow finds either key. */
export function stampsFor(check: { requested: string; real: string }, mtimeMs: number): { path: string; mtimeMs: number }[] {
  const stamps = [{ path: check.requested, mtimeMs }];
  if (check.real !== check.requested) stamps.push({ path: check.real, mtimeMs });
  return stamps;
}
