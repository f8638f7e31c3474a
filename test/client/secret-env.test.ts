/**
 * One rule for a session's `env` at every entry point (ARCHITECTURE.md#secrets-stay-on-workers):
 * entries whose name or value looks like a credential, and the client host's own variables, are
 * dropped — never sent, never in history — and named (never their values) in a warning in the
 * session's stream and on stderr. Through the client, `query()` and the CLI's jobs file, on the
 * real server and worker.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { query } from '../../src/sdk/query';
import type { SessionHandle } from '../../src/client/client';
import { collect, scenarioTag, useHarness } from '../helpers/harness';
import { droppedEnvWarning, looksLikeCredential, MASKED_NAME, screenSessionEnv } from '../../src/shared/secret-env';
import type { SessionEvent } from '../../src/shared/events';
import { cliEnv, spawnCli } from '../cli/helpers';
import { waitFor } from '../helpers/wait';

const h = useHarness();
const RUN = Date.now().toString(36);

/** A caller's environment copied whole (the SDK idiom `env: { ...process.env }`), plus what the session means to set. */
const callerEnv = {
  PATH: '/caller/bin',
  HOME: '/home/caller',
  PWD: '/home/caller/src',
  SHELL: '/bin/zsh',
  GITHUB_PAT: `pat-${RUN}`,
  db_password: `lower-${RUN}`,
  STRIPE: `sk_live_${RUN}abcdefghijklmnop`,
  UPLOAD_URL: `https://deploy:pw-${RUN}@uploads.example/x`,
  HARMLESS_NAME: `  ghp_${RUN}0123456789abcdefghij  `,
  MODE: 'fast',
};
const VALUES = [`pat-${RUN}`, `lower-${RUN}`, `sk_live_${RUN}`, `pw-${RUN}`, `ghp_${RUN}`, '/caller/bin', '/home/caller'];
const DROPPED = 'GITHUB_PAT, HARMLESS_NAME, HOME, PATH, PWD, SHELL, STRIPE, UPLOAD_URL, db_password';

function warningsOf(messages: SessionEvent[]): string[] {
  return messages.flatMap((m) => (m.type === 'system' && m.subtype === 'warning' ? [m.message] : []));
}

async function decodedHistory(sessionId: string): Promise<string> {
  return JSON.stringify(await h.client.client.workflow.getHandle(sessionId).fetchHistory()).replace(
    /"data":"([A-Za-z0-9+/=]+)"/g,
    (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'),
  );
}

/** What a Bash `echo` of the session's variables printed (the scripted model's second request). */
function bashOutput(messages: SessionEvent[]): string {
  for (const m of messages)
    if (m.type === 'user' && Array.isArray(m.message.content))
      for (const b of m.message.content) if (b.type === 'tool_result') return b.content;
  throw new Error('no tool result');
}

async function expectCleanSession(handle: SessionHandle, messages: SessionEvent[]): Promise<void> {
  const warnings = warningsOf(messages);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(
    /^env: dropped GITHUB_PAT \(its name looks like a credential\), HARMLESS_NAME \(its value looks like a credential\), HOME \(the client host's own; the tools host's stays\)/,
  );
  for (const name of DROPPED.split(', ')) expect(warnings[0]).toContain(name);
  expect(warnings[0]).toContain('DURABLE_AGENT_PASS_ENV');
  // Kept: MODE; the tools host's own PATH and HOME, not the caller's.
  expect(bashOutput(messages).trim()).toBe(`fast|${process.env.PATH}|${process.env.HOME}`);
  const history = await decodedHistory(handle.sessionId);
  for (const v of VALUES) expect([v, history.includes(v)]).toEqual([v, false]);
}

const echoVars = turn.tool('Bash', { command: 'echo "$MODE|$PATH|$HOME"' });

test('the client drops them before anything is sent: warning in the stream and on the handle; the tools host keeps its own', async () => {
  const handle = await h.start({ name: `env-client-${RUN}`, turns: [echoVars, turn.text('ok')] }, { env: { ...callerEnv } });
  expect(handle.warnings).toEqual([droppedEnvWarning(screenSessionEnv(callerEnv).dropped)]);
  await expectCleanSession(handle, await collect(handle));
});

test('query(): the same rule; the warning reaches the stream and the stderr callback', async () => {
  const name = `env-query-${RUN}`;
  h.model.addScenario({ name, turns: [echoVars, turn.text('ok')] });
  const stderr: string[] = [];
  const q = query({
    prompt: `${scenarioTag(name)} go`,
    options: {
      client: h.client,
      cwd: h.workspace(),
      env: { ...callerEnv },
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      stderr: (s) => stderr.push(s),
    },
  });
  const messages: SessionEvent[] = [];
  for await (const m of q) messages.push(m as SessionEvent);
  const handle = await h.client.get(await q.sessionId);
  await expectCleanSession(handle, messages);
  expect(stderr.filter((l) => l.includes('env: dropped'))).toEqual([`[durable-agent] warning: ${warningsOf(messages)[0]}\n`]);
});

test("query() with the SDK idiom env: { ...process.env, X: '1' }: X reaches Bash, the token does not, the start input holds none of it, one warning names it", async () => {
  const name = `env-process-${RUN}`;
  const token = `ghp_${RUN}0123456789abcdefghijKLMNOP`;
  h.model.addScenario({ name, turns: [turn.tool('Bash', { command: 'echo "X=$X|T=${GITHUB_TOKEN-unset}"' }), turn.text('ok')] });
  const env = { ...process.env, X: '1', GITHUB_TOKEN: token, NOT_SET: undefined };
  // The caller's own environment: hundreds of entries under npm, dozens under jest alone.
  expect(Object.keys(env).length).toBeGreaterThan(20);
  const stderr: string[] = [];
  const q = query({
    prompt: `${scenarioTag(name)} go`,
    options: {
      client: h.client,
      cwd: h.workspace(),
      env,
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      stderr: (s) => stderr.push(s),
    },
  });
  const messages: SessionEvent[] = [];
  for await (const m of q) messages.push(m as SessionEvent);
  expect(bashOutput(messages).trim()).toBe('X=1|T=unset');

  // One warning, in the stream and on stderr, naming the token's variable (never its value).
  const warnings = warningsOf(messages).filter((w) => w.startsWith('env: dropped'));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain('GITHUB_TOKEN');
  expect(warnings[0]).not.toContain(token);
  expect(stderr.filter((l) => l.includes('env: dropped'))).toEqual([`[durable-agent] warning: ${warnings[0]}\n`]);

  // The workflow's start input: X, and nothing of the token or the caller host's own variables.
  const sessionId = await q.sessionId;
  const history = await h.client.client.workflow.getHandle(sessionId).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString('utf8')) as {
    env: Record<string, string>;
    envDropped: { name: string }[];
  };
  expect(input.env.X).toBe('1');
  expect(Object.keys(input.env)).not.toContain('GITHUB_TOKEN');
  expect(Object.keys(input.env)).not.toContain('PATH');
  expect(input.envDropped.map((d) => d.name)).toContain('GITHUB_TOKEN');
  expect(await decodedHistory(sessionId)).not.toContain(token);
});

