/**
 * Command hooks run in the session's Bash sandbox: real bubblewrap, real processes, real temp
 * dirs. Each boundary has its unsandboxed control (sandbox 'off'), so a hook that gets through
 * fails here. The end-to-end case, with a real worker process holding a secret, is in
 * test/sandbox/session.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSandbox } from '../../src/activities/sandbox';
import { createToolOps } from '../../src/activities/tools';
import { foldHookRuns } from '../../src/shared/hooks';
import { parseSandboxOption, type SandboxOptionInput } from '../../src/shared/sandbox';
import { processesNamed, removeTempDirs, tempDir } from '../tools/helpers';
import { waitFor } from '../helpers/wait';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import type { HooksSettings } from '../../src/shared/hooks';
import { commandHooks, runHooks, writeJson } from './helpers';

jest.setTimeout(60_000);

afterAll(async () => {
  await removeTempDirs();
  removeVarTmpDirs();
});

const pre = { tool_name: 'Write', tool_input: { file_path: 'x' }, tool_use_id: 'toolu_1' };

/**
 * A PreToolUse hook from the project's `.claude/settings.json` — a file the model could have
 * written, so its hooks run in the sandbox (operator hooks do not: see the end of this file).
 */
function hook(
  cwd: string,
  command: string,
  sandbox: SandboxOptionInput,
  extra: { additionalDirectories?: string[]; timeout?: number } = {},
) {
  projectHooks(cwd, commandHooks('PreToolUse', [{ command, ...(extra.timeout ? { timeout: extra.timeout } : {}) }]));
  return runHooks({
    event: 'PreToolUse',
    cwd,
    matchValue: 'Write',
    payload: pre,
    sandbox: parseSandboxOption(sandbox),
    settingSources: ['project'],
    ...(extra.additionalDirectories ? { additionalDirectories: extra.additionalDirectories } : {}),
  });
}

function projectHooks(cwd: string, hooks: HooksSettings): void {
  writeJson(path.join(cwd, '.claude/settings.json'), { hooks });
}

/** A folder's entries besides the project's settings folder. */
const entries = (dir: string) => readdirSync(dir).filter((e) => e !== '.claude');

describe('other processes are invisible to a hook', () => {
  let victim: ChildProcess;
  const canary = `sk-hook-canary-${process.pid}-${Date.now()}`;
  beforeAll(() => {
    // A process holding a secret in its environment, as the worker holds OPENAI_API_KEY.
    victim = spawn('sleep', ['300'], { env: { PATH: process.env.PATH, OPENAI_API_KEY: canary }, stdio: 'ignore' });
  });
  afterAll(() => {
    victim.kill('SIGKILL');
  });

  test("sandboxed, a hook sees only the sandbox's processes; unsandboxed it reads the secret (the control)", async () => {
    const snoop = `{ tr '\\0' '\\n' < /proc/${victim.pid}/environ; for f in /proc/*/environ; do tr '\\0' '\\n' < "$f"; done; echo end; } > seen.txt 2>&1`;
    const cwd = await tempDir('da-hook-sbx-');
    const [run] = await hook(cwd, snoop, 'auto');
    expect(run).toMatchObject({ outcome: 'success' });
    const seen = readFileSync(path.join(cwd, 'seen.txt'), 'utf8');
    expect(seen).toContain('PATH=');
    expect(seen.endsWith('end\n')).toBe(true);
    expect(seen).not.toContain(canary);

    const control = await tempDir('da-hook-off-');
    await hook(control, snoop, 'off');
    expect(readFileSync(path.join(control, 'seen.txt'), 'utf8')).toContain(`OPENAI_API_KEY=${canary}`);
  });
});

