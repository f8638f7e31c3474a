/**
 * Client tools without a server (ARCHITECTURE.md#client-mcp-tools): the `clientTools` declaration
 * is validated naming the field, answers are checked by the update's validator, declared tools
 * become `mcp__<server>__<tool>` specs, and an in-process server is connected and called through a
 * real MCP client over an in-memory transport.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { z } from 'zod';
import { parseSessionConfig } from '../../src/shared/config';
import {
  clientToolSpecs,
  pendingToolRequestsQuery,
  recordedToolAnswer,
  respondToToolUpdate,
  toolAnswerProblem,
  type PendingToolRequest,
} from '../../src/shared/client-tools';
import { noClientAnswer } from '../../src/shared/model-texts';
import { MAX_TOOL_RESULT_CHARS } from '../../src/shared/tools';
import { parseJob } from '../../src/shared/batch';
import { mapOptions } from '../../src/sdk/options';
import { callServedTool, connectSdkServers, splitMcpServers } from '../../src/client/client-tools';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';

const base = { prompt: 'p', cwd: '/tmp' };
const add = { server: 'calc', name: 'add', description: 'Add', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } };
const problem = (clientTools: unknown, more: Record<string, unknown> = {}) => {
  try {
    parseSessionConfig({ ...base, ...more, clientTools });
    return null;
  } catch (e) {
    return (e as Error).message;
  }
};

test('clientTools: a valid declaration parses; the timeout is optional and positive', () => {
  const cfg = parseSessionConfig({ ...base, clientTools: [add, { ...add, name: 'sub', readOnly: true }], clientToolTimeoutMs: 5_000 });
  expect(cfg.clientTools).toEqual([
    { ...add, description: 'Add' },
    { ...add, name: 'sub', readOnly: true },
  ]);
  expect(cfg.clientToolTimeoutMs).toBe(5_000);
  expect(parseSessionConfig({ ...base, clientTools: [{ server: 's', name: 't', inputSchema: { type: 'object' } }] }).clientTools).toEqual([
    { server: 's', name: 't', description: '', inputSchema: { type: 'object' } },
  ]);
  expect(() => parseSessionConfig({ ...base, clientToolTimeoutMs: 0 })).toThrow(/^invalid session config: clientToolTimeoutMs:/);
});

test('clientTools: bad declarations are refused naming the field', () => {
  expect(problem([])).toMatch(/^invalid session config: clientTools: /);
  expect(problem([{ ...add, server: 'a b' }])).toMatch(
    /^invalid session config: clientTools\.0\.server: an MCP server name may only contain/,
  );
  expect(problem([{ ...add, server: 'a__b' }])).toMatch(/^invalid session config: clientTools\.0\.server: .*no __/);
  expect(problem([{ ...add, name: '' }])).toMatch(/^invalid session config: clientTools\.0\.name:/);
  expect(problem([{ ...add, inputSchema: { type: 'string' } }])).toMatch(
    /^invalid session config: clientTools\.0\.inputSchema: must be a JSON Schema of type "object"/,
  );
  expect(problem([{ ...add, handler: 'code' }])).toMatch(/^invalid session config: clientTools\.0\.handler: unknown option 'handler'/);
  // `a.b` and `a_b` are both offered as mcp__calc__a_b.
  expect(problem([add, { ...add, name: 'a.b' }, { ...add, name: 'a_b' }])).toBe(
    'invalid session config: clientTools.2.name: mcp__calc__a_b is declared twice (also at clientTools.1)',
  );
  expect(problem([add], { mcpServers: { calc: { command: 'node' } } })).toBe(
    'invalid session config: clientTools.0.server: mcp__calc__add: server calc is also in mcpServers; give the in-process server another name',
  );
});

test('declared tools become mcp__<server>__<tool> specs marked as run by the client', () => {
  expect(
    clientToolSpecs([
      { ...add, name: 'add.two', description: '' },
      { ...add, readOnly: true },
    ]),
  ).toEqual([
    {
      name: 'mcp__calc__add_two',
      description: 'add.two',
      inputSchema: add.inputSchema,
      readOnly: false,
      mcp: { server: 'calc', tool: 'add.two', client: true },
    },
    {
      name: 'mcp__calc__add',
      description: 'Add',
      inputSchema: add.inputSchema,
      readOnly: true,
      mcp: { server: 'calc', tool: 'add', client: true },
    },
  ]);
  expect(clientToolSpecs(undefined)).toEqual([]);
  expect(noClientAnswer({ toolName: 'mcp__calc__add', server: 'calc', timeoutMs: 60_000 })).toBe(
    'Error: MCP tool mcp__calc__add was not run: no client answered within 60 s (the in-process MCP server "calc" runs in the program that called query(), which is not answering).',
  );
});

const pending = (over: Partial<PendingToolRequest> = {}): PendingToolRequest => ({
  requestId: 'tool-1',
  server: 'calc',
  tool: 'add',
  toolName: 'mcp__calc__add',
  toolUseId: 'call_1',
  input: {},
  timeoutMs: 60_000,
  requestedAtMs: 0,
  ...over,
});

test('respondToTool answers are checked: a pending id, string content, boolean isError', () => {
  const open = [pending()];
  expect(toolAnswerProblem({ requestId: 'tool-1', content: 'ok' }, open)).toBeNull();
  expect(toolAnswerProblem({ requestId: 'tool-1', content: 'bad', isError: true }, open)).toBeNull();
  expect(toolAnswerProblem(null, open)).toBe('respondToTool: the answer must be an object');
  expect(toolAnswerProblem({ content: 'x' }, open)).toBe('respondToTool: `requestId` must be a non-empty string');
  expect(toolAnswerProblem({ requestId: 'tool-2', content: 'x' }, open)).toBe(
    'respondToTool: no pending tool request tool-2 (pending: tool-1); it may have been answered already, or timed out',
  );
  expect(toolAnswerProblem({ requestId: 'tool-2', content: 'x' }, [])).toMatch(/none is pending/);
  expect(toolAnswerProblem({ requestId: 'tool-1', content: 3 }, open)).toBe(
    'respondToTool: `content` must be a string (the tool result as text)',
  );
  expect(toolAnswerProblem({ requestId: 'tool-1', content: 'x', isError: 'yes' }, open)).toBe('respondToTool: `isError` must be a boolean');
  // Recorded capped, like any tool result.
  const long = recordedToolAnswer({ requestId: 'tool-1', content: 'x'.repeat(MAX_TOOL_RESULT_CHARS + 10), isError: false });
  expect(long.content.length).toBeLessThan(MAX_TOOL_RESULT_CHARS + 200);
  expect(long).not.toHaveProperty('isError');
  expect([respondToToolUpdate, pendingToolRequestsQuery].map((d) => `${d.type}:${d.name}`)).toEqual([
    'update:respondToTool',
    'query:pendingToolRequests',
  ]);
});

test('query() declares clientTools itself; a batch job may not', () => {
  expect(() => mapOptions({ clientTools: [add] } as never, '/tmp')).toThrow(
    /^clientTools: query\(\) declares it from the in-process servers/,
  );
  expect(() => parseJob({ prompt: 'p', cwd: '/tmp', clientTools: [add] }, { index: 0, batchId: 'b', platform: 'linux' })).toThrow(
    /^clientTools: not allowed in a batch job/,
  );
  expect(splitMcpServers({ a: { type: 'sdk', tools: [] }, b: { command: 'x' } })).toEqual({
    remote: { b: { command: 'x' } },
    sdk: { a: { type: 'sdk', tools: [] } },
  });
});

test('an in-process server is connected over an in-memory transport, listed, and called; a throw is an error result', async () => {
  const server = createSdkMcpServer({
    name: 'calc',
    tools: [
      tool(
        'add',
        'Add two numbers',
        { a: z.number(), b: z.number() },
        async ({ a, b }) => ({ content: [{ type: 'text', text: `${a + b}` }] }),
        {
          annotations: { readOnlyHint: true },
        },
      ),
      tool('boom', 'Fails', {}, async () => {
        throw new Error('kaboom');
      }),
    ],
  });
  const served = await connectSdkServers({ calc: server });
  try {
    expect(served.declaration.map((t) => [t.server, t.name, t.description, t.readOnly ?? false])).toEqual([
      ['calc', 'add', 'Add two numbers', true],
      ['calc', 'boom', 'Fails', false],
    ]);
    expect(served.declaration[0]!.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
    // The declaration is what a session accepts.
    expect(parseSessionConfig({ ...base, clientTools: served.declaration }).clientTools).toHaveLength(2);
    const client = served.clients.get('calc')!;
    const signal = new AbortController().signal;
    const req = { sessionId: 's', requestId: 'tool-1', server: 'calc', tool: 'add', input: { a: 2, b: 3 }, timeoutMs: 5_000 };
    expect(await callServedTool(client, req, 'mcp__calc__add', signal)).toEqual({ requestId: 'tool-1', content: '5' });
    expect(await callServedTool(client, { ...req, tool: 'boom', input: {} }, 'mcp__calc__boom', signal)).toMatchObject({
      isError: true,
      content: expect.stringContaining('kaboom'),
    });
    // Arguments the server's schema refuses: an error result, not a throw.
    expect(await callServedTool(client, { ...req, input: { a: 'x' } }, 'mcp__calc__add', signal)).toMatchObject({ isError: true });
    // A client that left sends nothing.
    const left = new AbortController();
    left.abort();
    expect(await callServedTool(client, req, 'mcp__calc__add', left.signal)).toBeUndefined();
  } finally {
    await served.close();
  }
});

test("the Claude Agent SDK's own createSdkMcpServer (an McpServer `instance`) is connected and called the same way", () => {
  // The SDK is an ES module, which jest cannot load here: the fixture runs under tsx and prints what it saw.
  const out = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'fixtures', 'mcp', 'agent-sdk-server.ts')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(out.stderr).toBe('');
  expect(JSON.parse(out.stdout)).toEqual({
    keys: ['type', 'name', 'instance'],
    declared: [['calc', 'add']],
    answer: { requestId: 'tool-1', content: '3' },
  });
});
