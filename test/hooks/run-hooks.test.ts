/**
 * The runHooks activity in a real activity context: real `sh` processes in real temp dirs. Claude
 * Code's protocol — stdin JSON, exit 0 with JSON or plain text, exit 2 blocks with stderr, other
 * codes are non-blocking errors, a timeout kills the process group — plus matcher filtering,
 * settings files, code hooks, heartbeats and cancellation.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import type { HookCallback, HookInput } from '../../src/shared/hook-callbacks';
import { HOOK_TEXT_MAX_CHARS } from '../../src/activities/hooks';
import { foldHookRuns } from '../../src/shared/hooks';
import { parseSandboxOption } from '../../src/shared/sandbox';
import { removeTempDirs, tempDir } from '../tools/helpers';
import { waitFor } from '../helpers/wait';
import { activityEnv, alive, commandHooks, runHooks, writeJson } from './helpers';

afterAll(removeTempDirs);

const pre = { tool_name: 'Bash', tool_input: { command: 'git push' }, tool_use_id: 'toolu_1' };
/** Unsandboxed, where a test watches host PIDs or a signal's exit status; test/hooks/sandbox.test.ts has the sandboxed cases. */
const off = parseSandboxOption('off');

test('exit 0 with JSON: only the decision fields come back', async () => {
  const cwd = await tempDir();
  const json = {
    continue: true,
    decision: 'block',
    reason: 'not on main',
    suppressOutput: true,
    debugDump: 'sk-should-not-travel',
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'policy',
      updatedInput: { command: 'git status' },
      extra: 'sk-nor-this',
    },
  };
  writeFileSync(path.join(cwd, 'out.json'), JSON.stringify(json));
  const [run] = await runHooks({
    event: 'PreToolUse',
    cwd,
    matchValue: 'Bash',
    payload: pre,
    hooks: commandHooks('PreToolUse', [{ command: 'cat out.json' }]),
  });
  expect(run).toMatchObject({ hook: 'PreToolUse #1 (session options)', outcome: 'success', exitCode: 0 });
  expect(run!.output).toEqual({
    continue: true,
    decision: 'block',
    reason: 'not on main',
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'policy',
      updatedInput: { command: 'git status' },
    },
  });
  expect(JSON.stringify(run)).not.toMatch(/sk-/);
});

test('exit 0 with plain text: ignored for tool events, additional context for UserPromptSubmit and SessionStart', async () => {
  const cwd = await tempDir();
  const hooks = (event: string) => commandHooks(event, [{ command: 'echo "  remember: tabs, not spaces  "' }]);
  const [tool] = await runHooks({ event: 'PreToolUse', cwd, matchValue: 'Bash', payload: pre, hooks: hooks('PreToolUse') });
  expect(tool).toMatchObject({ outcome: 'success', exitCode: 0 });
  expect(tool!.output).toBeUndefined();
  const [prompt] = await runHooks({ event: 'UserPromptSubmit', cwd, payload: { prompt: 'hi' }, hooks: hooks('UserPromptSubmit') });
  expect(prompt!.output).toEqual({
    hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'remember: tabs, not spaces' },
  });
  const [start] = await runHooks({
    event: 'SessionStart',
    cwd,
    matchValue: 'startup',
    payload: { source: 'startup' },
    hooks: hooks('SessionStart'),
  });
  expect(start!.output?.hookSpecificOutput?.additionalContext).toBe('remember: tabs, not spaces');
});

