/**
 * Removing finished sessions' folders (docs/ARCHITECTURE.md#workspaces): a folder goes, with what
 * the host keeps about it, once its session is not running and its metadata is older than asked;
 * a running session's folder never. Temp folders crashed attempts left go after an hour; mirrors
 * stay (they are what makes the next batch cheap).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { sessionPaths, TEMP_PREFIX, type SessionMeta } from './layout';

/** A temp folder this old is no attempt's any more. */
export const TEMP_MAX_AGE_MS = 3_600_000;

export interface CleanupOptions {
  root: string;
  olderThanMs: number;
  /** Whether the session still runs; a session it cannot tell about is kept (throw to keep it). */
  isRunning(sessionId: string): Promise<boolean>;
  /** Only these sessions' folders (`results --cleanup`: one batch's jobs); absent: every session's. */
  only?: ReadonlySet<string>;
  now?: number;
}

export interface CleanupReport {
  removed: { sessionId: string; path: string }[];
  keptRunning: string[];
  /** Sessions whose state could not be learned: kept. */
  keptUnknown: { sessionId: string; error: string }[];
  tempRemoved: string[];
}

const mtime = (p: string) =>
  fsp.stat(p).then(
    (s) => s.mtimeMs,
    () => undefined,
  );

export async function cleanupWorkspaces(opts: CleanupOptions): Promise<CleanupReport> {
  const now = opts.now ?? Date.now();
  const report: CleanupReport = { removed: [], keptRunning: [], keptUnknown: [], tempRemoved: [] };
  const metaDir = path.join(opts.root, 'meta');
  for (const name of await fsp.readdir(metaDir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    let meta: SessionMeta;
    try {
      meta = JSON.parse(await fsp.readFile(path.join(metaDir, name), 'utf8')) as SessionMeta;
    } catch {
      continue;
    }
    if (opts.only && !opts.only.has(meta.sessionId)) continue;
    const p = sessionPaths(opts.root, meta.sessionId);
    // The latest sign of life: the folder's own mtime, the last patch, the metadata.
    const last = Math.max(...[await mtime(p.meta), await mtime(p.folder), await mtime(p.patch)].map((t) => t ?? 0));
    if (now - last < opts.olderThanMs) continue;
    let running: boolean;
    try {
      running = await opts.isRunning(meta.sessionId);
    } catch (e) {
      report.keptUnknown.push({ sessionId: meta.sessionId, error: (e as Error).message });
      continue;
    }
    if (running) {
      report.keptRunning.push(meta.sessionId);
      continue;
    }
    // The folder before its metadata: metadata without a folder is an unfinished attempt, which
    // a provisioning retry redoes; a folder without metadata would be one nobody can find.
    await fsp.rm(p.folder, { recursive: true, force: true });
    for (const f of [p.gitDir, p.patch, p.lock, p.ckptIndex, p.ckptLock, p.restored, p.meta]) {
      await fsp.rm(f, { recursive: true, force: true });
    }
    report.removed.push({ sessionId: meta.sessionId, path: p.folder });
  }
  for (const dir of [path.join(opts.root, 'sessions'), path.join(opts.root, 'mirrors')]) {
    for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const full = path.join(dir, name);
      const t = await mtime(full);
      if (t !== undefined && now - t > TEMP_MAX_AGE_MS) {
        await fsp.rm(full, { recursive: true, force: true });
        report.tempRemoved.push(full);
      }
    }
  }
  return report;
}
