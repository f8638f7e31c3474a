/** Drive `durable-agent` as a user would: a spawned `node bin/durable-agent.js …` process. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from '../helpers/harness';

export const BIN = path.resolve(__dirname, '..', '..', 'bin', 'durable-agent.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when a line of stdout or stderr matches (rejects if the process exits first). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  done: Promise<CliResult>;
}

/** The environment a CLI needs to reach the harness's server and worker, plus `extra`. */
export function cliEnv(h: Pick<Harness, 'env'>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...h.env, ...extra };
}

export function spawnCli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const line = `${stdout}\n${stderr}`.split('\n').find((l) => w.pattern.test(l));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stdout!.on('data', (b: Buffer) => ((stdout += b.toString('utf8')), check()));
  child.stderr!.on('data', (b: Buffer) => ((stderr += b.toString('utf8')), check()));
  const done = new Promise<CliResult>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitForLine(pattern, timeoutMs = 60_000) {
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`)),
          timeoutMs,
        );
        const w = {
          pattern,
          resolve: (line: string) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        waiters.push(w);
        check();
        void done.then(() => {
          if (waiters.includes(w)) {
            clearTimeout(timer);
            reject(new Error(`the CLI exited before printing ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          }
        });
      });
    },
  };
}

/** Run the CLI to completion. */
export function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Promise<CliResult> {
  return spawnCli(args, opts).done;
}

/** Parse `--json` output: one JSON value per non-empty line. */
export function jsonLines<T = Record<string, unknown>>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}
