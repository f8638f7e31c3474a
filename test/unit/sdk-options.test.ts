/**
 * The SDK's `Options` in `query()`: every key we do not support is refused by name before anything
 * starts; supported keys map onto session options; env entries that look secret never reach a session.
 * (Refusals throw synchronously, before any connection is attempted.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NotSupportedError, query } from '../../src/sdk/query';
import { mapOptions } from '../../src/sdk/options';
import { OPTION_SUPPORT } from '../../src/sdk/option-support';
import type { Options } from '../../src/sdk/types';
import { ConfigError } from '../../src/shared/config';
import { parseJob } from '../../src/shared/batch';
import { looksSecret } from '../../src/shared/secret-env';
import { DURABLE_AGENT_VERSION } from '../../src/shared/version';
import { optionsTable, queryTable } from '../../scripts/options-table';
import { QUERY_METHOD_SUPPORT } from '../../src/sdk/query-method-support';

// Nothing listens here: an option that got as far as connecting would fail differently.
const nowhere = { connection: { address: '127.0.0.1:1' } };
const refusalOf = (options: Options): Error => {
  try {
    query({ prompt: 'hi', options: { ...nowhere, ...options } });
  } catch (e) {
    return e as Error;
  }
  throw new Error(`query() accepted ${JSON.stringify(Object.keys(options))}`);
};

const unsupported = Object.entries(OPTION_SUPPORT).filter(([, s]) => s.status !== 'supported');

test('the table has refused and later keys (the loop below is not vacuous)', () => {
  expect(unsupported.length).toBeGreaterThan(30);
});

test.each(unsupported)('option %s is refused by name, with the reason, before anything starts', (key, support) => {
  const e = refusalOf({ [key]: { given: true } } as Options);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toBe(
    `option ${key} is not supported by durable-agent: ${support.status === 'later' ? `supported later (issue ${support.issue}); ` : ''}${support.note}`,
  );
  expect((e as ConfigError).field).toBe(key);
});

test.each<[string, Options, RegExp]>([
  [
    "permissionMode 'auto'",
    { permissionMode: 'auto' },
    /^option permissionMode 'auto' is not supported by durable-agent: there is no permission classifier/,
  ],
  [
    'bypassPermissions without allowDangerouslySkipPermissions',
    { permissionMode: 'bypassPermissions' },
    /set allowDangerouslySkipPermissions: true/,
  ],
  ['persistSession: false', { persistSession: false }, /^option persistSession: false is not supported by durable-agent/],
  ["permissionPrompts: 'none'", { permissionPrompts: 'none' }, /use permissionMode: 'dontAsk'/],
  [
    'systemPrompt snapshot: false',
    { systemPrompt: { type: 'custom', prompt: 'x', snapshot: false } },
    /^option systemPrompt.snapshot: false is not supported/,
  ],
  ['a fallback model list', { fallbackModel: 'a,b' }, /give one fallback model/],
  [
    'a hook event durable-agent does not fire',
    { hooks: { Notification: [{ hooks: [async () => ({})] }] } },
    /^option hooks.Notification is not supported by durable-agent: durable-agent does not fire Notification; the hook events it fires are PreToolUse, /,
  ],
  [
    'a matcher timeout on command hooks',
    { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true' }], timeout: 5 }] } },
    /^option hooks.Stop\[0\].timeout is not supported by durable-agent: give each command hook its own timeout/,
  ],
  [
    'clientHooks given directly',
    { clientHooks: { Stop: [{ hooks: 1 }] } } as never,
    /^clientHooks: query\(\) declares it from the functions in `hooks`/,
  ],
  ['inline settings', { settings: { permissions: {} } }, /^option settings \(an inline object\) is not supported/],
  ['two thinking controls', { effort: 'low', maxThinkingTokens: 10 }, /maxThinkingTokens and effort: give one of them/],
  ['continue with resume', { continue: true, resume: 'session-1' }, /continue: cannot be combined with resume/],
])('a value we do not support is refused by name: %s', (_name, options, message) => {
  expect(refusalOf(options).message).toMatch(message);
});

test('harmless values of unsupported keys (the SDK defaults) are accepted', () => {
  const m = mapOptions(
    { includePartialMessages: false, debug: false, enableFileCheckpointing: false, persistSession: true, permissionPrompts: 'host' },
    '/w',
  );
  expect(m.session).toEqual({ cwd: '/w', includePartialMessages: false });
});

test('supported keys map onto session options', () => {
  const m = mapOptions(
    {
      systemPrompt: ['static part', '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__', 'session part'],
      tools: { type: 'preset', preset: 'claude_code' },
      effort: 'xhigh',
      env: { PATH: '/usr/bin', EMPTY: undefined },
      settings: '/etc/agent/settings.json',
      hooks: { Stop: [{ matcher: '*', hooks: [{ type: 'command', command: 'true' }] }] },
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      maxTurns: 3,
      resume: 'session-x',
      forkSession: true,
      interactive: true,
    },
    '/default',
  );
  expect(m.session).toEqual({
    cwd: '/default',
    systemPrompt: 'static part\n\nsession part',
    maxThinkingTokens: 32_768,
    env: { PATH: '/usr/bin' },
    settingsFile: '/etc/agent/settings.json',
    hooks: { Stop: [{ matcher: '*', hooks: [{ type: 'command', command: 'true' }] }] },
    permissionMode: 'bypassPermissions',
    maxTurns: 3,
    resume: 'session-x',
    forkSession: true,
    interactive: true,
  });
  expect(m.allowBypass).toBe(true);
  expect(mapOptions({ thinking: { type: 'disabled' } }, '/w').session.maxThinkingTokens).toBe(0);
  expect(mapOptions({ thinking: { type: 'enabled', budgetTokens: 2_000 } }, '/w').session.maxThinkingTokens).toBe(2_000);
  expect(mapOptions({ systemPrompt: { type: 'preset', preset: 'claude_code', append: 'Be brief.' } }, '/w').session.systemPrompt).toEqual({
    type: 'preset',
    preset: 'claude_code',
    append: 'Be brief.',
  });
});

test("a relative cwd is resolved against the caller's working directory, as the SDK's", () => {
  expect(mapOptions({ cwd: 'sub/dir' }, '/home/me/project').session.cwd).toBe('/home/me/project/sub/dir');
  expect(mapOptions({ cwd: '../other' }, '/home/me/project').session.cwd).toBe('/home/me/other');
  expect(mapOptions({ cwd: '.' }, '/home/me/project').session.cwd).toBe('/home/me/project');
  expect(mapOptions({ cwd: '/abs/./x/' }, '/home/me/project').session.cwd).toBe('/abs/x');
  expect(mapOptions({}, '/home/me/project').session.cwd).toBe('/home/me/project');
  // query() resolves against process.cwd(): `continue` looks for sessions in the resolved folder too.
  expect(mapOptions({ cwd: 'sub', continue: true }, process.cwd()).session.cwd).toBe(path.join(process.cwd(), 'sub'));
});

test('callback hooks become the session’s declaration (no functions); the functions stay with query()', () => {
  const guard = async () => ({});
  const audit = async () => ({});
  const m = mapOptions(
    {
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [guard, audit], timeout: 30 },
          { matcher: 'Write', hooks: [{ type: 'command', command: 'check-write' }] },
          { hooks: [{ type: 'command', command: 'log' }, audit] },
        ],
        UserPromptSubmit: [{ hooks: [guard], onFailure: 'block' }],
      },
    },
    '/w',
  );
  expect(m.session.hooks).toEqual({
    PreToolUse: [
      { matcher: 'Write', hooks: [{ type: 'command', command: 'check-write' }] },
      { hooks: [{ type: 'command', command: 'log' }] },
    ],
  });
  expect(m.session.clientHooks).toEqual({
    PreToolUse: [{ matcher: 'Bash', hooks: 2, timeout: 30 }, { hooks: 1 }],
    UserPromptSubmit: [{ hooks: 1, onFailure: 'block' }],
  });
  expect(m.hookCallbacks).toEqual({ PreToolUse: [[guard, audit], [audit]], UserPromptSubmit: [[guard]] });
  expect(JSON.stringify(m.session)).not.toContain('function');
});

describe('secrets in env', () => {
  const callerEnv = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    OPENAI_API_KEY: 'sk-live-123',
    GITHUB_TOKEN: 'ghp_abc',
    DB_PASSWORD: 'hunter2',
    AWS_REGION: 'eu-west-1',
    MODE: 'fast',
  };

  test('query() passes env on as given: the client drops what must not travel (test/client/secret-env.test.ts)', () => {
    expect(mapOptions({ env: { ...callerEnv, GONE: undefined } }, '/w').session.env).toEqual(callerEnv);
  });

  test('batch jobs drop secret-looking, credential-valued and host variables, naming them; the rest is kept', () => {
    const job = parseJob(
      { prompt: 'x', cwd: '/w', env: { ...callerEnv, NPM_TOKEN: 'n', REGISTRY: 'https://u:p4ss@registry.example' } },
      { index: 1, batchId: 'b', platform: 'linux' },
    );
    expect(job.options.env).toEqual({ MODE: 'fast' });
    expect(job.options.envDropped).toEqual([
      { name: 'AWS_REGION', reason: 'credential-name' },
      { name: 'DB_PASSWORD', reason: 'credential-name' },
      { name: 'GITHUB_TOKEN', reason: 'credential-name' },
      { name: 'HOME', reason: 'host' },
      { name: 'NPM_TOKEN', reason: 'credential-name' },
      { name: 'OPENAI_API_KEY', reason: 'credential-name' },
      { name: 'PATH', reason: 'host' },
      { name: 'REGISTRY', reason: 'credential-value' },
    ]);
    expect(JSON.stringify(job)).not.toMatch(/hunter2|ghp_abc|sk-live|p4ss|\/home\/me/);
    expect(() => parseJob({ prompt: 'x', cwd: '/w', envDropped: [] }, { index: 1, batchId: 'b', platform: 'linux' })).toThrow(
      'envDropped: not allowed in a batch job',
    );
  });

  test.each([
    ['OPENAI_BASE_URL', true],
    ['anthropic_api_key', true],
    ['AWS_SECRET_ACCESS_KEY', true],
    ['MY_CLIENT_SECRET_V2', true],
    ['PGPASSWORD', true],
    ['DB_PASS', true],
    ['db-pwd', true],
    ['GITHUB_PAT', true],
    ['GITHUBTOKEN', true],
    ['NPM-TOKEN', true],
    ['STRIPE_KEY', true],
    ['PRIVATE-TOKEN', true],
    ['X-Auth-Token', true],
    ['SENTRY_DSN', true],
    ['DURABLE_AGENT_ENCRYPTION_KEYS', true],
    ['GOOGLE_APPLICATION_CREDENTIALS', true],
    ['PATH', false],
    ['NODE_ENV', false],
    ['KEYBOARD_LAYOUT', false],
    ['TOKENIZERS_PARALLELISM', false],
    ['SSH_AUTH_SOCK', false],
    ['GITHUB_TOKEN_FILE', false],
  ])('%s looks secret: %s', (name, secret) => {
    expect(looksSecret(name)).toBe(secret);
  });
});

test("README's Options table is the support table, row for row", () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  expect(readme).toContain(optionsTable());
});

test("README's Query methods table is the method support table, row for row", () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  expect(readme).toContain(queryTable());
});

const refusedMethods = Object.entries(QUERY_METHOD_SUPPORT).filter(([, s]) => s.status === 'refused');

test.each(refusedMethods)('Query.%s() rejects with a NotSupportedError that says why, without connecting', async (name, support) => {
  const q = query({ prompt: 'hi', options: nowhere }) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  await expect(q[name]!()).rejects.toThrow(new NotSupportedError(name, support.note));
});

test('every supported Query method is a function of the query', () => {
  const q = query({ prompt: 'hi', options: nowhere }) as unknown as Record<string, unknown>;
  for (const [name] of Object.entries(QUERY_METHOD_SUPPORT)) expect([name, typeof q[name]]).toEqual([name, 'function']);
  expect(refusedMethods.length).toBeLessThan(Object.keys(QUERY_METHOD_SUPPORT).length);
});

test('system/init reports the package version', () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  expect(DURABLE_AGENT_VERSION).toBe(pkg.version);
});
