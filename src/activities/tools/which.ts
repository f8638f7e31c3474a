import { accessSync, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';

/** First executable called `name` on PATH, or null. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
