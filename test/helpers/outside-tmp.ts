/**
 * Directories outside /tmp for sandbox tests: the Bash sandbox gives each session a private /tmp,
 * which would hide a /tmp directory for a reason other than the one a test checks.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';

const made: string[] = [];

export function varTmpDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(path.join('/var/tmp', prefix)));
  made.push(dir);
  return dir;
}

/** Remove every directory `varTmpDir` made (call from afterAll). */
export function removeVarTmpDirs(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
