/**
 * Benchmark 10 — what a Read costs the tools worker per call, through the real tool registry (input
 * validation, path checks, the file system): a 3-line file and a 2,000-line file, both shown whole,
 * and 2,000 lines by offset from a file too big to show whole (streamed). The three alternate call
 * by call, so load drift hits all alike; the first `--warmup` rounds are left out. No Temporal
 * server: this is the tool's own time and CPU, which every Read activity adds to its turn.
 *
 *   npx tsx bench/read-tool.ts [--calls 2000] [--warmup 200]
 *
 * CPU is the process's (user + system, the file system's thread pool included) over all calls of
 * a kind, divided by their number.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createToolOps, createToolRegistry } from '../src/activities/tools';
import { load, machine, median, percentile, table } from './lib';

export async function readTool(opts: { calls: number; warmup: number }): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'da-bench-read-')));
  const line = (i: number) => `line ${i}: ${'x'.repeat(40)}`;
  const files = {
    small: path.join(dir, 'notes.txt'),
    lines2000: path.join(dir, 'two-thousand.txt'),
    big: path.join(dir, 'big.txt'),
  };
  writeFileSync(files.small, 'alpha\nbeta\ngamma\n');
  writeFileSync(files.lines2000, Array.from({ length: 2_000 }, (_, i) => line(i)).join('\n'));
  writeFileSync(files.big, Array.from({ length: 8_000 }, (_, i) => line(i)).join('\n')); // ≈ 400 KB, over Read's 256 KB
  const kinds = [
    { name: '3-line file, shown whole', input: { file_path: files.small } },
    { name: '2,000-line file (100 KB), shown whole', input: { file_path: files.lines2000 } },
    { name: '2,000 lines by offset of a 400 KB file (streamed)', input: { file_path: files.big, offset: 3_001, limit: 2_000 } },
  ];
  const registry = createToolRegistry();
  const ops = createToolOps({ ripgrep: null });
  const context = { sessionId: 'bench', toolUseId: 'toolu_bench', cwd: dir, additionalDirectories: [], env: {} };
  const exec = { signal: new AbortController().signal, heartbeat: () => {}, attempt: 1, ops };
  const wall: number[][] = kinds.map(() => []);
  const cpu = kinds.map(() => 0);
  const loadBefore = load();
  try {
    for (let round = 0; round < opts.warmup + opts.calls; round++) {
      for (const [i, k] of kinds.entries()) {
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        const out = await registry.run({ name: 'Read', input: k.input, context }, exec);
        const t1 = process.hrtime.bigint();
        const c = process.cpuUsage(c0);
        if (out.isError) throw new Error(`Read failed: ${out.content}`);
        if (round < opts.warmup) continue;
        wall[i]!.push(Number(t1 - t0) / 1e3);
        cpu[i]! += c.user + c.system;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const us = (x: number) => `${x.toFixed(0)} µs`;
  console.log(`\n## 10. Read per call (${opts.calls} calls of each, after ${opts.warmup} warm-up rounds)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after`);
  console.log(
    table([
      ['read', 'median wall', 'p90 wall', 'CPU per call'],
      ...kinds.map((k, i) => [k.name, us(median(wall[i]!)), us(percentile(wall[i]!, 90)), us(cpu[i]! / opts.calls)]),
    ]),
  );
}

if (require.main === module) {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '2000' }, warmup: { type: 'string', default: '200' } } });
  readTool({ calls: Number(values.calls), warmup: Number(values.warmup) }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
