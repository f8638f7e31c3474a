/**
 * The batch progress display in a real terminal: `durable-agent submit` and `durable-agent batch
 * status` run inside tmux (a pseudo-terminal, so stderr is a TTY), and the screen is read back
 * with `tmux capture-pane`. On a terminal the bar is redrawn in place — one line that moves from
 * queued to done, with counts, spend and ETA — not a line per poll.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';
import { cli } from './helpers';

jest.setTimeout(180_000);

const h = useHarness();
const RUN = Date.now().toString(36);
const BIN = path.resolve(__dirname, '../../bin/durable-agent.js');
const BAR = /\[[#-]{24}\] (\d+)\/(\d+) done · (\d+) running · (\d+) queued · (\d+) failed · (\d+) skipped · \$\d+\.\d{4}/;

const tmux = (...args: string[]) => {
  const r = spawnSync('tmux', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const screen = (name: string) => tmux('capture-pane', '-p', '-t', name);
const sessions: string[] = [];
afterAll(() => {
  for (const s of sessions) spawnSync('tmux', ['kill-session', '-t', s]);
});

/** Run `args` in a detached tmux session of its own (80×24), keeping the pane after it exits. */
function inTerminal(name: string, args: string[]): void {
  const env = ['TEMPORAL_ADDRESS', 'DURABLE_AGENT_TASK_QUEUE'].flatMap((k) => ['-e', `${k}=${h.env[k]}`]);
  const command = `${process.execPath} ${BIN} ${args.map((a) => `'${a}'`).join(' ')}; echo "EXIT=$?"; sleep 600`;
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '24', ...env, command);
  sessions.push(name);
}

function jobsFile(prefix: string, n: number, delayMs: number): string {
  const lines = Array.from({ length: n }, (_, i) => {
    const id = `${prefix}-${i + 1}`;
    h.model.addScenario({ name: id, turns: [turn.text(`result of ${id}`, { delay_ms: delayMs })] });
    return JSON.stringify({ id, prompt: `${scenarioTag(id)} job`, permissionMode: 'bypassPermissions' });
  });
  const file = path.join(h.workspace(), 'jobs.jsonl');
  writeFileSync(file, lines.join('\n'));
  return file;
}

test('submit on a terminal: one bar, redrawn in place, from running to all done', async () => {
  const batchId = `tty-${RUN}`;
  const name = `da-submit-${RUN}`;
  inTerminal(name, ['submit', jobsFile('tty', 6, 1_500), '--batch-id', batchId, '--concurrency', '2']);
  // While it runs: the bar with jobs running and queued.
  const running = await waitFor(
    'a bar with jobs running',
    () => {
      const m = BAR.exec(screen(name));
      return m && Number(m[3]) > 0 && Number(m[1]) < 6 ? m : undefined;
    },
    { timeoutMs: 120_000, everyMs: 100 },
  );
  expect(Number(running[2])).toBe(6);
  expect(Number(running[3])).toBeLessThanOrEqual(2);
  // At the end: 6/6 done, and the bar took one line of the screen the whole time.
  const end = await waitFor('the command to exit', () => (/EXIT=\d+/.test(screen(name)) ? screen(name) : undefined), {
    timeoutMs: 120_000,
    everyMs: 200,
  });
  expect(end).toMatch(/EXIT=0/);
  const bars = end.split('\n').filter((l) => BAR.test(l));
  expect(bars).toHaveLength(1);
  expect(BAR.exec(bars[0]!)!.slice(1, 7)).toEqual(['6', '6', '0', '0', '0', '0']);
});

test('batch status on a terminal follows a running batch live; off a terminal it prints one plain line, or JSON', async () => {
  const batchId = `tty-status-${RUN}`;
  const r = await cli(['submit', jobsFile('st', 4, 1_500), '--batch-id', batchId, '--concurrency', '1', '--detach'], { env: h.env });
  expect(r.code).toBe(0);
  const name = `da-status-${RUN}`;
  inTerminal(name, ['batch', 'status', batchId]);
  const firstDone = await waitFor(
    'the live bar',
    () => {
      const m = BAR.exec(screen(name));
      return m ? Number(m[1]) : undefined;
    },
    { timeoutMs: 60_000, everyMs: 100 },
  );
  // Still on screen as jobs finish: the same line now counts more done, with an ETA.
  await waitFor(
    'the bar to advance',
    () => {
      const m = BAR.exec(screen(name));
      return m && Number(m[1]) > firstDone ? m : undefined;
    },
    { timeoutMs: 60_000, everyMs: 100 },
  );
  const end = await waitFor('the batch to end', () => (/EXIT=\d+/.test(screen(name)) ? screen(name) : undefined), {
    timeoutMs: 120_000,
    everyMs: 200,
  });
  expect(end.split('\n').filter((l) => BAR.test(l))).toHaveLength(1);
  expect(end).toMatch(/\] 4\/4 done/);

  // Not a terminal: one plain line and out; --json is machine-readable.
  const plain = await cli(['batch', 'status', batchId], { env: h.env });
  expect(plain.code).toBe(0);
  expect(plain.stderr.split('\n').filter((l) => BAR.test(l))).toHaveLength(1);
  const json = await cli(['batch', 'status', batchId, '--json'], { env: h.env });
  expect(JSON.parse(json.stdout.trim())).toMatchObject({ batchId, total: 4, completed: 4, skipped: 0, status: 'COMPLETED' });
});
