/**
 * A reproducible CPU load for the benchmarks that measure behaviour on a busy machine
 * (`--load N`): N spinner processes, each a Node loop that never yields, so the run-queue holds N
 * more runnable tasks than the benchmark's own. Reported with what the machine measured while it
 * ran: the mean number of runnable tasks sampled from /proc/loadavg (field 4, "running/total"),
 * which settles at once, and the 1-minute load average at the end, which lags by about a minute.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

export interface CpuLoad {
  /** Spinner processes started. */
  readonly spinners: number;
  /** What the machine saw since the load started, for the report. */
  describe(): string;
  stop(): Promise<void>;
}

/** Runnable tasks right now (the kernel's instantaneous load, this process included). Linux. */
function runnable(): number | undefined {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]!.split('/')[0]);
  } catch {
    return undefined;
  }
}

/** Start `spinners` CPU spinners (0: none, only the sampling) and sample the run-queue every 500 ms. */
export function startCpuLoad(spinners: number): CpuLoad {
  const children: ChildProcess[] = [];
  for (let i = 0; i < spinners; i++) {
    children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
  const samples: number[] = [];
  const sampler = setInterval(() => {
    const n = runnable();
    if (n !== undefined) samples.push(n);
  }, 500);
  sampler.unref();
  return {
    spinners,
    describe() {
      const mean = samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : NaN;
      return (
        `${spinners} CPU spinner${spinners === 1 ? '' : 's'}; runnable tasks ${mean.toFixed(1)} on average ` +
        `(${samples.length} samples), 1-minute load average ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores`
      );
    },
    async stop() {
      clearInterval(sampler);
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}
