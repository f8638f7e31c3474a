/**
 * MCP configs without a server (ARCHITECTURE.md#mcp): `.mcp.json` shape errors name the field
 * (the CLI exits 2), literal secrets are refused before anything starts, `${VAR}` references
 * resolve from the worker's environment, and in-process SDK servers are kept by `query()` to serve itself.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseMcpConfigFile, parseMcpToolName, mcpToolName, refuseMcpSecrets } from '../../src/shared/mcp';
import { parseJob } from '../../src/shared/batch';
import { parseSessionConfig } from '../../src/shared/config';
import { resolveMcpConfig } from '../../src/activities/mcp/config';
import { createSdkMcpServer, tool } from '../../src/activities/mcp/sdk-server';
import { mapOptions } from '../../src/sdk/options';
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
  const session = (mcpServers: unknown) => {
    const config = parseSessionConfig({ prompt: 'x', cwd: '/tmp', mcpServers });
    refuseMcpSecrets(config.mcpServers!);
    return config;
  };
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

describe('credentials only by reference, in every field (ARCHITECTURE.md#mcp)', () => {
  const http = (extra: Record<string, unknown>) => ({ s: { type: 'http', url: 'https://gitlab.example/mcp', ...extra } });
  const stdio = (args: string[], env: Record<string, string> = {}) => ({ s: { command: 'npx', args, env } });
  test.each([
    ['a PRIVATE-TOKEN header', http({ headers: { 'PRIVATE-TOKEN': 'plain-value' } }), 'mcpServers.s.headers.PRIVATE-TOKEN: looks secret'],
    ['an X-Auth-Token header', http({ headers: { 'x-auth-token': 'abc' } }), 'mcpServers.s.headers.x-auth-token: looks secret'],
    [
      'a token in an innocent header',
      http({ headers: { 'X-Trace': 'glpat-abcdefghij0123456789' } }),
      'mcpServers.s.headers.X-Trace: holds',
    ],
    [
      'a token query parameter',
      { s: { type: 'http', url: 'https://h/mcp?private_token=abc123' } },
      'mcpServers.s.url (query parameter private_token): looks secret',
    ],
    [
      'an api key query parameter',
      { s: { type: 'sse', url: 'https://h/sse?x=1&apiKey=k' } },
      'mcpServers.s.url (query parameter apiKey): looks secret',
    ],
    ['an encoded one', { s: { type: 'http', url: 'https://h/mcp?access%5Ftoken=v' } }, 'mcpServers.s.url (query parameter access_token)'],
    ['a password in the URL', { s: { type: 'http', url: 'https://bot:hunter2@h/mcp' } }, 'mcpServers.s.url (password): looks secret'],
    ['a token anywhere in the URL', { s: { type: 'http', url: 'https://h/ghp_16charsormore1234/mcp' } }, 'mcpServers.s.url: holds'],
    ['--api-key VALUE', stdio(['-y', 'server', '--api-key', 'abc']), 'mcpServers.s.args.3: looks secret'],
    ['--token=VALUE', stdio(['--token=abc']), 'mcpServers.s.args.0: looks secret'],
    ['--password VALUE', stdio(['--password', 'hunter2']), 'mcpServers.s.args.1: looks secret'],
    ['--github-personal-access-token VALUE', stdio(['--github-pat', 'x']), 'mcpServers.s.args.1: looks secret'],
    ['a token-shaped argument', stdio(['serve', 'sk-proj-abcdefghijklmnop1234']), 'mcpServers.s.args.1: holds'],
    ['a token-shaped env value', stdio([], { HARMLESS: 'xoxb-1234567890-abcdefghij' }), 'mcpServers.s.env.HARMLESS: holds'],
    [
      'a literal default of a reference',
      http({ headers: { Authorization: 'Bearer ${T:-hunter2}' } }),
      'headers.Authorization: looks secret',
    ],
    [
      'a reference to the worker model key',
      stdio(['--key', '${OPENAI_API_KEY}']),
      "mcpServers.s.args.1: references ${OPENAI_API_KEY}, one of the worker's own settings",
    ],
    [
      'a reference to Temporal settings in a URL',
      { s: { type: 'http', url: 'https://h/?x=${TEMPORAL_API_KEY}' } },
      'references ${TEMPORAL_API_KEY}',
    ],
  ])('%s is refused naming the field', (_what, servers, message) => {
    expect(() => refuseMcpSecrets(servers as never)).toThrow(message);
  });

  test('references are accepted in each of those places; flags and paths are not values', () => {
    expect(() =>
      refuseMcpSecrets({
        a: {
          type: 'http',
          url: 'https://${USER_NAME}:${GL_PASSWORD}@h/mcp?private_token=${GL_TOKEN}&page=2',
          headers: { 'PRIVATE-TOKEN': '${GL_TOKEN}', 'X-Auth-Token': 'Bearer ${T}' },
        },
        b: {
          command: 'npx',
          args: ['--api-key', '${KEY}', '--token=${KEY}', '--password', '${PW}', '--token-file', '/run/secrets/t', '--token', '--verbose'],
          env: { API_TOKEN: '${KEY}', MODE: 'fast' },
        },
      }),
    ).not.toThrow();
  });

  test('the session options workflow code validates keep the rule sessions were recorded under', () => {
    // A literal X-Auth-Token passed the old rule: a running session that has one must replay as it ran.
    expect(
      parseSessionConfig({ prompt: 'x', cwd: '/tmp', mcpServers: http({ headers: { 'X-Auth-Token': 'abc' } }) }).mcpServers,
    ).toBeDefined();
    expect(() => parseSessionConfig({ prompt: 'x', cwd: '/tmp', mcpServers: http({ headers: { Authorization: 'abc' } }) })).toThrow(
      /Authorization: looks secret/,
    );
  });

  test('batch jobs refuse them naming the line', () => {
    expect(() =>
      parseJob({ prompt: 'x', cwd: '/w', mcpServers: stdio(['--api-key', 'abc']) }, { index: 1, batchId: 'b', platform: 'linux' }),
    ).toThrow('mcpServers.s.args.1: looks secret');
  });
});

test("the worker never expands its own settings or DURABLE_AGENT_SCRUB_ENV's names", () => {
  const env = { OPENAI_API_KEY: 'sk-worker', DB_PASSWORD: 'pw', DURABLE_AGENT_SCRUB_ENV: 'DB_*', GL_TOKEN: 'gl' };
  expect(resolveMcpConfig({ command: 'x', args: ['${OPENAI_API_KEY}'] }, env)).toEqual({
    ok: false,
    reason:
      "args.0: ${OPENAI_API_KEY} is one of the tools worker's own settings (or in its DURABLE_AGENT_SCRUB_ENV), which MCP servers never get",
  });
  expect(resolveMcpConfig({ type: 'http', url: 'https://h/?t=${DB_PASSWORD}' }, env)).toMatchObject({
    ok: false,
    reason: expect.stringContaining('url: ${DB_PASSWORD} is one of'),
  });
  expect(resolveMcpConfig({ type: 'http', url: 'https://h/?t=${GL_TOKEN}', headers: { 'PRIVATE-TOKEN': '${GL_TOKEN}' } }, env)).toEqual({
    ok: true,
    config: { type: 'http', url: 'https://h/?t=gl', headers: { 'PRIVATE-TOKEN': 'gl' } },
  });
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

test('query() keeps an in-process SDK server to serve itself: only the other servers go to the worker', () => {
  const server = createSdkMcpServer({ name: 'inproc', tools: [tool('t', 'd', { x: z.string() }, async () => ({ content: [] }))] });
  const mapped = mapOptions({ mcpServers: { inproc: server, calc: { command: 'node' } } } as never, '/tmp');
  expect(mapped.session.mcpServers).toEqual({ calc: { command: 'node' } });
  expect(mapped.sdkServers).toEqual({ inproc: server });
  const only = mapOptions({ mcpServers: { inproc: server } } as never, '/tmp');
  expect(only.session.mcpServers).toBeUndefined();
  expect(only.session.clientTools).toBeUndefined();
});

test('durable-agent run --mcp-config with a bad file exits 2 naming the field', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'da-mcp-config-'));
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"mcpServers": {"calc": {"command": "node", "env": {"GITHUB_TOKEN": "ghp_literal"}}}}');
  const notJson = path.join(dir, 'not.json');
  writeFileSync(notJson, '{"mcpServers":');
  const file = (name: string, servers: unknown) => {
    const f = path.join(dir, `${name}.json`);
    writeFileSync(f, JSON.stringify({ mcpServers: servers }));
    return f;
  };
  const header = file('header', { gl: { type: 'http', url: 'https://gitlab.example/mcp', headers: { 'PRIVATE-TOKEN': 'literal' } } });
  const query = file('query', { gl: { type: 'http', url: 'https://gitlab.example/mcp?token=literal' } });
  const args = file('args', { gh: { command: 'npx', args: ['-y', 'server', '--api-key', 'literal'] } });
  for (const [file, message] of [
    [bad, 'mcpServers.calc.env.GITHUB_TOKEN: looks secret'],
    [notJson, 'not valid JSON'],
    [header, 'mcpServers.gl.headers.PRIVATE-TOKEN: looks secret'],
    [query, 'mcpServers.gl.url (query parameter token): looks secret'],
    [args, 'mcpServers.gh.args.3: looks secret'],
  ] as const) {
    const r = await spawnCli(['run', '--mcp-config', file, 'hello'], { env: { PATH: process.env.PATH, HOME: dir } }).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--mcp-config ${file}`);
    expect(r.stderr).toContain(message);
  }
});