test('a sandboxed hook writes only under cwd and additionalDirectories; unsandboxed it writes anywhere (the control)', async () => {
  const base = varTmpDir('da-hook-base-');
  const cwd = path.join(base, 'ws');
  mkdirSync(cwd);
  const outside = varTmpDir('da-hook-outside-');
  const extra = varTmpDir('da-hook-extra-');
  const command = `echo x > ${outside}/escaped; echo y > ${extra}/extra; echo z > ../escaped-up; echo w > inside; true`;
  const [run] = await hook(cwd, command, 'auto', { additionalDirectories: [extra] });
  expect(run).toMatchObject({ outcome: 'success' });
  expect(readdirSync(outside)).toEqual([]);
  expect(readdirSync(base)).toEqual(['ws']);
  expect(readFileSync(path.join(extra, 'extra'), 'utf8')).toBe('y\n');
  expect(readFileSync(path.join(cwd, 'inside'), 'utf8')).toBe('w\n');

  await hook(cwd, command, 'off');
  expect(readdirSync(outside)).toEqual(['escaped']);
  expect(readdirSync(base).sort()).toEqual(['escaped-up', 'ws']);
});

test('a timeout kills everything inside the sandbox', async () => {
  const cwd = await tempDir('da-hook-sbx-');
  const name = `da-hook-timeout-${process.pid}-${Date.now()}`;
  // dash has no `exec -a`: bash names the sleeps so they can be found from outside the PID namespace.
  const running = hook(cwd, `bash -c '(exec -a ${name} sleep 60) & exec -a ${name} sleep 60'`, 'auto', { timeout: 3 });
  await waitFor('both sleeps', () => processesNamed(name).length === 2);
  const [run] = await running;
  expect(run).toMatchObject({ outcome: 'timeout' });
  await waitFor('no sleeps', () => processesNamed(name).length === 0);
});

test("sandbox 'required' where bubblewrap does not work: the hook is an error, is not run, and PreToolUse blocks the tool", async () => {
  const ops = createToolOps({ sandbox: createSandbox({ bwrapPath: '/nonexistent/bwrap' }) });
  const cwd = await tempDir('da-hook-req-');
  projectHooks(cwd, {
    ...commandHooks('PreToolUse', [{ command: 'touch ran-pre' }]),
    ...commandHooks('PostToolUse', [{ command: 'touch ran-post' }]),
  });
  const input = { cwd, matchValue: 'Write', sandbox: parseSandboxOption('required'), settingSources: ['project' as const] };
  const preRuns = await runHooks({ event: 'PreToolUse', payload: pre, ...input }, { ops });
  expect(preRuns).toEqual([
    expect.objectContaining({ outcome: 'error', exitCode: null, hook: 'PreToolUse #1 (project .claude/settings.json)' }),
  ]);
  expect(preRuns[0]!.error).toMatch(
    /^The command was not run: this session requires a sandbox \(sandbox: 'required'\) and none works on this worker: no executable bubblewrap at \/nonexistent\/bwrap/,
  );
  expect(foldHookRuns(preRuns).block).toBe(preRuns[0]!.error);
  const postRuns = await runHooks({ event: 'PostToolUse', payload: { ...pre, tool_response: 'ok' }, ...input }, { ops });
  expect(postRuns).toEqual([expect.objectContaining({ outcome: 'error', exitCode: null })]);
  // A PostToolUse error is not a block: the tool already ran.
  expect(foldHookRuns(postRuns).block).toBeUndefined();
  expect(entries(cwd)).toEqual([]);
  // The control: the same worker runs them unsandboxed under 'auto'.
  await runHooks({ event: 'PreToolUse', payload: pre, ...input, sandbox: parseSandboxOption('auto') }, { ops });
  expect(entries(cwd)).toEqual(['ran-pre']);
});