test("the CLI's jobs file: stderr names the file, the line and the variables; each job's stream has the warning", async () => {
  const ws = h.workspace();
  const name = `env-jobs-${RUN}`;
  h.model.addScenario({ name, turns: [echoVars, turn.text('ok')] });
  const file = path.join(ws, 'jobs.jsonl');
  writeFileSync(
    file,
    [
      JSON.stringify({ id: 'clean', prompt: `${scenarioTag(name)} a`, permissionMode: 'bypassPermissions', env: { MODE: 'fast' } }),
      JSON.stringify({ id: 'dirty', prompt: `${scenarioTag(name)} b`, permissionMode: 'bypassPermissions', env: callerEnv }),
    ].join('\n'),
  );
  const batchId = `env-batch-${RUN}`;
  const r = await spawnCli(['submit', file, '--batch-id', batchId, '--detach'], { env: cliEnv(h), cwd: ws }).done;
  expect(r.code).toBe(0);
  const lines = r.stderr.split('\n').filter((l) => l.includes('env: dropped'));
  expect(lines).toEqual([`warning: ${file}:2: ${droppedEnvWarning(screenSessionEnv(callerEnv).dropped)}`]);
  for (const v of VALUES) expect(r.stderr).not.toContain(v);
  // The jobs' sessions start once the batch grants them a slot.
  const started = (id: string) =>
    waitFor(`job ${id} started`, () =>
      h.client.get(`${batchId}/${id}`).then(
        () => true,
        () => false,
      ),
    );
  await started('dirty');
  const dirty = await h.client.get(`${batchId}/dirty`);
  await expectCleanSession(dirty, await collect(dirty));
  await started('clean');
  const clean = await h.client.get(`${batchId}/clean`);
  expect(warningsOf(await collect(clean))).toEqual([]);
});

describe('the rule, adversarially', () => {
  test.each([
    ['ghp_16charsormore1234', true],
    ['github_pat_11ABCDEFG0123456789_abcdefghijkl', true],
    ['glpat-abcdefghij0123456789', true],
    ['sk-proj-abcdefghijklmnop1234', true],
    ['Bearer sk-ant-api03-abcdefghijklmnopqrst', true],
    ['xoxb-1234567890-abcdefghij', true],
    ['AKIAIOSFODNN7EXAMPLE', true],
    ['--token=ghp_16charsormore1234', true],
    ['ghp_16chars ormore 1234', true],
    ['postgres://app:hunter2@db:5432/app', true],
    ['postgres://app:%68unter2@db/app', true],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl', true],
    ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n', true],
    ['DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==', true],
    ['wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY9', true],
    ['postgres://app:${DB_PASSWORD}@db/app', false],
    ['postgres://app@db/app', false],
    ['https://example.com/a/b?x=1', false],
    ['risk-free', false],
    ['sk-1', false],
    ['fast', false],
    ['0123456789abcdef0123456789abcdef01234567', false],
    ['3f2504e0-4f89-11d3-9a0c-0305e82c3301', false],
    ['/home/user/projects/MyApp2/src/components/Button.tsx', false],
    ['/root/.cache/durable-agent/test-workspaces/da-test-lkBVf8/ws0-28mX8N/calc.pid', false],
    ['/run/secrets/wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY9', true],
    ['--max-old-space-size=4096 --enable-source-maps', false],
  ])('%j looks like a credential: %s', (value, credential) => {
    expect(looksLikeCredential(value)).toBe(credential);
  });

  test('a name that itself looks like a token is not repeated in the warning; non-strings are left to the schema', () => {
    const { env, dropped } = screenSessionEnv({ ghp_16charsormore1234abc: '1', Path: '/x', tz: 'UTC', LANG: 'C', UNSET: undefined });
    expect(env).toEqual({ tz: 'UTC', LANG: 'C' });
    expect(dropped).toEqual([
      { name: MASKED_NAME, reason: 'credential-name' },
      { name: 'Path', reason: 'host' },
    ]);
    expect(droppedEnvWarning(dropped)).not.toContain('ghp_');
    expect(screenSessionEnv({ N: 3 } as never).env).toEqual({ N: 3 });
  });
});
