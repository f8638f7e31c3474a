/**
 * MCP configs without a server (ARCHITECTURE.md#mcp): `.mcp.json` shape errors name the field
 * (the CLI exits 2), literal secrets are refused before anything starts, `${VAR}` references
 * resolve from the worker's environment, and in-process SDK servers are refused in `query()`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseMcpConfigFile, parseMcpToolName, mcpToolName } from '../../src/shared/mcp';
import { parseSessionConfig } from '../../src/shared/config';
import { resolveMcpConfig } from '../../src/activities/mcp/config';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';
import { mapOptions } from '../../src/client/sdk-options';
import { spawnCli } from '../cli/helpers';

test('a .mcp.json that is not JSON or not the right shape is refused naming the field', () => {
  expect(() => parseMcpConfigFile('{"mcpServers": {', 'f.json')).toThrow(/^f\.json: not valid JSON/);
  expect(() => parseMcpConfigFile('[]', 'f.json')).toThrow('f.json: expected a JSON object');
  expect(() => parseMcpConfigFile('{"servers": {}}', 'f.json')).toThrow('f.json: mcpServers: missing');
  expect(() => parseMcpConfigFile('{"mcpServers": {"calc": "node calc.js"}}', 'f.json')).toThrow(/^f\.json: mcpServers\.calc: /);
  expect(() => parseMcpConfigFile('{"mcpServers": {"a b": {}}}', 'f.json')).toThrow(/mcpServers\.a b: an MCP server name may only contain/);
  expect(parseMcpConfigFile('{"mcpServers": {"calc": {"command": "node", "args": ["calc.js"]}}}', 'f.json')).toEqual({
    calc: { command: 'node', args: ['calc.js'] },
  });
});

test('literal secrets in env values and headers are refused; ${VAR} references are accepted', () => {
  const session = (mcpServers: unknown) => parseSessionConfig({ prompt: 'x', cwd: '/tmp', mcpServers });
  expect(() => session({ s: { command: 'x', env: { API_TOKEN: 'abc123' } } })).toThrow(/^mcpServers\.s\.env\.API_TOKEN: looks secret/);
  expect(() => session({ s: { type: 'http', url: 'http://h', headers: { Authorization: 'Bearer abc' } } })).toThrow(
    /^mcpServers\.s\.headers\.Authorization: looks secret/,
  );
  expect(() => session({ s: { type: 'http', url: 'http://h', headers: { 'X-Api-Key': 'k${A}' } } })).toThrow(/X-Api-Key: looks secret/);
  expect(
    session({
      s: { command: 'x', env: { API_TOKEN: '${TOKEN}', MODE: 'fast' } },
      t: { type: 'http', url: 'http://h', headers: { Authorization: 'Bearer ${TOKEN}', Accept: 'text/plain' } },
    }).mcpServers?.t,
  ).toEqual({ type: 'http', url: 'http://h', headers: { Authorization: 'Bearer ${TOKEN}', Accept: 'text/plain' } });
});

test('the worker resolves references from its environment; bad configs are reasons, not exceptions', () => {
  const env = { TOKEN: 's3cret', HOST: 'h.example' };
  expect(resolveMcpConfig({ command: 'node', args: ['${HOST}'], env: { T: '${TOKEN}', D: '${NOPE:-dflt}' } }, env)).toEqual({
    ok: true,
    config: { type: 'stdio', command: 'node', args: ['h.example'], env: { T: 's3cret', D: 'dflt' } },
  });
  expect(resolveMcpConfig({ type: 'sse', url: 'https://${HOST}/sse', headers: { Authorization: 'Bearer ${TOKEN}' } }, env)).toEqual({
    ok: true,
    config: { type: 'sse', url: 'https://h.example/sse', headers: { Authorization: 'Bearer s3cret' } },
  });
  expect(resolveMcpConfig({ command: 'x', env: { T: '${MISSING}' } }, env)).toEqual({
    ok: false,
    reason: 'env.T: ${MISSING} is not set on the tools worker',
  });
  expect(resolveMcpConfig({ type: 'ws', url: 'ws://x' }, env)).toMatchObject({
    ok: false,
    reason: expect.stringContaining('unknown type "ws"'),
  });
  expect(resolveMcpConfig({ type: 'stdio' }, env)).toMatchObject({
    ok: false,
    reason: 'command: missing (a stdio server needs a command)',
  });
  expect(resolveMcpConfig({ type: 'http' }, env)).toMatchObject({ ok: false, reason: 'url: missing (an http server needs a url)' });
  expect(resolveMcpConfig({ type: 'http', url: 'not a url' }, env)).toMatchObject({ ok: false, reason: 'url: not a valid URL: not a url' });
});

test('tool names: mcp__<server>__<tool>', () => {
  expect(mcpToolName('calc', 'add_two')).toBe('mcp__calc__add_two');
  expect(parseMcpToolName('mcp__calc__add_two')).toEqual({ server: 'calc', tool: 'add_two' });
  expect(parseMcpToolName('Bash')).toBeUndefined();
});

test('query() refuses an in-process SDK server by name: it registers on the worker', () => {
  const server = createSdkMcpServer({ name: 'inproc', tools: [tool('t', 'd', { x: z.string() }, async () => ({ content: [] }))] });
  expect(() => mapOptions({ mcpServers: { inproc: server } } as never, '/tmp')).toThrow(/^mcpServers\.inproc: an in-process SDK server/);
  expect(mapOptions({ mcpServers: { calc: { command: 'node' } } } as never, '/tmp').session.mcpServers).toEqual({
    calc: { command: 'node' },
  });
});

test('durable-agent run --mcp-config with a bad file exits 2 naming the field', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'da-mcp-config-'));
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"mcpServers": {"calc": {"command": "node", "env": {"GITHUB_TOKEN": "ghp_literal"}}}}');
  const notJson = path.join(dir, 'not.json');
  writeFileSync(notJson, '{"mcpServers":');
  for (const [file, message] of [
    [bad, 'mcpServers.calc.env.GITHUB_TOKEN: looks secret'],
    [notJson, 'not valid JSON'],
  ] as const) {
    const r = await spawnCli(['run', '--mcp-config', file, 'hello'], { env: { PATH: process.env.PATH, HOME: dir } }).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--mcp-config ${file}`);
    expect(r.stderr).toContain(message);
  }
});