describe('operator hooks run outside the sandbox and see their scripts; hooks from files the model could write stay inside', () => {
  const denyJson = JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the guard says no' },
  });
  /** A guard script that leaves a mark beside itself (only possible outside the sandbox) and denies. */
  function guardScript(dir: string): string {
    const script = path.join(dir, 'guard.sh');
    writeFileSync(script, `#!/bin/sh\ntouch "${dir}/ran-$1"\necho '${denyJson}'\n`, { mode: 0o755 });
    return script;
  }
  const deniedByGuard = { permissionDecision: 'deny', permissionDecisionReason: 'the guard says no' };

  test('a script under /tmp: the session `hooks` option and a --settings file outside the workspace run it; project settings and a --settings file inside the workspace cannot and deny', async () => {
    const scripts = await tempDir('da-hook-scripts-'); // under /tmp: the sandbox's /tmp is a private one
    const script = guardScript(scripts);
    const cwd = varTmpDir('da-hook-ws-');
    const run = (extra: Record<string, unknown>) =>
      runHooks({ event: 'PreToolUse', cwd, matchValue: 'Write', payload: pre, sandbox: parseSandboxOption('auto'), ...extra });

    const fromOptions = await run({ hooks: commandHooks('PreToolUse', [{ command: `${script} options` }]) });
    expect(fromOptions).toEqual([expect.objectContaining({ outcome: 'success', hook: 'PreToolUse #1 (session options)' })]);
    expect(foldHookRuns(fromOptions)).toMatchObject(deniedByGuard);

    const outsideFile = writeJson(path.join(scripts, 'operator-settings.json'), {
      hooks: commandHooks('PreToolUse', [{ command: `${script} flag` }]),
    });
    const fromFlag = await run({ settingsFile: outsideFile });
    expect(fromFlag).toEqual([expect.objectContaining({ outcome: 'success' })]);
    expect(foldHookRuns(fromFlag)).toMatchObject(deniedByGuard);
    expect(readdirSync(scripts).sort()).toEqual(['guard.sh', 'operator-settings.json', 'ran-flag', 'ran-options']);

    projectHooks(cwd, commandHooks('PreToolUse', [{ command: `${script} project` }]));
    const fromProject = await run({ settingSources: ['project'] });
    expect(fromProject).toEqual([
      expect.objectContaining({ outcome: 'error', exitCode: 127, hook: 'PreToolUse #1 (project .claude/settings.json)' }),
    ]);
    expect(foldHookRuns(fromProject).block).toMatch(
      /^The PreToolUse hook PreToolUse #1 \(project \.claude\/settings\.json\) could not run \(exited 127: command or script not found\), so the call was denied/,
    );

    const insideFile = writeJson(path.join(cwd, 'my-settings.json'), {
      hooks: commandHooks('PreToolUse', [{ command: `${script} inside` }]),
    });
    const fromInside = await run({ settingsFile: insideFile });
    expect(fromInside).toEqual([expect.objectContaining({ outcome: 'error', exitCode: 127 })]);
    expect(foldHookRuns(fromInside).block).toBeDefined();
    expect(readdirSync(scripts)).not.toContain('ran-project');
    expect(readdirSync(scripts)).not.toContain('ran-inside');
  });

  test("a script under ~/.claude/hooks (hidden in the sandbox): the worker's user settings run it; the same hook from project settings cannot and denies", async () => {
    // Outside /tmp, so only the deny-read of ~/.claude can hide it from the sandbox.
    const home = varTmpDir('da-hook-home-');
    mkdirSync(path.join(home, '.claude/hooks'), { recursive: true });
    const script = guardScript(path.join(home, '.claude/hooks'));
    writeJson(path.join(home, '.claude/settings.json'), { hooks: commandHooks('PreToolUse', [{ command: `${script} user` }]) });
    const cwd = varTmpDir('da-hook-ws-');
    projectHooks(cwd, commandHooks('PreToolUse', [{ command: `${script} project` }]));
    const ops = createToolOps({ sandbox: createSandbox({ home }) });
    const run = (settingSources: ('user' | 'project')[]) =>
      runHooks(
        { event: 'PreToolUse', cwd, matchValue: 'Write', payload: pre, sandbox: parseSandboxOption('auto'), settingSources },
        { ops, homeDir: home },
      );
    const fromUser = await run(['user']);
    expect(fromUser).toEqual([expect.objectContaining({ outcome: 'success', hook: 'PreToolUse #1 (user ~/.claude/settings.json)' })]);
    expect(foldHookRuns(fromUser)).toMatchObject(deniedByGuard);
    const fromProject = await run(['project']);
    expect(fromProject).toEqual([expect.objectContaining({ outcome: 'error', exitCode: 127 })]);
    expect(foldHookRuns(fromProject).block).toMatch(/could not run \(exited 127: command or script not found\), so the call was denied/);
    expect(readdirSync(path.join(home, '.claude/hooks')).sort()).toEqual(['guard.sh', 'ran-user']);
  });
});
