/**
 * A lock across processes on one host: a directory made with `mkdir` (atomic), holding its
 * owner's pid, its mtime refreshed while held. A lock whose owner is dead, or whose mtime is
 * older than STALE_MS (an owner on another host sharing the root, hung or gone), is taken over,
 * so a worker killed while cloning never blocks the next one. The same design as the npm
 * `proper-lockfile`, whose last release is from 2021; written here instead of adding a
 * dependency for ~50 lines (docs/ARCHITECTURE.md#workspaces).
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const STALE_MS = 60_000;
const REFRESH_MS = 10_000;
const POLL_MS = 100;

interface Owner {
  pid: number;
  host: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function isStale(dir: string): Promise<boolean> {
  try {
    const st = await fsp.stat(dir);
    if (Date.now() - st.mtimeMs > STALE_MS) return true;
    const owner = JSON.parse(await fsp.readFile(path.join(dir, 'owner.json'), 'utf8')) as Owner;
    return owner.host === os.hostname() && owner.pid !== process.pid && !alive(owner.pid);
  } catch (e) {
    // Gone (retry at once), or made but its owner file not yet written (wait for it).
    return (e as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(dir));
  }
}

const exists = (p: string) =>
  fsp.stat(p).then(
    () => true,
    () => false,
  );

/** Runs `fn` holding the lock at `dir`; waits (polling) while another process holds it. */
export async function withDirLock<T>(dir: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  await fsp.mkdir(path.dirname(dir), { recursive: true });
  for (;;) {
    signal?.throwIfAborted();
    try {
      await fsp.mkdir(dir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (await isStale(dir)) {
        // Renamed away first, so two processes that both judged it stale cannot both take it.
        const grave = `${dir}.stale-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
        await fsp.rename(dir, grave).then(
          () => fsp.rm(grave, { recursive: true, force: true }),
          () => undefined,
        );
        continue;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
  await fsp.writeFile(path.join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, host: os.hostname() } satisfies Owner));
  const refresh = setInterval(() => {
    const now = new Date();
    fsp.utimes(dir, now, now).catch(() => undefined);
  }, REFRESH_MS);
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
