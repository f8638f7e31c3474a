/**
 * `npx tsx scripts/ensure-temporal-server.ts`: find or build the Temporal server and
 * temporal-sql-tool (src/server/ensure-temporal-server.ts) for `durable-agent server --postgres`
 * and its tests; prints the install directory on stdout, progress on stderr. Exits 2 without Go,
 * 1 when the build fails.
 */
import * as path from 'node:path';
import { ensureTemporalServer } from '../src/server/ensure-temporal-server';

ensureTemporalServer().then(
  (install) => {
    process.stdout.write(`${path.dirname(path.dirname(install.server))}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    const code = (err as { code?: unknown }).code;
    process.exitCode = typeof code === 'number' ? code : 1;
  },
);
