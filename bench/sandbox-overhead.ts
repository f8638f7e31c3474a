/**
 * Benchmark 5 — what the Bash sandbox costs per call: the real Bash tool running `true`,
 * unsandboxed vs in bubblewrap with each network mode — the host's network, loopback only, and
 * 'on' / allowedDomains, where socat bridges to the worker's filtering proxy before the command
 * starts (docs/ARCHITECTURE.md#bash-sandbox). The variants alternate call by call, so load drift
 * hits all alike; the first `--warmup` rounds are left out. No Temporal server: the figure is the
 * tool's own time, which is what the sandbox adds to every Bash activity.
 *
 *   npx tsx bench/sandbox-overhead.ts [--calls 200] [--warmup 10]
 *
 * Target: sandboxed median ≤ unsandboxed median + 20 ms.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSandbox } from '../src/activities/sandbox';
import { createAttemptJournal } from '../src/activities/tools/attempts';
import { createToolOps, createToolRegistry } from '../src/activities/tools';
import { parseSandboxOption, type SandboxOptionInput } from '../src/shared/sandbox';
import { load, machine, median, percentile, table } from './lib';

const VARIANTS: { name: string; sandbox: SandboxOptionInput }[] = [
  { name: 'unsandboxed', sandbox: 'off' },
  { name: "sandboxed, network 'host' (no isolation)", sandbox: { network: 'host' } },
  { name: "sandboxed, network 'off' (loopback only)", sandbox: { network: 'off' } },
  { name: "sandboxed, network 'on' (proxy bridge; default)", sandbox: { network: 'on' } },
  { name: 'sandboxed, allowedDomains', sandbox: { network: { allowedDomains: ['registry.npmjs.org'] } } },
];

export async function sandboxOverhead(opts: { calls: number; warmup: number }): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'da-bench-sandbox-')));
  const sandbox = createSandbox();
  const status = await sandbox.status();
  if (!status.available) throw new Error(`bubblewrap does not work here: ${status.detail}`);
  if (!status.network?.available) throw new Error(`the network proxy cannot run here: ${status.network?.detail}`);
  const ops = createToolOps({ sandbox, attempts: createAttemptJournal(path.join(dir, 'journal')) });
  const registry = createToolRegistry();
  const times: number[][] = VARIANTS.map(() => []);
  const loadBefore = load();
  try {
    for (let round = 0; round < opts.warmup + opts.calls; round++) {
      for (const [i, v] of VARIANTS.entries()) {
        const t0 = process.hrtime.bigint();
        const out = await registry.run(
          {
            name: 'Bash',
            input: { command: 'true' },
            context: {
              sessionId: 'bench',
              toolUseId: `t${round}-${i}`,
              cwd: dir,
              additionalDirectories: [],
              env: {},
              sandbox: parseSandboxOption(v.sandbox),
            },
          },
          { signal: new AbortController().signal, heartbeat: () => undefined, attempt: 1, ops },
        );
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        const sandboxed = (out.structured as { sandboxed?: boolean } | undefined)?.sandboxed;
        if (out.isError || sandboxed !== (v.sandbox !== 'off')) throw new Error(`${v.name}: unexpected result ${JSON.stringify(out)}`);
        if (round >= opts.warmup) times[i]!.push(ms);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = median(times[0]!);
  const f = (x: number) => x.toFixed(1);
  console.log(`\nBash \`true\` per call, ${opts.calls} calls each (alternating), ${status.detail}, ${status.network.detail}`);
  console.log(`${machine()}; ${loadBefore} before, ${load()} after\n`);
  console.log(
    table([
      ['variant', 'median ms', 'p90 ms', 'overhead (median)'],
      ...VARIANTS.map((v, i) => [
        v.name,
        f(median(times[i]!)),
        f(percentile(times[i]!, 90)),
        i === 0 ? '—' : `+${f(median(times[i]!) - base)} ms`,
      ]),
    ]),
  );
  const worst = Math.max(...times.slice(1).map((t) => median(t) - base));
  console.log(`\ntarget: ≤ 20 ms median overhead — ${worst <= 20 ? 'met' : 'MISSED'} (+${f(worst)} ms)`);
}

if (require.main === module) {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '200' }, warmup: { type: 'string', default: '10' } } });
  sandboxOverhead({ calls: Number(values.calls), warmup: Number(values.warmup) }).then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