test('exit 2 blocks with stderr (trimmed, capped); stdout is ignored', async () => {
  const cwd = await tempDir();
  const [run] = await runHooks({
    event: 'PreToolUse',
    cwd,
    matchValue: 'Bash',
    payload: pre,
    hooks: commandHooks('PreToolUse', [
      { command: 'echo \'{"decision":"approve"}\'; printf "\\n  git push is not allowed here\\n\\n" >&2; exit 2' },
    ]),
  });
  expect(run).toMatchObject({ outcome: 'blocked', exitCode: 2, blockReason: 'git push is not allowed here' });
  expect(run!.output).toBeUndefined();
  const [long] = await runHooks({
    event: 'PreToolUse',
    cwd,
    matchValue: 'Bash',
    payload: pre,
    hooks: commandHooks('PreToolUse', [{ command: 'head -c 25000 /dev/zero | tr "\\0" x >&2; exit 2' }]),
  });
  expect(long!.blockReason!.startsWith('x'.repeat(HOOK_TEXT_MAX_CHARS))).toBe(true);
  expect(long!.blockReason!.slice(HOOK_TEXT_MAX_CHARS)).toBe('… [15000 characters cut]');
});

test('other exit codes are non-blocking errors described without the output; invalid JSON is an error', async () => {
  const cwd = await tempDir();
  const runs = await runHooks({
    event: 'PostToolUse',
    cwd,
    sandbox: off,
    matchValue: 'Bash',
    payload: { ...pre, tool_response: 'ok' },
    hooks: commandHooks('PostToolUse', [
      { command: 'echo "token=sk-leak-1"; echo "password=sk-leak-2" >&2; exit 1' },
      { command: 'echo "{ not json sk-leak-3"' },
      { command: 'echo \'{"decision": "maybe"}\'' },
      { command: 'kill -9 $$' },
    ]),
  });
  expect(runs.map((r) => [r.outcome, r.exitCode, r.error])).toEqual([
    ['error', 1, 'exited 1'],
    ['error', 0, 'invalid JSON on stdout'],
    ['error', 0, 'invalid JSON output: `decision`: expected one of "block", "approve"'],
    ['error', null, 'killed by SIGKILL'],
  ]);
  expect(JSON.stringify(runs)).not.toMatch(/sk-leak/);
});

test('a hook past its timeout is reported as a timeout and its whole process group is killed', async () => {
  const cwd = await tempDir();
  const [run] = await runHooks({
    event: 'PreToolUse',
    cwd,
    sandbox: off,
    matchValue: 'Bash',
    payload: pre,
    // The backgrounded sleep is a grandchild: only killing the group ends it.
    hooks: commandHooks('PreToolUse', [{ command: 'sleep 300 & echo $! > bg.pid; wait', timeout: 1 }]),
  });
  expect(run).toMatchObject({ outcome: 'timeout', exitCode: null, error: 'timed out after 1 s; its process group was killed' });
  const pid = Number(readFileSync(path.join(cwd, 'bg.pid'), 'utf8'));
  await waitFor('the background sleep to be gone', () => !alive(pid));
});

test("stdin carries Claude Code's JSON; the environment is Bash's allowlist, plus CLAUDE_PROJECT_DIR and the session env", async () => {
  const cwd = await tempDir();
  process.env.HOOKS_TEST_SERVICE_TOKEN = 'sk-worker-secret';
  process.env.HOOKS_TEST_PLAIN = 'visible';
  try {
    await runHooks({
      event: 'PreToolUse',
      cwd,
      sessionId: 'sess-42',
      permissionMode: 'acceptEdits',
      matchValue: 'Bash',
      payload: pre,
      env: { SESSION_VAR: 'from-session' },
      hooks: commandHooks('PreToolUse', [{ command: 'cat > stdin.json; env > env.txt; pwd > pwd.txt' }]),
    });
  } finally {
    delete process.env.HOOKS_TEST_SERVICE_TOKEN;
    delete process.env.HOOKS_TEST_PLAIN;
  }
  expect(JSON.parse(readFileSync(path.join(cwd, 'stdin.json'), 'utf8'))).toEqual({
    session_id: 'sess-42',
    cwd,
    hook_event_name: 'PreToolUse',
    permission_mode: 'acceptEdits',
    tool_name: 'Bash',
    tool_input: { command: 'git push' },
    tool_use_id: 'toolu_1',
  });
  const env = readFileSync(path.join(cwd, 'env.txt'), 'utf8');
  expect(env).not.toContain('sk-worker-secret');
  expect(env).not.toMatch(/^TEMPORAL_/m);
  // Bash's allowlist: a plain worker variable is not passed either (ARCHITECTURE.md#secrets-stay-on-workers).
  expect(env).not.toMatch(/^HOOKS_TEST_PLAIN=/m);
  expect(env).toContain(`PATH=${process.env.PATH}\n`);
  expect(env).toMatch(/^SESSION_VAR=from-session$/m);
  expect(env).toContain(`CLAUDE_PROJECT_DIR=${cwd}\n`);
  expect(readFileSync(path.join(cwd, 'pwd.txt'), 'utf8').trim()).toBe(cwd);
});

