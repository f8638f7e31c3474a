/**
 * In-process MCP servers through `query()` on a real dev server and worker
 * (ARCHITECTURE.md#client-mcp-tools): `createSdkMcpServer` in `options.mcpServers` runs in this
 * process; the session offers its tools as `mcp__<server>__<tool>`, and each call the scripted
 * model makes is a `system/tool_request` this process answers through its in-process MCP client.
 * A tool that throws is an error result; a client that leaves while a call waits leaves it
 * pending, and another process answers it; nobody answering is an error result after the timeout;
 * permission rules hold client tools like any other; a detached start is refused by name.
 */
import { z } from 'zod';
import { DurableAgentClient } from '../../src/client/client';
import { query } from '../../src/sdk/query';
import type { Options } from '../../src/sdk/types';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';
import { asDurableAgentEvent, type SessionEvent, type ToolRequestMessage } from '../../src/shared/events';
import { ConfigError } from '../../src/shared/config-error';
import { turn } from '../../src/testing/scripted-model';
import { toolResultsById } from '../helpers/chaos';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

async function run(name: string, prompt: string, options: Options): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const m of query({ prompt: `${scenarioTag(name)} ${prompt}`, options: { client: h.client, ...options } }))
    out.push(m as SessionEvent);
  return out;
}

const toolRequests = (ms: SessionEvent[]) => ms.filter((m): m is ToolRequestMessage => asDurableAgentEvent(m)?.subtype === 'tool_request');

/** A server whose `add` never answers: its client can only leave. */
function hangingCalculator(onCall: () => void) {
  return createSdkMcpServer({
    name: 'calc',
    tools: [
      tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async () => {
        onCall();
        return new Promise(() => undefined);
      }),
    ],
  });
}

function calculator(calls: { a: number; b: number }[]) {
  return createSdkMcpServer({
    name: 'calc',
    tools: [
      tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async (args) => {
        calls.push(args);
        return { content: [{ type: 'text', text: `sum=${args.a + args.b}` }] };
      }),
      tool('explode', 'Always fails', {}, async () => {
        throw new Error('the calculator caught fire');
      }),
    ],
  });
}

test("the model calls an in-process server's tool; this process runs it and the result reaches the model", async () => {
  h.model.addScenario({ name: 'ct-add', turns: [turn.tool('mcp__calc__add', { a: 2, b: 40 }), turn.text('done')] });
  const calls: { a: number; b: number }[] = [];
  const messages = await run('ct-add', 'add', {
    cwd: h.workspace(),
    mcpServers: { calc: calculator(calls) },
    allowedTools: ['mcp__calc'],
  });
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
  expect(calls).toEqual([{ a: 2, b: 40 }]);
  // Offered under the usual MCP name, with the server's schema; listed as a connected server.
  const init = messages.find((m) => m.type === 'system' && m.subtype === 'init') as { tools: string[]; mcp_servers: unknown[] };
  expect(init.tools).toEqual(expect.arrayContaining(['mcp__calc__add', 'mcp__calc__explode']));
  expect(init.mcp_servers).toEqual([{ name: 'calc', status: 'connected' }]);
  const sent = h.requestsOf('ct-add')[0]!.body as { tools: { function: { name: string; parameters: unknown } }[] };
  const add = sent.tools.find((t) => t.function.name === 'mcp__calc__add')!;
  expect(add.function.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
  expect(toolRequests(messages)).toEqual([
    expect.objectContaining({
      request_id: 'tool-1',
      request_session_id: messages[0]!.session_id,
      server: 'calc',
      tool: 'add',
      tool_name: 'mcp__calc__add',
      tool_input: { a: 2, b: 40 },
      timeout_ms: 60_000,
    }),
  ]);
  expect(JSON.stringify(h.requestsOf('ct-add')[1]!.body.messages)).toContain('sum=42');
  const id = messages[0]!.session_id;
  const result = [...toolResultsById(await (await h.client.get(id)).transcript()).values()][0]!;
  expect(result).toMatchObject({ content: 'sum=42' });
  expect(result.is_error).toBeFalsy();
});

test('a tool that throws is an error result the model sees', async () => {
  h.model.addScenario({ name: 'ct-throw', turns: [turn.tool('mcp__calc__explode', {}), turn.text('noted')] });
  const messages = await run('ct-throw', 'explode', {
    cwd: h.workspace(),
    mcpServers: { calc: calculator([]) },
    allowedTools: ['mcp__calc__explode'],
  });
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'noted' });
  const id = messages[0]!.session_id;
  const result = [...toolResultsById(await (await h.client.get(id)).transcript()).values()][0]!;
  expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('the calculator caught fire') });
  expect(JSON.stringify(h.requestsOf('ct-throw')[1]!.body.messages)).toContain('the calculator caught fire');
});

