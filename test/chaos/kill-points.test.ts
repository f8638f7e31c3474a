/**
 * One session, real worker processes, SIGKILLed at each kill point in turn — mid model stream,
 * mid Bash command, and (the workflow worker) between turns — then compared with the same
 * scenario run without faults.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionOptions } from '../../src/shared/config';
import { compareTranscripts, useCluster } from '../helpers/chaos';
import { waitFor } from '../helpers/wait';
import { scenarioTag } from '../helpers/harness';

jest.setTimeout(240_000);

const c = useCluster({ slots: 2 });

const NAME = 'kill-points';
const BUILD = 'echo t1 >> ran.log && touch started-t1 && while [ ! -e release-t1 ]; do sleep 0.05; done && touch finished-t1 && echo built';

function prepareWorkspace(): string {
  const ws = path.join(c.dir, 'ws-kill-points');
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\nbeta\n');
  return ws;
}

function options(ws: string, sessionId: string): SessionOptions {
  return {
    sessionId,
    prompt: `${scenarioTag(NAME)} Build and test the project.`,
    cwd: ws,
    model: 'gpt-4.1-mini',
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 4_000,
    retry: { maxAttempts: 10, initialIntervalMs: 500, maximumIntervalMs: 2_000 },
  };
}

test('a session survives SIGKILL mid model stream, mid Bash command and between turns', async () => {
  const ws0 = prepareWorkspace();
  c.addScenario({
    name: NAME,
    turns: [
      // ~20 chunks × 120 ms: a stream long enough to be cut in the middle.
      turn.tool(
        'Read',
        { file_path: path.join(ws0, 'notes.txt') },
        {
          text: 'I will read the notes first, then build the project and run the tests one by one.',
          chunk_delay_ms: 120,
        },
      ),
      // Journals its start, then waits for the test: the kill lands mid-command by construction.
      turn.tool('Bash', { command: BUILD }),
      turn.tool('Glob', { pattern: '*.txt' }),
      turn.tool('Bash', { command: 'echo t3 >> ran.log && echo tested' }, { delay_ms: 1_500 }),
      turn.text('Built and tested.'),
    ],
  });

  // The same scenario without faults, in the same directory: the transcript to match.
  await c.spawn(0);
  const base = await c.client.start(options(ws0, 'kill-points-fault-free'));
  await waitFor('the build command to start', () => existsSync(path.join(ws0, 'started-t1')));
  writeFileSync(path.join(ws0, 'release-t1'), '');
  expect(await base.result()).toMatchObject({ subtype: 'success' });
  const expected = await base.transcript();
  expect(readFileSync(path.join(ws0, 'ran.log'), 'utf8')).toBe('t1\nt3\n');
  await c.slots[0]!.worker!.stop();
  for (const s of c.slots) s.model.reset();

  const ws = prepareWorkspace();
  const handle = await c.client.start(options(ws, 'kill-points'));
  const running = handle.result();
  running.catch(() => undefined); // awaited below

  // 1. Mid model stream: the first request is being streamed by the only worker.
  await c.spawn(0);
  const cut = await c.killMidStream({ scenario: NAME, turnIndex: 0, minChunks: 3 });
  expect(cut).toBe(0);
  // Cut mid-way: the worker went away before the stream ended.
  const cutRequest = c.slots[0]!.model.requests.find((r) => r.scenario === NAME && r.turnIndex === 0)!;
  await waitFor('the cut stream to be seen as aborted', () => cutRequest.abortedAt !== undefined);
  // 2. Mid Bash: a fresh worker retries the model call, runs Read, then starts the build, which
  //    journals its start and waits: it is killed there.
  await c.spawn(1);
  await c.killAtMarkers(1, [path.join(ws, 'started-t1')], 'mid-bash');
  expect(existsSync(path.join(ws, 'finished-t1'))).toBe(false);
  c.endOrphans();
  // 3. Between turns: activities on one process, the workflow on another, which dies once the
  //    Glob turn's results are recorded; its replacement rebuilds the session from history.
  await Promise.all([c.spawn(0, ['model', 'tools']), c.spawn(1, ['workflow'])]);
  await waitFor('the Glob turn to finish', async () => (await handle.transcript()).length >= 7, { everyMs: 20 });
  await c.kill(1, 'between-turns');
  await c.spawn(1, ['workflow']);

  const result = await running;
  expect(result).toMatchObject({ subtype: 'success', num_turns: 5, result: 'Built and tested.' });
  const transcript = await handle.transcript();
  const diff = compareTranscripts(expected, transcript);
  expect(diff.mismatches).toEqual([]);
  // The command was running when its worker died: its retry says so instead of running it again.
  expect(diff.unknownOutcome).toEqual(['call_1_0']);
  expect(readFileSync(path.join(ws, 'ran.log'), 'utf8')).toBe('t1\nt3\n');

  expect(c.kills.map((k) => k.point)).toEqual(['mid-stream', 'mid-bash', 'between-turns']);
  // The cut stream was asked for again, by the second worker.
  const turn0 = c.slots.filter((s) => s.model.requests.some((r) => r.scenario === NAME && r.turnIndex === 0)).map((s) => s.index);
  expect(turn0).toEqual([0, 1]);
  expect(c.crashes).toEqual([]);
});