test('matchers: exact names, alternatives, regexes and match-all; no match value runs only match-all hooks', async () => {
  const cwd = await tempDir();
  const hooks = {
    ...commandHooks('PreToolUse', [
      { matcher: 'Bash', command: 'touch bash' },
      { matcher: 'Write|Edit', command: 'touch write-edit' },
      { matcher: '^Ba.*', command: 'touch regex' },
      { matcher: '*', command: 'touch star' },
      { command: 'touch none' },
      { matcher: 'Bas', command: 'touch partial-name' },
    ]),
    ...commandHooks('PostToolUse', [{ command: 'touch post' }]),
  };
  const runs = await runHooks({ event: 'PreToolUse', cwd, matchValue: 'Bash', payload: pre, hooks });
  expect(runs.map((r) => r.hook)).toEqual([
    'PreToolUse[Bash] #1 (session options)',
    'PreToolUse[^Ba.*] #2 (session options)',
    'PreToolUse[*] #3 (session options)',
    'PreToolUse #4 (session options)',
  ]);
  for (const f of ['bash', 'regex', 'star', 'none']) expect(existsSync(path.join(cwd, f))).toBe(true);
  for (const f of ['write-edit', 'partial-name', 'post']) expect(existsSync(path.join(cwd, f))).toBe(false);

  const other = await tempDir();
  const runsWithout = await runHooks({ event: 'PreToolUse', cwd: other, payload: {}, hooks });
  expect(runsWithout.map((r) => r.hook)).toEqual(['PreToolUse[*] #1 (session options)', 'PreToolUse #2 (session options)']);
});

