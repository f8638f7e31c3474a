/**
 * The environment of Bash and hooks by allowlist (ARCHITECTURE.md#secrets-stay-on-workers): the
 * rules, then what a real Bash command and a real command hook see in a session on the real worker
 * (in this process, so this file's process.env is the worker's environment).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { buildChildEnv, createToolOps, isScrubbedEnvName, parsePassList, parseScrubList } from '../../src/activities/tools';
import type { ToolResultBlock } from '../../src/shared/messages';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';

const RUN = `${process.pid}${Date.now().toString(36)}`;
/** The worker's secrets: none of them may reach a Bash child or a hook. */
const WORKER_SECRETS = {
  DB_PASSWORD: `db-pw-${RUN}`,
  PGPASSWORD: `pg-pw-${RUN}`,
  GITHUB_PAT: `gh-pat-${RUN}`,
  STRIPE_KEY: `stripe-${RUN}`,
  AWS_ACCESS_KEY_ID: `aws-id-${RUN}`,
  OPENAI_API_KEY: `openai-${RUN}`,
  // Not secret-looking at all: still the worker's, still not passed.
  INTERNAL_BILLING_URL: `https://billing-${RUN}.internal`,
  // Named by the operator for Bash, and named to be scrubbed too: scrubbing wins.
  BOTH_NAMED: `both-${RUN}`,
};
Object.assign(process.env, WORKER_SECRETS, {
  DEPLOY_TOKEN_FOR_BASH: `passed-${RUN}`,
  DURABLE_AGENT_PASS_ENV: 'DEPLOY_TOKEN_FOR_BASH, BOTH_NAMED',
  DURABLE_AGENT_SCRUB_ENV: 'BOTH_NAMED',
  LC_TIME: 'C',
});

const h = useHarness();

describe('the allowlist', () => {
  test('only PATH, HOME, LANG/LC_*, TERM, TZ, USER, LOGNAME, SHELL, TMPDIR of the worker, then the session env', () => {
    const base = {
      PATH: '/bin',
      HOME: '/home/w',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TERM: 'xterm',
      TZ: 'UTC',
      USER: 'w',
      LOGNAME: 'w',
      SHELL: '/bin/sh',
      TMPDIR: '/tmp',
      DB_PASSWORD: 'pw',
      db_password: 'pw',
      NODE_OPTIONS: '--require /evil.js',
      TOKENIZERS_PARALLELISM: 'false',
    };
    expect(buildChildEnv({ base, sessionEnv: { MODE: 'test', HOME: '/session-home' } })).toEqual({
      PATH: '/bin',
      HOME: '/session-home',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TERM: 'xterm',
      TZ: 'UTC',
      USER: 'w',
      LOGNAME: 'w',
      SHELL: '/bin/sh',
      TMPDIR: '/tmp',
      MODE: 'test',
    });
  });

  test('DURABLE_AGENT_PASS_ENV adds exact names; DURABLE_AGENT_SCRUB_ENV takes away, even allowed ones', () => {
    const base = { PATH: '/bin', TZ: 'UTC', DB_PASSWORD: 'pw', DB_HOST: 'h', DURABLE_AGENT_PASS_ENV: 'DB_PASSWORD,DB_HOST' };
    expect(buildChildEnv({ base, scrub: parseScrubList('DB_HOST, T*') })).toEqual({ PATH: '/bin', DB_PASSWORD: 'pw' });
    // Names only: a pattern would pass what nobody chose; refused when the worker starts.
    expect(() => parsePassList('DB_*')).toThrow('DURABLE_AGENT_PASS_ENV: "DB_*": expected variable names');
    expect(() => createToolOps({ baseEnv: { DURABLE_AGENT_PASS_ENV: 'OK_NAME, bad-name' }, ripgrep: null })).toThrow(/"bad-name"/);
    expect(parsePassList(' A , B_2 ,')).toEqual(['A', 'B_2']);
  });

  test("the worker's secret-looking names are still what the sandbox hides the files of", () => {
    for (const name of ['OPENAI_API_KEY', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'DB_PASSWORD_FILE', 'GITHUB_TOKEN', 'STRIPE_KEY'])
      expect([name, isScrubbedEnvName(name)]).toEqual([name, true]);
    for (const name of ['PATH', 'HOME', 'EDITOR']) expect([name, isScrubbedEnvName(name)]).toEqual([name, false]);
    expect(isScrubbedEnvName('INTERNAL_URL', parseScrubList('INTERNAL_*'))).toBe(true);
  });
});

function toolResults(messages: SessionEvent[]): ToolResultBlock[] {
  return messages.flatMap((m) =>
    m.type === 'user' && Array.isArray(m.message.content)
      ? (m.message.content.filter((b) => b.type === 'tool_result') as ToolResultBlock[])
      : [],
  );
}

test('a real Bash command and a real hook see the allowlist, the passed name and the session env — no worker secret', async () => {
  const ws = h.workspace();
  const hookFile = path.join(ws, 'hook-env.txt');
  const { messages, result } = await h.run(
    { name: `env-allowlist-${RUN}`, turns: [turn.tool('Bash', { command: 'env' }), turn.text('done')] },
    {
      cwd: ws,
      env: { SESSION_MODE: 'fast' },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `env > ${JSON.stringify(hookFile)}` }] }] },
    },
  );
  expect(result.subtype).toBe('success');
  const bashEnv = toolResults(messages)[0]!.content;
  const hookEnv = readFileSync(hookFile, 'utf8');
  for (const [who, seen] of [
    ['Bash', bashEnv],
    ['hook', hookEnv],
  ] as const) {
    const names = seen
      .split('\n')
      .map((l) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(l)?.[1])
      .filter(Boolean);
    for (const [name, value] of Object.entries(WORKER_SECRETS)) {
      expect([who, name, names.includes(name)]).toEqual([who, name, false]);
      expect([who, name, seen.includes(value)]).toEqual([who, name, false]);
    }
    expect([who, seen]).toEqual([who, expect.stringContaining(`DEPLOY_TOKEN_FOR_BASH=passed-${RUN}`)]);
    expect([who, seen]).toEqual([who, expect.stringContaining('SESSION_MODE=fast')]);
    expect([who, seen]).toEqual([who, expect.stringContaining(`PATH=${process.env.PATH}`)]);
    expect([who, seen]).toEqual([who, expect.stringContaining('LC_TIME=C')]);
    // Nothing of the worker's beyond the allowlist, the passed name and what bash and the sandbox set
    // themselves (the proxy variables of network 'on', pointing at the sandbox's own bridge).
    const unexpected = names.filter(
      (n) =>
        !/^(PATH|HOME|LANG|LC_\w+|TERM|TZ|USER|LOGNAME|SHELL|TMPDIR|TMP|TEMP|DEPLOY_TOKEN_FOR_BASH|SESSION_MODE|CLAUDE_PROJECT_DIR|PWD|OLDPWD|SHLVL|_|(?:http|https|all|no)_proxy|(?:HTTP|HTTPS|ALL|NO)_PROXY)$/.test(
          n!,
        ),
    );
    expect([who, unexpected]).toEqual([who, []]);
  }
});
