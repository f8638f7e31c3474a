/**
 * The loadSettings activity: user (a temp HOME), project, local and `--settings` files merged the
 * way Claude Code merges them, hook matchers without their commands, and errors that name the
 * file, the key and the problem (non-retryable `InvalidSettings`).
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { hooksDigest } from '../../src/activities/hooks';
import { removeTempDirs, tempDir } from '../tools/helpers';
import { commandHooks, loadSettings, runHooks, writeJson } from './helpers';

afterAll(removeTempDirs);

async function workspace() {
  const cwd = await tempDir();
  const home = await tempDir('da-home-');
  return {
    cwd,
    home,
    user: path.join(home, '.claude', 'settings.json'),
    project: path.join(cwd, '.claude', 'settings.json'),
    local: path.join(cwd, '.claude', 'settings.local.json'),
  };
}

test('user < project < local < --settings < options: lists concatenated with their sources, the highest defaultMode wins, matchers without commands', async () => {
  const w = await workspace();
  writeJson(w.user, {
    permissions: { allow: ['Bash(npm test)'], defaultMode: 'acceptEdits', additionalDirectories: ['~/shared'] },
    hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'guard --token sk-user-hook' }]),
  });
  writeJson(w.project, {
    permissions: { deny: ['Bash(rm:*)'], allow: ['Bash(npm test)'] },
    hooks: commandHooks('PostToolUse', [{ matcher: 'Write|Edit', command: 'fmt sk-project-hook' }]),
  });
  writeJson(w.local, { permissions: { allow: ['Read'], defaultMode: 'plan' }, model: 'opus', env: { SECRET: 'sk-local-env' } });
  const flag = writeJson(path.join(w.cwd, 'ci-settings.json'), {
    permissions: { ask: ['Bash(git push:*)'], disableBypassPermissionsMode: 'disable' },
  });
  const loaded = await loadSettings(
    {
      cwd: w.cwd,
      settingSources: ['user', 'project', 'local'],
      settingsFile: flag,
      hooks: commandHooks('Stop', [{ command: 'notify sk-option-hook' }]),
    },
    {
      homeDir: w.home,
      codeHooks: { PreToolUse: [{ matcher: 'Write', hooks: [async () => ({})] }], SessionEnd: [{ hooks: [async () => ({})] }] },
    },
  );
  expect(loaded.permissions).toEqual({
    allow: [
      { rule: 'Bash(npm test)', source: 'user', file: w.user },
      { rule: 'Read', source: 'local', file: w.local },
    ],
    deny: [{ rule: 'Bash(rm:*)', source: 'project', file: w.project }],
    ask: [{ rule: 'Bash(git push:*)', source: 'flag', file: flag }],
    defaultMode: 'plan',
    additionalDirectories: [path.join(w.home, 'shared')],
    disableBypassPermissionsMode: true,
  });
  expect(loaded.hookMatchers).toEqual({
    PreToolUse: ['Bash', 'Write'],
    PostToolUse: ['Write|Edit'],
    Stop: [undefined],
    SessionEnd: [undefined],
  });
  expect(loaded.files).toEqual([w.user, w.project, w.local, flag]);
  expect(loaded.ignoredKeys).toEqual([
    { file: w.local, key: 'model' },
    { file: w.local, key: 'env' },
  ]);
  // Commands and the files' other contents never leave the worker.
  expect(JSON.stringify(loaded)).not.toMatch(/sk-/);
});

test('only the named sources are read; missing files are fine', async () => {
  const w = await workspace();
  writeJson(w.user, { permissions: { allow: ['Bash(ls:*)'] } });
  writeJson(w.local, { permissions: { deny: ['Write'] } });
  const loaded = await loadSettings({ cwd: w.cwd, settingSources: ['project', 'local'] }, { homeDir: w.home });
  expect(loaded.files).toEqual([w.local]);
  expect(loaded.permissions.allow).toEqual([]);
  expect(loaded.permissions.deny).toEqual([{ rule: 'Write', source: 'local', file: w.local }]);
  expect(await loadSettings({ cwd: w.cwd, settingSources: [] }, { homeDir: w.home })).toEqual({
    permissions: { allow: [], deny: [], ask: [], additionalDirectories: [] },
    hookMatchers: {},
    // No command hooks is a configuration too: one added later must not run.
    hooksDigest: hooksDigest({}),
    // No source names a file: nothing to compare on resume.
    fileDigests: {},
    files: [],
    ignoredKeys: [],
  });
});

async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(e)}`);
  return e;
}

test.each([
  [
    'not JSON',
    '{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}',
    /: \(file\): not valid JSON at line 3 column 22: a trailing ',' before '\]'$/,
  ],
  ['an unparsable rule', { permissions: { deny: ['Bash(rm:*'] } }, /: permissions\.deny\[0\]: invalid permission rule 'Bash\(rm:\*'/],
  ['an unknown hook event', { hooks: { BeforeTool: [] } }, /: hooks\.BeforeTool: unknown hook event 'BeforeTool'/],
  [
    'a matcher that is not a regex',
    { hooks: commandHooks('PreToolUse', [{ matcher: 'Bash(', command: 'x' }]) },
    /: hooks\.PreToolUse\[0\]\.matcher: not a valid regular expression/,
  ],
  ['an unknown permissions key', { permissions: { alow: ['Read'] } }, /: permissions\.alow: unknown key 'alow'/],
  ['a bad defaultMode', { permissions: { defaultMode: 'yolo' } }, /: permissions\.defaultMode: /],
])('%s → InvalidSettings naming the file, the key and the problem', async (_what, content, expected) => {
  const w = await workspace();
  writeJson(w.project, content);
  const e = await failure(loadSettings({ cwd: w.cwd, settingSources: ['project'] }, { homeDir: w.home }));
  expect(e.type).toBe('InvalidSettings');
  expect(e.nonRetryable).toBe(true);
  expect(e.message.startsWith(`${w.project}: `)).toBe(true);
  expect(e.message).toMatch(expected);
  // runHooks reads the same files and refuses the same way.
  const r = await failure(runHooks({ event: 'Stop', cwd: w.cwd, settingSources: ['project'] }, { homeDir: w.home }));
  expect([r.type, r.message]).toEqual(['InvalidSettings', e.message]);
});

test('a --settings file that does not exist is an error (it was named on purpose); bad options hooks name the options', async () => {
  const w = await workspace();
  const missing = path.join(w.cwd, 'nope.json');
  const e = await failure(loadSettings({ cwd: w.cwd, settingSources: [], settingsFile: missing }, { homeDir: w.home }));
  expect([e.type, e.message]).toEqual(['InvalidSettings', `${missing}: (file): no such file`]);
  const bad = await failure(
    loadSettings(
      { cwd: w.cwd, hooks: { PreToolUse: [{ matcher: '[', hooks: [{ type: 'command', command: 'x' }] }] } },
      { homeDir: w.home },
    ),
  );
  expect(bad.message).toMatch(/^session options: hooks\.PreToolUse\[0\]\.matcher: not a valid regular expression/);
});

test('code hooks with an unknown event or a bad matcher are refused when the activities are built', async () => {
  const { createHookActivities } = await import('../../src/activities/hooks');
  expect(() => createHookActivities({ codeHooks: { BeforeTool: [{ hooks: [async () => ({})] }] } as never })).toThrow(
    /createWorker\(\{ hooks \}\): BeforeTool: unknown hook event 'BeforeTool'/,
  );
  expect(() => createHookActivities({ codeHooks: { PreToolUse: [{ matcher: '(', hooks: [async () => ({})] }] } })).toThrow(
    /PreToolUse\[0\]\.matcher: not a valid regular expression/,
  );
});