test('hooks from the settings files named by settingSources and settingsFile run too, named by their source; a repeated command runs once', async () => {
  const cwd = await tempDir();
  const home = await tempDir('da-home-');
  const hook = (command: string) => ({ hooks: commandHooks('Stop', [{ command }]) });
  writeJson(path.join(home, '.claude', 'settings.json'), hook('echo user >> ran.txt'));
  writeJson(path.join(cwd, '.claude', 'settings.json'), hook('echo project >> ran.txt'));
  writeJson(path.join(cwd, '.claude', 'settings.local.json'), hook('echo local >> ran.txt'));
  const flag = writeJson(path.join(cwd, 'extra-settings.json'), hook('echo flag >> ran.txt'));
  const runs = await runHooks(
    {
      event: 'Stop',
      cwd,
      payload: { stop_hook_active: false },
      settingSources: ['user', 'project', 'local'],
      settingsFile: flag,
      hooks: commandHooks('Stop', [{ command: 'echo project >> ran.txt' }]),
    },
    { homeDir: home },
  );
  expect(runs.map((r) => r.hook)).toEqual([
    'Stop #1 (user ~/.claude/settings.json)',
    'Stop #2 (project .claude/settings.json)',
    'Stop #3 (local .claude/settings.local.json)',
    'Stop #4 (settings extra-settings.json)',
  ]);
  expect(readFileSync(path.join(cwd, 'ran.txt'), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['flag', 'local', 'project', 'user']);
  // Sources not named are not read.
  const only = await runHooks({ event: 'Stop', cwd, payload: {}, settingSources: ['local'] }, { homeDir: home });
  expect(only.map((r) => r.hook)).toEqual(['Stop #1 (local .claude/settings.local.json)']);
});

test("matching hooks run in parallel, as Claude Code's do", async () => {
  const cwd = await tempDir();
  // Each waits for the other's file: both finish only if they run at the same time.
  const runs = await runHooks({
    event: 'PreToolUse',
    cwd,
    matchValue: 'Bash',
    payload: pre,
    hooks: commandHooks('PreToolUse', [
      { command: 'touch a; while [ ! -f b ]; do sleep 0.02; done', timeout: 30 },
      { command: 'touch b; while [ ! -f a ]; do sleep 0.02; done', timeout: 30 },
    ]),
  });
  expect(runs.map((r) => r.outcome)).toEqual(['success', 'success']);
});

test('code hooks: the SDK input, matcher filtering, decision fields only, timeouts through their signal, errors logged on the worker only', async () => {
  const cwd = await tempDir();
  const seen: { input: HookInput; toolUseID: string | undefined }[] = [];
  let timedOutSignal: AbortSignal | undefined;
  const deny: HookCallback = async (input, toolUseID) => {
    seen.push({ input, toolUseID });
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'no pushes',
        note: 'sk-code-secret',
      },
      suppressOutput: true,
    };
  };
  const slow: HookCallback = ({}, _id, { signal }) => {
    timedOutSignal = signal;
    return new Promise(() => undefined);
  };
  const thrower: HookCallback = async () => {
    throw new Error('database password sk-code-thrown');
  };
  const never: HookCallback = async () => ({ decision: 'block', reason: 'wrong tool' });
  const { env, logged } = activityEnv();
  const runs = await runHooks(
    { event: 'PreToolUse', cwd, sessionId: 'sess-code', matchValue: 'Bash', payload: pre },
    {
      codeHooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [deny, thrower] },
          { matcher: 'Read', hooks: [never] },
          { hooks: [slow], timeout: 0.2 },
          { hooks: [async () => ({ async: true })] },
        ],
      },
    },
    env,
  );
  expect(seen).toEqual([
    {
      input: { session_id: 'sess-code', transcript_path: '', cwd, hook_event_name: 'PreToolUse', permission_mode: 'default', ...pre },
      toolUseID: 'toolu_1',
    },
  ]);
  expect(runs).toEqual([
    expect.objectContaining({
      hook: 'PreToolUse[Bash] code hook #1',
      outcome: 'success',
      output: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no pushes' } },
    }),
    expect.objectContaining({
      hook: 'PreToolUse[Bash] code hook #2',
      outcome: 'error',
      error: "threw an error (its message is in the worker's log)",
    }),
    expect.objectContaining({ hook: 'PreToolUse code hook #3', outcome: 'timeout', error: 'timed out after 0.2 s' }),
    expect.objectContaining({ hook: 'PreToolUse code hook #4', outcome: 'success' }),
  ]);
  expect(timedOutSignal?.aborted).toBe(true);
  expect(JSON.stringify(runs)).not.toMatch(/sk-code/);
  expect(logged.some((l) => l.includes('sk-code-thrown'))).toBe(true);
});

