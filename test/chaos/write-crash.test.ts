/**
 * No false "unknown outcome" after a crash (ARCHITECTURE.md#side-effects-reported-as-unknown):
 * a worker SIGKILLed after its Write or Edit reached the disk and before the activity completed.
 * The tools worker is a separate process whose filesystem (the ops seam) creates a marker right
 * after writing the target file and then never returns, so the kill lands at that point in every
 * run. A normal worker retries the call: it must report success, as a fault-free run does.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionOptions } from '../../src/shared/config';
import { compareTranscripts, REPO_ROOT, spawnWorker, toolResultsById, useCluster, writeWorkflowBundle } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

const c = useCluster({ slots: 2 });

afterEach(async () => {
  await Promise.all(c.slots.map((s) => s.worker?.stop()));
});

const BEFORE = 'alpha\nbeta\ngamma\n';

function prepareWorkspace(name: string): { ws: string; file: string } {
  const ws = path.join(c.dir, `ws-${name}`);
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws, { recursive: true });
  const file = path.join(realpathSync(ws), 'notes.txt');
  writeFileSync(file, BEFORE);
  return { ws, file };
}

function options(name: string, ws: string, sessionId: string): SessionOptions {
  return {
    sessionId,
    prompt: `${scenarioTag(name)} Update the notes.`,
    cwd: ws,
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 3_000,
    retry: { maxAttempts: 10, initialIntervalMs: 200, maximumIntervalMs: 1_000 },
  };
}

const cases: { tool: 'Write' | 'Edit'; input: (file: string) => Record<string, unknown>; after: string; said: string }[] = [
  {
    tool: 'Write',
    input: (file) => ({ file_path: file, content: 'alpha\nBETA\ngamma\ndelta\n' }),
    after: 'alpha\nBETA\ngamma\ndelta\n',
    said: 'has been updated successfully.',
  },
  {
    tool: 'Edit',
    input: (file) => ({ file_path: file, old_string: 'beta\n', new_string: 'BETA\n' }),
    after: 'alpha\nBETA\ngamma\n',
    said: 'has been updated successfully.',
  },
];

test.each(cases)('$tool: a worker SIGKILLed after the write, before completing, leaves a retry that reports success', async (k) => {
  const name = `write-crash-${k.tool.toLowerCase()}`;
  const { ws, file } = prepareWorkspace(name);
  c.addScenario({ name, turns: [turn.tool('Read', { file_path: file }), turn.tool(k.tool, k.input(file)), turn.text('Updated.')] });

  // The fault-free run, in the same directory: the transcript to match.
  await c.spawn(0, ['workflow', 'model', 'tools']); // a slot remembers its roles: name them all
  const base = await c.client.start(options(name, ws, `${name}-fault-free`));
  expect(await base.result()).toMatchObject({ subtype: 'success' });
  const expected = await base.transcript();
  expect(readFileSync(file, 'utf8')).toBe(k.after);
  await c.slots[0]!.worker!.stop();

  // Workflow and model on a normal worker; tools on one that stalls right after writing notes.txt.
  prepareWorkspace(name);
  const marker = path.join(c.dir, `${name}.written`);
  await c.spawn(1, ['workflow', 'model']);
  const stalling = spawnWorker({
    address: c.server.address,
    modelUrl: c.slots[1]!.model.url,
    bundlePath: await writeWorkflowBundle(c.dir),
    name: 'stall-after-write',
    roles: ['tools'],
    script: path.join(REPO_ROOT, 'test', 'helpers', 'stall-after-write-worker.ts'),
    env: { STALL_AFTER_WRITE: file, STALL_MARKER: marker },
  });
  try {
    await stalling.ready;
    const handle = await c.client.start(options(name, ws, name));
    await waitFor('the write to land', () => existsSync(marker), { timeoutMs: 90_000, everyMs: 5 });
    // The write is on disk; the attempt that made it is stalled inside the same process.
    expect(readFileSync(marker, 'utf8')).toBe(`${stalling.pid}\n`);
    expect(readFileSync(file, 'utf8')).toBe(k.after);
    expect(stalling.alive).toBe(true);
    await stalling.kill();
    expect(await stalling.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // The attempt never completed: the retry runs on a normal tools worker.
    await c.spawn(0, ['tools']);
    expect(await handle.result()).toMatchObject({ subtype: 'success', result: 'Updated.' });
    const transcript = await handle.transcript();
    const result = toolResultsById(transcript).get('call_1_0');
    expect({ isError: result?.is_error ?? false, content: result?.content }).toEqual({
      isError: false,
      content: `The file ${file} ${k.said}`,
    });
    expect(compareTranscripts(expected, transcript)).toEqual({ unknownOutcome: [], mismatches: [] });
    expect(readFileSync(file, 'utf8')).toBe(k.after);
  } finally {
    await stalling.kill();
  }
  expect(c.crashes).toEqual([]);
});
