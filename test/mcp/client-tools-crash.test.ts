/**
 * A client tool's wait survives the workflow worker (ARCHITECTURE.md#client-mcp-tools): the session
 * runs on a real `durable-agent worker --roles workflow,model` process, SIGKILLed while a call of an
 * in-process MCP server's tool waits for the client; a second worker process replays the session,
 * which waits on, and the session completes once the tool (in this process) answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { query } from '../../src/sdk/query';
import { z } from 'zod';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';
import type { QueryMessage } from '../../src/shared/events';
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
  dir = mkdtempSync(path.join(tmpdir(), 'da-ct-crash-'));
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

test('a worker SIGKILLed while a tool request waits: another worker resumes the wait, and the answer completes the session', async () => {
  h.model.addScenario({ name: 'ct-crash', turns: [turn.tool('mcp__calc__add', { a: 40, b: 2 }), turn.text('done')] });
  const first = await workflowWorker('w1');

  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const calls: { a: number; b: number }[] = [];
  const calc = createSdkMcpServer({
    name: 'calc',
    tools: [
      tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async (args) => {
        calls.push(args);
        await released;
        return { content: [{ type: 'text', text: `sum=${args.a + args.b}` }] };
      }),
    ],
  });
  const messages: QueryMessage[] = [];
  const q = query({
    prompt: `${scenarioTag('ct-crash')} go`,
    options: { cwd: h.workspace(), client: h.client, mcpServers: { calc }, allowedTools: ['mcp__calc'], clientToolTimeoutMs: 600_000 },
  });
  const reading = (async () => {
    for await (const m of q) messages.push(m);
  })();

  await waitFor('the tool to be called', () => calls.length === 1, { timeoutMs: 60_000 });
  const sessionId = await q.sessionId;
  await first.kill();
  const second = await workflowWorker('w2');
  // The new worker replays the session: the request is still pending there.
  const handle = await h.client.get(sessionId);
  await waitFor(
    'the replayed session to list the request',
    async () => (await handle.pendingToolRequests().catch(() => [])).some((p) => p.requestId === 'tool-1'),
    { timeoutMs: 90_000, everyMs: 500 },
  );

  release();
  await reading;
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
  expect(calls).toEqual([{ a: 40, b: 2 }]);
  expect(JSON.stringify(h.requestsOf('ct-crash')[1]!.body.messages)).toContain('sum=42');
  expect(second.crashed).toBe(false);
});