test('permission rules hold a client tool like any other: denied, it is never called', async () => {
  h.model.addScenario({ name: 'ct-deny', turns: [turn.tool('mcp__calc__add', { a: 1, b: 1 }), turn.text('ok')] });
  const calls: { a: number; b: number }[] = [];
  const messages = await run('ct-deny', 'add', {
    cwd: h.workspace(),
    mcpServers: { calc: calculator(calls) },
    permissionMode: 'dontAsk',
  });
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  expect(calls).toEqual([]);
  expect(toolRequests(messages)).toEqual([]);
  const id = messages[0]!.session_id;
  const result = [...toolResultsById(await (await h.client.get(id)).transcript()).values()][0]!;
  expect(result).toMatchObject({ is_error: true });
});

test('a client that leaves while a call waits leaves it pending; another process runs it and the session completes', async () => {
  h.model.addScenario({ name: 'ct-leave', turns: [turn.tool('mcp__calc__add', { a: 20, b: 3 }), turn.text('done')] });
  let firstCalled = false;
  const hanging = hangingCalculator(() => (firstCalled = true));
  const q = query({
    prompt: `${scenarioTag('ct-leave')} add`,
    options: {
      cwd: h.workspace(),
      client: h.client,
      mcpServers: { calc: hanging },
      allowedTools: ['mcp__calc'],
      clientToolTimeoutMs: 600_000,
    },
  });
  for await (const m of q) if (asDurableAgentEvent(m)?.subtype === 'tool_request') break;
  await waitFor('the first client to call its tool', () => firstCalled);
  const id = await q.sessionId;

  // Another process: its own connection, a server with the same tools.
  const other = await DurableAgentClient.connect({ address: h.address, taskQueue: h.taskQueue });
  try {
    const session = await other.get(id);
    expect(await session.pendingToolRequests()).toEqual([
      expect.objectContaining({
        requestId: 'tool-1',
        server: 'calc',
        tool: 'add',
        toolName: 'mcp__calc__add',
        input: { a: 20, b: 3 },
        timeoutMs: 600_000,
      }),
    ]);
    const calls: { a: number; b: number }[] = [];
    await session.answerTools({ calc: calculator(calls) }, { pollMs: 100 });
    expect(calls).toEqual([{ a: 20, b: 3 }]);
    expect(await session.result()).toMatchObject({ subtype: 'success', result: 'done' });
    expect(JSON.stringify(h.requestsOf('ct-leave')[1]!.body.messages)).toContain('sum=23');
    // Answered: a second answer is refused by the validator, naming the request.
    await expect(session.respondToTool({ requestId: 'tool-1', content: 'again' })).rejects.toThrow();
    expect(await session.pendingToolRequests()).toEqual([]);
  } finally {
    await other.close();
  }
});

test('with nobody answering, the call is an error result after the timeout, and the session goes on', async () => {
  h.model.addScenario({ name: 'ct-nobody', turns: [turn.tool('mcp__calc__add', { a: 1, b: 2 }), turn.text('done anyway')] });
  let called = 0;
  const q = query({
    prompt: `${scenarioTag('ct-nobody')} add`,
    options: {
      cwd: h.workspace(),
      client: h.client,
      mcpServers: { calc: hangingCalculator(() => called++) },
      allowedTools: ['mcp__calc'],
      clientToolTimeoutMs: 1_000,
    },
  });
  // This client's tool never answers, and the client leaves: nobody answers the request.
  let request: ToolRequestMessage | undefined;
  for await (const m of q) {
    if (asDurableAgentEvent(m)?.subtype === 'tool_request') {
      request = m as ToolRequestMessage;
      break;
    }
  }
  expect(request).toMatchObject({ timeout_ms: 1_000 });
  const session = await h.client.get(await q.sessionId);
  expect(await session.result()).toMatchObject({ subtype: 'success', result: 'done anyway' });
  const result = [...toolResultsById(await session.transcript()).values()][0]!;
  expect(result).toMatchObject({
    is_error: true,
    content: expect.stringContaining('MCP tool mcp__calc__add was not run: no client answered within 1 s'),
  });
  // The tool may or may not have been reached before the client left; it never answered.
  expect(called).toBeLessThanOrEqual(1);
  expect(await session.pendingToolRequests()).toEqual([]);
});

test('a detached start with an in-process server or clientTools is refused by name', async () => {
  const server = calculator([]);
  await expect(h.client.start({ prompt: 'x', cwd: h.workspace(), mcpServers: { calc: server as never } })).rejects.toThrow(
    /^mcpServers.calc: an in-process MCP server \(type 'sdk', createSdkMcpServer\) is served by the process that called query\(\)/,
  );
  const declared = h.client.start({
    prompt: 'x',
    cwd: h.workspace(),
    clientTools: [{ server: 'calc', name: 'add', inputSchema: { type: 'object' } }],
  });
  await expect(declared).rejects.toThrow(ConfigError);
  await expect(declared).rejects.toThrow(/^clientTools: the tools of in-process MCP servers are run by the process that called query\(\)/);
  // query() declares clientTools itself.
  await expect(run('never', 'x', { cwd: h.workspace(), clientTools: [] } as never)).rejects.toThrow(/^clientTools: query\(\) declares it/);
});
