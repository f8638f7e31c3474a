/**
 * The one `env` rule (src/shared/secret-env.ts) on a whole caller environment, the SDK idiom
 * `env: { ...process.env, X: '1' }`: hundreds of entries, `undefined` values, the host's own
 * variables by the dozen. What is kept is the session's own; the warning names every dropped
 * credential once, summarizes the host's variables, and never holds a value. (Through a real
 * worker: test/client/secret-env.test.ts.)
 */
import { mapOptions } from '../../src/sdk/options';
import { parseSessionConfig } from '../../src/shared/config';
import { droppedEnvWarning, LIST_EACH_UP_TO, MASKED_NAME, screenSessionEnv } from '../../src/shared/secret-env';

const TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ';

/** A developer machine's environment, as `process.env` holds it under `npm run`. */
function callerEnvironment(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/home/dev',
    SHELL: '/bin/zsh',
    TMPDIR: '/tmp/dev',
    PWD: '/home/dev/project',
    USER: 'dev',
    LANG: 'en_US.UTF-8',
    TERM: 'xterm-256color',
    EDITOR: 'vim',
    NODE_ENV: 'development',
    LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01',
    SSH_AUTH_SOCK: '/tmp/ssh-abc/agent.1',
    AWS_PROFILE: 'dev',
    NPM_TOKEN: 'npm_secret_value_1234',
    DATABASE_URL: 'postgres://app:hunter2@db:5432/app',
    UNSET_ONE: undefined,
  };
  for (let i = 0; i < 150; i++) env[`npm_package_dependency_${i}`] = `^${i}.0.0`;
  for (let i = 0; i < 40; i++) env[`XDG_THING_${i}`] = `/run/user/1000/${i}`;
  for (let i = 0; i < 60; i++) env[`APP_SETTING_${i}`] = `value-${i}`;
  for (let i = 0; i < 20; i++) env[`MAYBE_${i}`] = undefined;
  return env;
}

test("a whole process.env plus the session's own: what is kept, what is named, nothing secret in the session's options", () => {
  const mapped = mapOptions({ env: { ...callerEnvironment(), X: '1', GITHUB_TOKEN: TOKEN } }, '/w');
  const screened = screenSessionEnv(mapped.session.env);
  expect(screened.env.X).toBe('1');
  expect(Object.keys(screened.env).sort()).toEqual(
    ['EDITOR', 'LANG', 'LS_COLORS', 'NODE_ENV', 'TERM', 'X', ...Array.from({ length: 60 }, (_, i) => `APP_SETTING_${i}`)].sort(),
  );
  const config = parseSessionConfig({ ...mapped.session, env: screened.env, envDropped: screened.dropped, prompt: 'hi' });
  const stored = JSON.stringify(config);
  for (const secret of [TOKEN, 'npm_secret_value_1234', 'hunter2', '/home/dev', '/usr/local/bin']) expect(stored).not.toContain(secret);

  const warning = droppedEnvWarning(screened.dropped);
  // Summarized: every credential named, once; the host's families counted; no value.
  expect(warning).toBe(
    'env: dropped 201 entries: AWS_PROFILE, GITHUB_TOKEN, NPM_TOKEN (names that look like credentials); ' +
      'DATABASE_URL (values that look like credentials); ' +
      "HOME, PATH, PWD, SHELL, SSH_AUTH_SOCK, TMPDIR, USER, XDG_* (40), npm_* (150) (the client host's own; the tools host's stay): " +
      "not sent, not stored in the session's history. Secrets stay on the workers: set the variable in the tools worker’s environment " +
      'and name it in DURABLE_AGENT_PASS_ENV there (README "Secrets").',
  );
  expect(warning.split('GITHUB_TOKEN')).toHaveLength(2);
  expect(warning.length).toBeLessThan(600);
});

test('a short list keeps each entry with its reason; a long one groups them, masked names counted', () => {
  const few = screenSessionEnv({ GITHUB_TOKEN: TOKEN, HOME: '/h', MODE: 'fast' });
  expect(droppedEnvWarning(few.dropped)).toMatch(
    /^env: dropped GITHUB_TOKEN \(its name looks like a credential\), HOME \(the client host's own; the tools host's stays\): /,
  );

  const many: Record<string, string> = { ghp_0123456789abcdefghijAB: '1', ghp_0123456789abcdefghijCD: '2' };
  for (let i = 0; i < LIST_EACH_UP_TO; i++) many[`xdg_cache_${i}`] = '/c';
  const dropped = screenSessionEnv(many).dropped;
  expect(dropped.length).toBe(LIST_EACH_UP_TO + 2);
  const warning = droppedEnvWarning(dropped);
  expect(warning).toContain(`${MASKED_NAME} ×2 (names that look like credentials); xdg_* (${LIST_EACH_UP_TO}) (the client host's own`);
  expect(warning).not.toContain('ghp_');
});

test('only host variables dropped: no advice about secrets', () => {
  const env: Record<string, string> = {};
  for (let i = 0; i < 30; i++) env[`npm_config_${i}`] = 'x';
  const warning = droppedEnvWarning(screenSessionEnv({ ...env, PATH: '/bin' }).dropped);
  expect(warning).toBe(
    "env: dropped 31 entries: PATH, npm_* (30) (the client host's own; the tools host's stay): not sent, not stored in the session's history.",
  );
});
