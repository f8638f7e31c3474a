/**
 * Read-before-edit: an existing file may be overwritten only if this session read (or wrote)
 * it and it has not changed since. The stamp comes from the workflow's durable record, so the
 * rule holds across worker restarts and continue-as-new.
 */
import type { FileStat, ToolFs } from './ops';
import { errnoCode } from './types';

const NOT_READ_MESSAGE = 'File has not been read yet. Read it first before writing to it.';
const MODIFIED_MESSAGE =
  'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';

export type Freshness = { ok: true; stat: FileStat | null } | { ok: false; error: string };

/** The file's stat, or null when it does not exist yet. */
export async function statTarget(fs: ToolFs, real: string): Promise<FileStat | null> {
  try {
    return await fs.stat(real);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}

/** Whether the target may be written: new files always; existing ones only with a matching stamp. */
export function checkFreshness(stat: FileStat | null, readStamp: number | undefined): Freshness {
  if (stat === null) return { ok: true, stat };
  if (stat.isDirectory) return { ok: false, error: 'EISDIR: illegal operation on a directory, write' };
  if (readStamp === undefined) return { ok: false, error: NOT_READ_MESSAGE };
  if (stat.mtimeMs !== readStamp) return { ok: false, error: MODIFIED_MESSAGE };
  return { ok: true, stat };
}
