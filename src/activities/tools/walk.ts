/**
 * Depth-first directory walk in ripgrep's `--sort path` order (siblings by name, byte order),
 * never following symlinks (as rg without `-L`), so a link cannot lead a search out of the
 * workspace. Unreadable directories are skipped.
 */
import type { ToolFs } from './ops';

export interface WalkEntry {
  abs: string;
  /** '/'-separated path relative to the walk root. */
  rel: string;
}

export interface WalkOptions {
  fs: ToolFs;
  root: string;
  /** Deepest level of files to yield (1 = the root's own files). */
  maxDepth?: number;
  /** Return true to skip a directory and everything under it. */
  skipDir?(rel: string, name: string): boolean;
  /** Stops the walk early (the caller checks `signal.aborted`). */
  signal?: AbortSignal;
  /** Called every 1,000 entries (heartbeats on huge trees). */
  onProgress?(visited: number): void;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export async function* walkFiles(opts: WalkOptions): AsyncGenerator<WalkEntry> {
  const maxDepth = opts.maxDepth ?? Infinity;
  let visited = 0;
  async function* visit(dir: string, rel: string, depth: number): AsyncGenerator<WalkEntry> {
    if (opts.signal?.aborted) return;
    let entries;
    try {
      entries = await opts.fs.readdir(dir);
    } catch {
      return;
    }
    entries.sort(byName);
    for (const e of entries) {
      if (opts.signal?.aborted) return;
      if (++visited % 1000 === 0) opts.onProgress?.(visited);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const childAbs = dir === '/' ? `/${e.name}` : `${dir}/${e.name}`;
      if (e.type === 'file') yield { abs: childAbs, rel: childRel };
      else if (e.type === 'dir' && depth < maxDepth && !opts.skipDir?.(childRel, e.name)) {
        yield* visit(childAbs, childRel, depth + 1);
      }
    }
  }
  yield* visit(opts.root, '', 1);
}
