/**
 * `npx tsx scripts/ensure-temporal.ts`: find or build the Temporal CLI (src/server/ensure-temporal.ts)
 * and print its path on stdout; progress goes to stderr. Exits 2 when no binary can be had (no
 * `temporal` and no Go to build one), 1 when the build fails.
 */
import { ensureTemporal } from '../src/server/ensure-temporal';

ensureTemporal().then(
  (bin) => {
    process.stdout.write(`${bin}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    const code = (err as { code?: unknown }).code;
    process.exitCode = typeof code === 'number' ? code : 1;
  },
);
