/**
 * `npm run bench`: every benchmark, one after another, each in its own process (a fresh Temporal
 * runtime and a fresh dev server each), printing its figures. Each file also runs alone:
 *
 *   npx tsx bench/per-turn-overhead.ts   1. per-turn overhead vs a bare two-activity loop
 *   npx tsx bench/throughput.ts          2. turns/s and RSS at 100, 500, 1,000 sessions
 *   npx tsx bench/recovery.ts            3. SIGKILL mid model call → turn done elsewhere
 *   npx tsx bench/history-growth.ts      4. history bytes ÷ transcript bytes
 *   npx tsx bench/sandbox-overhead.ts    5. per-call cost of the Bash sandbox (bubblewrap)
 *   npx tsx bench/stream-latency.ts      6. live tokens: provider chunk → client, added latency
 *   npx tsx bench/fleet-chaos.ts         7. 100 jobs vs a rate-limited model, kills, a server restart
 *   npx tsx bench/workflow-start.ts      8. module evaluation and heap per new workflow, zod shared or not
 *   npx tsx bench/replay.ts              9. replaying a 300-turn run: ours vs the bare loop
 *   npx tsx bench/read-tool.ts           10. CPU and time per Read call: shown whole, streamed
 *   npx tsx bench/model-client.ts        11. CPU per streamed model call: our client vs openai's
 *   npx tsx bench/worker-cpu.ts          12. CPU per turn by process and thread: ours vs the bare loop
 *   npx tsx bench/permission-check.ts    13. a Bash call checked on a real parse: the parser, the added activity
 *   npx tsx bench/workspace-provision.ts 14. a workspace per job: clone from the mirror, copy, diff
 *   npx tsx bench/workspace-batch.ts     15. a batch with workspaces beside the same jobs in pre-made folders
 *   npx tsx bench/workspace-checkpoint.ts 16. per-turn workspace checkpoints: record, push, restore elsewhere
 *   npx tsx bench/host-loss.ts           17. tools host SIGKILLed → the session running again on another host
 *   npx tsx bench/heartbeats.ts          18. heartbeats of long model calls on a busy machine, as the server records them
 *
 *   npm run bench -- --only per-turn-overhead,recovery
 *
 * Results and how to read them: docs/BENCHMARKS.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const BENCHMARKS = [
  'per-turn-overhead',
  'throughput',
  'recovery',
  'history-growth',
  'sandbox-overhead',
  'stream-latency',
  'fleet-chaos',
  'workflow-start',
  'replay',
  'read-tool',
  'model-client',
  'worker-cpu',
  'permission-check',
  'workspace-provision',
  'workspace-batch',
  'workspace-checkpoint',
  'host-loss',
  'heartbeats',
];

function main(): number {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const chosen = values.only ? values.only.split(',').map((s) => s.trim()) : BENCHMARKS;
  const unknown = chosen.filter((b) => !BENCHMARKS.includes(b));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')} (known: ${BENCHMARKS.join(', ')})`);
    return 2;
  }
  let failed = 0;
  for (const name of chosen) {
    const file = path.join(__dirname, `${name}.ts`);
    if (!existsSync(file)) {
      console.error(`\n[bench] ${name}: ${file} does not exist`);
      failed++;
      continue;
    }
    console.error(`\n[bench] ${name}…`);
    const started = Date.now();
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', file], { stdio: 'inherit' });
    console.error(
      `[bench] ${name}: ${r.status === 0 ? 'done' : `FAILED (${r.signal ?? `exit ${r.status}`})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    if (r.status !== 0) failed++;
  }
  return failed > 0 ? 1 : 0;
}

process.exit(main());
