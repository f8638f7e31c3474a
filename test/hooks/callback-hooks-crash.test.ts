/**
 * A callback hook's wait survives the workflow worker (ARCHITECTURE.md#callback-hooks): the session
 * runs on a real `durable-agent worker --roles workflow,model` process, SIGKILLed while a PreToolUse
 * request waits for the client; a second worker process replays the session, which waits on, and
 * the session completes once the client's callback answers. Tools run on this process's worker.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { query } from '../../src/sdk/query';
import type { HookInput } from '../../src/shared/hook-callbacks';
import type { HookResponseMessage, QueryMessage } from '../../src/shared/events';
import { turn } from '../../src/testing/scripted-model';
import { spawnWorker, writeWorkflowBundle, type WorkerProcess } from '../helpers/chaos';
import { scenarioTag, startHarness, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

let h: Harness;
let dir: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ roles: ['tools'] });
  dir = mkdtempSync(path.join(tmpdir(), 'da-cb-crash-'));
  bundlePath = await writeWorkflowBundle(dir);
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function workflowWorker(name: string): Promise<WorkerProcess> {
  const w = spawnWorker({
    address: h.address,
    modelUrl: h.model.url,
    bundlePath,
    name,
    roles: ['workflow', 'model'],
    env: { DURABLE_AGENT_TASK_QUEUE: h.taskQueue },
  });
  workers.push(w);
  await w.ready;
  return w;
}

test('a worker SIGKILLed while a hook request waits: another worker resumes the wait, and the answer completes the session', async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'cb-crash', turns: [turn.tool('Bash', { command: 'echo ran >> log.txt' }), turn.text('done')] });
  const first = await workflowWorker('w1');

  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const inputs: HookInput[] = [];
  const messages: QueryMessage[] = [];
  const reading = (async () => {
    for await (const m of query({
      prompt: `${scenarioTag('cb-crash')} go`,
      options: {
        cwd,
        client: h.client,
        permissionMode: 'bypassPermissions',
        allowDangerouslySkipPermissions: true,
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              timeout: 600,
              hooks: [
                async (input) => {
                  inputs.push(input);
                  await released;
                  return { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'checked by the client' } };
                },
              ],
            },
          ],
        },
      },
    }))
      messages.push(m);
  })();

  await waitFor('the callback to be asked', () => inputs.length === 1, { timeoutMs: 60_000 });
  const sessionId = inputs[0]!.session_id;
  await first.kill();
  const second = await workflowWorker('w2');
  // The new worker replays the session: the request is still pending there.
  const handle = await h.client.get(sessionId);
  await waitFor(
    'the replayed session to list the request',
    async () => (await handle.pendingHookRequests().catch(() => [])).some((p) => p.requestId === 'hook-1'),
    { timeoutMs: 90_000, everyMs: 500 },
  );
  expect(existsSync(path.join(cwd, 'log.txt'))).toBe(false);

  release();
  await reading;
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
  expect(inputs).toHaveLength(1);
  expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('ran\n');
  const responses = messages.filter((m): m is HookResponseMessage => m.type === 'system' && m.subtype === 'hook_response');
  expect(responses.map((r) => [r.hook_name, r.outcome])).toEqual([['PreToolUse[Bash] callback 1/1 (client)', 'success']]);
  expect(JSON.stringify(h.requestsOf('cb-crash')[1]!.body.messages)).toContain('checked by the client');
  expect(second.crashed).toBe(false);
});
