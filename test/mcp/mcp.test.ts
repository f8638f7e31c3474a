/**
 * MCP servers in a real session (ARCHITECTURE.md#mcp): a stdio server (test/fixtures/mcp) started
 * by the tools worker and an HTTP one this test starts, both written with the official SDK.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { turn } from '../../src/testing/scripted-model';
import type { ToolResultBlock } from '../../src/shared/messages';
import type { SessionEvent } from '../../src/shared/events';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';
import type { SessionHandle } from '../../src/client/client';
import { useHarness } from '../helpers/harness';

// Secrets live in the worker's environment; the session's config names them as ${VAR}.
const CALC_SECRET = 'calc-secret-7f3a9c1e55';
const WEB_SECRET = 'web-secret-b81d44e0a2';
process.env.CALC_SECRET = CALC_SECRET;
process.env.WEB_TOKEN = WEB_SECRET;

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'mcp');
const STDIO = path.join(FIXTURES, 'calc-stdio.mjs');

const echo = createSdkMcpServer({
  name: 'inproc',
  tools: [
    tool('shout', 'Upper-case a text', { text: z.string() }, async ({ text }) => ({
      content: [{ type: 'text', text: text.toUpperCase() }],
    })),
  ],
});
const h = useHarness({ tools: [echo] });

let http: ChildProcess;
let webUrl: string;

beforeAll(async () => {
  http = spawn(process.execPath, [path.join(FIXTURES, 'calc-http.mjs')], {
    env: { PATH: process.env.PATH, WEB_EXPECTED_TOKEN: WEB_SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: http.stdout! }), 'line')) as [string];
  webUrl = `http://127.0.0.1:${/^listening (\d+)$/.exec(line)![1]}/mcp`;
});
afterAll(() => {
  http?.kill();
});

function toolResults(messages: SessionEvent[]): ToolResultBlock[] {
  return messages.flatMap((m) =>
    m.type === 'user' && Array.isArray(m.message.content)
      ? (m.message.content.filter((b) => b.type === 'tool_result') as ToolResultBlock[])
      : [],
  );
}

async function decodedHistory(handle: SessionHandle): Promise<string> {
  return JSON.stringify(await h.client.client.workflow.getHandle(handle.sessionId).fetchHistory()).replace(
    /"data":"([A-Za-z0-9+/=]+)"/g,
    (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'),
  );
}

test('tools of a stdio and an HTTP server; a killed stdio server is restarted; deny rules apply; secrets stay out of history', async () => {
  const ws = h.workspace();
  const pidFile = path.join(ws, 'calc.pid');
  const settings = path.join(ws, 'settings.json');
  writeFileSync(settings, JSON.stringify({ permissions: { deny: ['mcp__calc__delete'] } }));
  const { handle, messages, result } = await h.run(
    {
      name: 'mcp-two-servers',
      turns: [
        turn.tool('mcp__calc__add', { a: 2, b: 3 }),
        turn.tool('mcp__web__add', { a: 10, b: 5 }),
        turn.tool('mcp__calc__token_length'),
        turn.tool('mcp__web__chart'),
        turn.tool('mcp__calc__divide', { a: 1, b: 0 }),
        // Between two calls, the stdio server dies.
        turn.tool('Bash', { command: `kill -9 $(head -1 ${pidFile})` }),
        turn.tool('mcp__calc__add', { a: 4, b: 4 }),
        turn.tool('mcp__calc__delete', { key: 'x' }),
        turn.tool('mcp__web__read_resource', { uri: 'calc://notes' }),
        turn.tool('mcp__inproc__shout', { text: 'hi' }),
        turn.text('done'),
      ],
    },
    {
      cwd: ws,
      sandbox: 'off',
      settingsFile: settings,
      allowedTools: ['Bash', 'mcp__calc', 'mcp__web', 'mcp__inproc'],
      mcpServers: {
        calc: { command: 'node', args: [STDIO], env: { CALC_TOKEN: '${CALC_SECRET}', CALC_PID_FILE: pidFile } },
        web: { type: 'http', url: webUrl, headers: { Authorization: 'Bearer ${WEB_TOKEN}' } },
      },
    },
  );
  expect(result.subtype).toBe('success');

  const init = messages.find((m) => m.type === 'system' && m.subtype === 'init');
  expect(init && init.type === 'system' && init.subtype === 'init' && init.mcp_servers).toEqual([
    { name: 'calc', status: 'connected' },
    { name: 'web', status: 'connected' },
  ]);
  const tools = init && init.type === 'system' && init.subtype === 'init' ? init.tools : [];
  expect(tools).toEqual(
    expect.arrayContaining([
      'mcp__calc__add',
      'mcp__calc__delete',
      'mcp__web__add',
      'mcp__web__list_resources',
      'mcp__web__read_resource',
      'mcp__inproc__shout',
    ]),
  );
  // The server's JSON schema went to the model as given.
  const firstRequest = h.requestsOf('mcp-two-servers')[0]!;
  const addSpec = (firstRequest.body.tools as { function: { name: string; parameters: Record<string, unknown> } }[]).find(
    (t) => t.function.name === 'mcp__calc__add',
  );
  expect(addSpec!.function.parameters).toMatchObject({
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  });

  const r = toolResults(messages);
  const pids = readFileSync(pidFile, 'utf8').trim().split('\n');
  expect(pids).toHaveLength(2); // started once, restarted once after the kill
  expect(r[0]).toMatchObject({ content: `5 (from calc pid ${pids[0]})` });
  expect(r[0]!.is_error).toBeUndefined();
  expect(r[1]!.content).toMatch(/^15 \(from web pid \d+\)$/);
  expect(r[2]!.content).toBe(`token length ${CALC_SECRET.length}`);
  expect(r[3]!.content).toMatch(/^the chart:\n\[image: image\/png, \d+ bytes, not shown\]$/);
  expect(r[4]).toMatchObject({ content: 'division by zero', is_error: true });
  expect(r[6]).toMatchObject({ content: `8 (from calc pid ${pids[1]})` });
  expect(r[6]!.is_error).toBeUndefined();
  expect(r[7]!.is_error).toBe(true);
  expect(r[7]!.content).toContain('mcp__calc__delete');
  expect(messages.some((m) => m.type === 'system' && m.subtype === 'permission_denied' && m.tool_name === 'mcp__calc__delete')).toBe(true);
  expect(r[8]!.content).toBe('notes of web: 2 + 2 = 4');
  expect(r[9]).toMatchObject({ content: 'HI' });
  expect(await handle.state()).toMatchObject({
    mcpServers: [
      { name: 'calc', status: 'connected' },
      { name: 'web', status: 'connected' },
    ],
  });

  const history = await decodedHistory(handle);
  expect(history).toContain('${CALC_SECRET}');
  expect(history).toContain('Bearer ${WEB_TOKEN}');
  expect(history).not.toContain(CALC_SECRET);
  expect(history).not.toContain(WEB_SECRET);
});

test('${VAR} in a URL query and in stdio args is expanded on the worker; history keeps the reference', async () => {
  const { handle, messages, result } = await h.run(
    {
      name: 'mcp-refs-in-url-and-args',
      turns: [turn.tool('mcp__calcargs__token_length'), turn.tool('mcp__webq__add', { a: 1, b: 2 }), turn.text('done')],
    },
    {
      cwd: h.workspace(),
      sandbox: 'off',
      allowedTools: ['mcp__calcargs', 'mcp__webq'],
      mcpServers: {
        calcargs: { command: 'node', args: [STDIO, '--api-key', '${CALC_SECRET}'] },
        webq: { type: 'http', url: `${webUrl}?access_token=\${WEB_TOKEN}` },
      },
    },
  );
  expect(result.subtype).toBe('success');
  const r = toolResults(messages);
  expect(r[0]!.content).toBe(`token length 0, api key length ${CALC_SECRET.length}`);
  expect(r[1]!.content).toMatch(/^3 \(from web pid \d+\)$/);
  const history = await decodedHistory(handle);
  expect(history).toContain('?access_token=${WEB_TOKEN}');
  expect(history).not.toContain(CALC_SECRET);
  expect(history).not.toContain(WEB_SECRET);
});

test('servers that cannot be used are reported failed with the reason, and the session runs without them', async () => {
  const ws = h.workspace();
  const { messages, result } = await h.run(
    { name: 'mcp-failed', turns: [turn.tool('mcp__calc__add', { a: 1, b: 1 }), turn.text('ok')] },
    {
      cwd: ws,
      allowedTools: ['mcp__calc'],
      mcpServers: {
        odd: { type: 'websocket', url: 'ws://127.0.0.1:1' },
        nocmd: { type: 'stdio', args: ['x'] },
        down: { type: 'http', url: 'http://127.0.0.1:1/mcp' },
        unauth: { type: 'http', url: webUrl },
        calc: { command: 'node', args: [STDIO] },
      },
    },
  );
  expect(result.subtype).toBe('success');
  const init = messages.find((m) => m.type === 'system' && m.subtype === 'init');
  const servers = init && init.type === 'system' && init.subtype === 'init' ? init.mcp_servers : [];
  const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
  expect(byName.odd).toEqual({
    name: 'odd',
    status: 'failed',
    error: 'type: unknown type "websocket" (expected "stdio", "http" or "sse")',
  });
  expect(byName.nocmd).toEqual({ name: 'nocmd', status: 'failed', error: 'command: missing (a stdio server needs a command)' });
  expect(byName.down).toMatchObject({ name: 'down', status: 'failed' });
  expect(byName.down!.error).toMatch(/fetch failed|ECONNREFUSED/);
  expect(byName.unauth).toMatchObject({ name: 'unauth', status: 'failed' });
  expect(byName.calc).toEqual({ name: 'calc', status: 'connected' });
  expect(byName.unauth!.error).toMatch(/unauthorized/);
  expect(toolResults(messages)[0]!.content).toMatch(/^2 \(from calc pid \d+\)$/);
});