test('heartbeats while hooks run; cancellation kills the process group and cancels the activity', async () => {
  const cwd = await tempDir();
  const { env, heartbeats } = activityEnv();
  const running = runHooks(
    {
      event: 'PreToolUse',
      cwd,
      sandbox: off,
      matchValue: 'Bash',
      payload: pre,
      hooks: commandHooks('PreToolUse', [{ command: 'sleep 300 & echo $! > bg.pid; wait' }]),
    },
    {},
    env,
  );
  running.catch(() => undefined);
  await waitFor('a heartbeat', () => heartbeats.length > 0);
  expect(heartbeats[0]).toEqual({ event: 'PreToolUse', hooks: 1 });
  const pidFile = path.join(cwd, 'bg.pid');
  const pid = await waitFor('the hook to start its sleep', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')));
  env.cancel();
  await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  await waitFor('the background sleep to be gone', () => !alive(pid));
});

test('nothing matches: no process is started and nothing is returned', async () => {
  const cwd = await tempDir();
  expect(
    await runHooks({
      event: 'PreToolUse',
      cwd,
      matchValue: 'Read',
      payload: pre,
      hooks: commandHooks('PreToolUse', [{ matcher: 'Bash', command: 'touch ran' }]),
    }),
  ).toEqual([]);
  expect(existsSync(path.join(cwd, 'ran'))).toBe(false);
});

describe('a PreToolUse hook that cannot run denies the call; other events and other exit codes do not block', () => {
  const failures: [string, string, Partial<{ outcome: string; exitCode: number | null; error: string }>, number][] = [
    [
      'missing script (127)',
      './no-such-script.sh',
      { outcome: 'error', exitCode: 127, error: 'exited 127: command or script not found' },
      0,
    ],
    [
      'not executable (126)',
      './not-exec.sh',
      { outcome: 'error', exitCode: 126, error: 'exited 126: command or script not executable' },
      0,
    ],
    ['killed by a signal', 'kill -9 $$', { outcome: 'error', exitCode: null, error: 'killed by SIGKILL' }, 0],
    ['its timeout', 'sleep 30', { outcome: 'timeout', exitCode: null, error: 'timed out after 1 s; its process group was killed' }, 1],
  ];

  test.each(failures)('%s', async (_name, command, expected, timeout) => {
    const cwd = await tempDir();
    writeFileSync(path.join(cwd, 'not-exec.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const hooks = (event: string) => commandHooks(event, [{ command, ...(timeout ? { timeout } : {}) }]);
    const [preRun] = await runHooks({
      event: 'PreToolUse',
      cwd,
      sandbox: off,
      matchValue: 'Bash',
      payload: pre,
      hooks: hooks('PreToolUse'),
    });
    expect(preRun).toMatchObject(expected);
    expect(preRun!.blockReason).toBe(
      `The PreToolUse hook PreToolUse #1 (session options) could not run (${expected.error}), so the call was denied: ` +
        'a guard hook that cannot run never lets a call through.',
    );
    expect(foldHookRuns([preRun!]).block).toBe(preRun!.blockReason);
    const post = { ...pre, tool_response: 'ok' };
    const [postRun] = await runHooks({
      event: 'PostToolUse',
      cwd,
      sandbox: off,
      matchValue: 'Bash',
      payload: post,
      hooks: hooks('PostToolUse'),
    });
    expect(postRun).toMatchObject(expected);
    expect(postRun!.blockReason).toBeUndefined();
  });

  test('exit 1 stays a non-blocking error; exit 2 blocks with stderr', async () => {
    const cwd = await tempDir();
    const runs = await runHooks({
      event: 'PreToolUse',
      cwd,
      sandbox: off,
      matchValue: 'Bash',
      payload: pre,
      hooks: commandHooks('PreToolUse', [{ command: 'exit 1' }, { command: 'echo no pushes >&2; exit 2' }]),
    });
    expect(runs.map((r) => [r.outcome, r.exitCode, r.blockReason])).toEqual([
      ['error', 1, undefined],
      ['blocked', 2, 'no pushes'],
    ]);
  });

  test('a PreToolUse code hook past its timeout denies; a PostToolUse one does not', async () => {
    const cwd = await tempDir();
    const slow: HookCallback = () => new Promise(() => undefined);
    const codeHooks = (event: 'PreToolUse' | 'PostToolUse') => ({ [event]: [{ hooks: [slow], timeout: 0.2 }] });
    const [preRun] = await runHooks({ event: 'PreToolUse', cwd, matchValue: 'Bash', payload: pre }, { codeHooks: codeHooks('PreToolUse') });
    expect(preRun).toMatchObject({
      outcome: 'timeout',
      blockReason: expect.stringMatching(/^The PreToolUse hook PreToolUse code hook #1 could not run \(timed out after 0.2 s\)/),
    });
    const [postRun] = await runHooks(
      { event: 'PostToolUse', cwd, matchValue: 'Bash', payload: { ...pre, tool_response: 'ok' } },
      { codeHooks: codeHooks('PostToolUse') },
    );
    expect(postRun).toMatchObject({ outcome: 'timeout' });
    expect(postRun!.blockReason).toBeUndefined();
  });
});
