/**
 * The long-running commands as a user runs them: `server` refuses a taken port, `worker` waits
 * for an unreachable server instead of crashing and stops cleanly without the SDK's warnings about
 * one-kind workers, and `npm run demo`'s program prints a completed session on its own dev server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { writeWorkflowBundle } from '../helpers/chaos';
import { testAddress } from '../helpers/server';
import { waitFor } from '../helpers/wait';
import { spawnCli, type CliResult } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');

test('server on a taken port says so and exits 2; an unknown flag prints usage and exits 2', async () => {
  const port = testAddress().split(':').pop()!;
  const taken = await spawnCli(['server', '--port', port, '--no-ui', '--db', ':memory:']).done;
  expect(taken.code).toBe(2);
  expect(taken.stderr).toMatch(new RegExp(`port ${port} is already in use`));
  const bogus = await spawnCli(['server', '--bogus']).done;
  expect(bogus.code).toBe(2);
  expect(bogus.stderr).toMatch(/usage: durable-agent server/);
  const worker = await spawnCli(['worker', '--frobnicate']).done;
  expect(worker.code).toBe(2);
  expect(worker.stderr).toMatch(/usage: durable-agent worker/);
});

test('worker against an unreachable server reports it, retries with backoff, and stops on SIGTERM', async () => {
  const p = spawnCli(['worker'], { env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  const first = await p.waitForLine(/cannot reach the Temporal server at 127\.0\.0\.1:1/, 60_000);
  expect(first).toMatch(/retrying in 1s/);
  await p.waitForLine(/retrying in 2s/, 60_000);
  p.child.kill('SIGTERM');
  const result = await p.done;
  expect(result.code).toBe(0);
});

test("worker: no 'No activities/workflows registered' warning from its four one-kind workers; other SDK logs still shown", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'da-worker-'));
  const p = spawnCli(['worker'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testAddress(),
      DURABLE_AGENT_TASK_QUEUE: `one-kind-${process.pid}`,
      DURABLE_AGENT_WORKFLOW_BUNDLE: await writeWorkflowBundle(dir),
    },
  });
  try {
    // The SDK logs each worker's RUNNING state, then (in the same tick) the warning it would print.
    // Four: workflows and model calls, legacy model calls, tools, and tools on this host's own
    // queue (ARCHITECTURE.md#workspaces).
    await waitFor('four workers running', () => (p.stdout() + p.stderr()).match(/state: 'RUNNING'/g)?.length === 4);
  } finally {
    p.child.kill('SIGTERM');
  }
  const result = await p.done;
  expect(result.code).toBe(0);
  const output = result.stdout + result.stderr;
  expect(output).not.toMatch(/No (activities|workflows) registered/);
  expect(output).toMatch(/\[worker\] connected to .*; ready/);
  rmSync(dir, { recursive: true, force: true });
});

test('the demo runs a session end to end and stops everything it started', async () => {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'src', 'cli', 'demo.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, OPENAI_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const result = await new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  expect(result.code).toBe(0);
  expect(stdout).toMatch(/Model: the built-in scripted model at http:\/\/127\.0\.0\.1:\d+\/v1, priced as gpt-4\.1-mini/);
  expect(stdout).toMatch(/→ Read\(.*greet\.js\)/);
  expect(stdout).toMatch(/→ Edit\(.*greet\.js\)/);
  expect(stdout).toMatch(/→ Bash\(node greet\.js\)/);
  expect(stdout).toContain('Hello, world!');
  expect(stdout).toMatch(/✓ success\n\s+turns 4 · tokens \d+ .* cost \$0\.\d+/);
  expect(stdout + stderr).not.toMatch(/No (activities|workflows) registered/);
}, 180_000);
