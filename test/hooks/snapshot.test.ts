/**
 * Hooks are a snapshot taken at session start: `loadSettings` returns a digest of the command
 * hooks it found, and `runHooks` given that digest refuses settings files whose hooks differ now
 * — the model can write `<cwd>/.claude/settings.json` from inside the sandbox, so it must not be
 * able to drop a guard hook or add one of its own. Real files, real processes.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HOOKS_CHANGED_MESSAGE } from '../../src/activities/hooks';
import { foldHookRuns, type RunHooksInput } from '../../src/shared/hooks';
import { removeTempDirs, tempDir } from '../tools/helpers';
import { commandHooks, loadSettings, runHooks, writeJson } from './helpers';

afterAll(removeTempDirs);

const pre = { tool_name: 'Bash', tool_input: { command: 'git push' }, tool_use_id: 'toolu_1' };
const guard = { hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'touch guard-ran; echo "no pushes" >&2; exit 2' }]) };

/** A workspace whose project settings hold `settings`, loaded as a session start would. */
async function started(settings: unknown) {
  const cwd = await tempDir('da-snap-');
  const file = writeJson(path.join(cwd, '.claude', 'settings.json'), settings);
  const loaded = await loadSettings({ cwd, settingSources: ['project'] });
  const input: Pick<RunHooksInput, 'event' | 'cwd' | 'settingSources' | 'matchValue' | 'payload' | 'hooksDigest'> = {
    event: 'PreToolUse',
    cwd,
    settingSources: ['project'],
    matchValue: 'Bash',
    payload: pre,
    hooksDigest: loaded.hooksDigest,
  };
  return { cwd, file, loaded, input };
}

test('unchanged files: the hooks run, and the digest names no command', async () => {
  const { cwd, loaded, input } = await started(guard);
  expect(loaded.hooksDigest).toMatch(/^[0-9a-f]{64}$/);
  expect(JSON.stringify(loaded)).not.toContain('guard-ran');
  const runs = await runHooks(input);
  expect(runs).toEqual([expect.objectContaining({ outcome: 'blocked', blockReason: 'no pushes' })]);
  expect(existsSync(path.join(cwd, 'guard-ran'))).toBe(true);
});

test('the guard removed after start: no hook runs, and PreToolUse fails closed (the tool is blocked)', async () => {
  const { cwd, file, input } = await started(guard);
  writeJson(file, { hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'touch replacement-ran' }]) });
  const runs = await runHooks(input);
  expect(runs).toEqual([
    {
      hook: 'PreToolUse hooks (settings files)',
      outcome: 'error',
      exitCode: null,
      durationMs: 0,
      error: HOOKS_CHANGED_MESSAGE,
      blockReason: HOOKS_CHANGED_MESSAGE,
    },
  ]);
  expect(foldHookRuns(runs).block).toBe('settings files changed since the session started: hooks not run');
  expect(readdirSync(cwd)).toEqual(['.claude']);
  // Without the digest (a session recorded before it existed) the file is read as it is now: the control.
  await runHooks({ ...input, hooksDigest: undefined });
  expect(readdirSync(cwd).sort()).toEqual(['.claude', 'replacement-ran']);
});

test('a hook added after start does not run; other events report the error without blocking', async () => {
  const { cwd, file, input } = await started(guard);
  writeJson(file, { hooks: { ...guard.hooks, ...commandHooks('PostToolUse', [{ command: 'touch added-ran' }]) } });
  const runs = await runHooks({ ...input, event: 'PostToolUse', payload: { ...pre, tool_response: 'ok' } });
  expect(runs).toEqual([
    expect.objectContaining({ hook: 'PostToolUse hooks (settings files)', outcome: 'error', error: HOOKS_CHANGED_MESSAGE }),
  ]);
  expect(runs[0]!.blockReason).toBeUndefined();
  expect(foldHookRuns(runs).block).toBeUndefined();
  expect(existsSync(path.join(cwd, 'added-ran'))).toBe(false);
});

test("a guard's timeout cut after start counts as a change", async () => {
  const slow = { hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'exit 2', timeout: 30 }]) };
  const { file, input } = await started(slow);
  writeJson(file, { hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'exit 2', timeout: 0.001 }]) });
  expect(await runHooks(input)).toEqual([expect.objectContaining({ outcome: 'error', error: HOOKS_CHANGED_MESSAGE })]);
});

test('a settings file broken after start is refused like a changed one, not an activity failure that skips the guard', async () => {
  const { file, input } = await started(guard);
  writeFileSync(file, '{ "hooks": ');
  const runs = await runHooks(input);
  expect(runs).toEqual([expect.objectContaining({ outcome: 'error', error: HOOKS_CHANGED_MESSAGE, blockReason: HOOKS_CHANGED_MESSAGE })]);
});

test('permissions edited, the same hooks reformatted and reordered: the hooks still run', async () => {
  const two = {
    hooks: commandHooks('PreToolUse', [
      { matcher: 'Bash', command: 'touch a' },
      { matcher: 'Bash', command: 'touch b' },
    ]),
  };
  const { cwd, file, input } = await started(two);
  const reordered = {
    hooks: commandHooks('PreToolUse', [
      { matcher: 'Bash', command: 'touch b' },
      { matcher: 'Bash', command: 'touch a' },
    ]),
  };
  writeFileSync(file, JSON.stringify({ permissions: { allow: ['Read'] }, ...reordered }));
  const runs = await runHooks(input);
  expect(runs.map((r) => r.outcome)).toEqual(['success', 'success']);
  expect(readdirSync(cwd).sort()).toEqual(['.claude', 'a', 'b']);
});

test('code hooks on the worker still run when the files changed', async () => {
  const { file, input } = await started(guard);
  writeJson(file, {});
  let called = 0;
  const runs = await runHooks(input, {
    codeHooks: { PreToolUse: [{ hooks: [async () => (called++, { decision: 'block', reason: 'code guard' })] }] },
  });
  expect(runs.map((r) => [r.hook, r.outcome])).toEqual([
    ['PreToolUse hooks (settings files)', 'error'],
    ['PreToolUse code hook #1', 'success'],
  ]);
  expect(called).toBe(1);
});
