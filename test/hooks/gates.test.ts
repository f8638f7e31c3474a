/**
 * Gate hooks end to end with the sandbox on (docs/ARCHITECTURE.md#hooks): sessions on a real dev
 * server whose hooks run on a real `durable-agent worker --roles tools` process, bubblewrap
 * working, HOME set to a temp dir so `~/.claude/hooks/` can hold a script the sandbox hides.
 * Operator hooks (session `hooks`, the worker's user settings) see their scripts under /tmp and
 * ~/.claude/hooks and their decisions apply; a PreToolUse hook that cannot run — missing script,
 * timeout, or a project hook whose script the sandbox cannot see — denies the call; a failing
 * PostToolUse hook does not block.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { HookResponseMessage } from '../../src/shared/events';
import type { HooksSettings } from '../../src/shared/hooks';
import type { SessionOptions } from '../../src/shared/config';
import { spawnWorker, toolResultsById, type WorkerProcess } from '../helpers/chaos';
import { startHarness, type Harness } from '../helpers/harness';
import { writeJson } from './helpers';

jest.setTimeout(180_000);

let h: Harness;
let worker: WorkerProcess;
let queue: string;
let home: string;
const dirs: string[] = [];

function dir(base: string, prefix: string): string {
  const d = realpathSync(mkdtempSync(path.join(base, prefix)));
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  h = await startHarness({ roles: ['workflow', 'model'] });
  // Outside /tmp: only the sandbox's deny-read of ~/.claude can hide ~/.claude/hooks from it.
  home = dir('/var/tmp', 'da-gates-home-');
  mkdirSync(path.join(home, '.claude/hooks'), { recursive: true });
  queue = `${h.taskQueue}-tools-gates`;
  worker = spawnWorker({
    address: h.address,
    modelUrl: h.model.url,
    bundlePath: '',
    name: 'gates',
    roles: ['tools'],
    env: { HOME: home, DURABLE_AGENT_SANDBOX: 'required', DURABLE_AGENT_TASK_QUEUE: h.taskQueue, DURABLE_AGENT_TOOLS_TASK_QUEUE: queue },
  });
  await worker.ready;
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  await h?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const denyJson = JSON.stringify({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the guard says no' },
});

/** A guard that leaves a mark beside itself (possible only outside the sandbox) and denies. */
function guardScript(where: string): string {
  const script = path.join(where, 'guard.sh');
  writeFileSync(script, `#!/bin/sh\ntouch "${where}/ran"\necho '${denyJson}'\n`, { mode: 0o755 });
  return script;
}

let n = 0;
/** One session making one Write call; returns that call's result, the hook responses and the result message. */
async function writeWith(options: Partial<SessionOptions>, cwd = dir('/var/tmp', 'da-gates-ws-')) {
  const target = path.join(cwd, 'written.txt');
  const run = await h.run(
    { name: `gates-${n++}`, turns: [turn.tool('Write', { file_path: target, content: 'x' }), turn.text('done')] },
    { cwd, toolsTaskQueue: queue, permissionMode: 'acceptEdits', ...options },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  const results = [...toolResultsById(await run.handle.transcript()).values()];
  expect(results).toHaveLength(1);
  const responses = run.messages.filter((m): m is HookResponseMessage => m.type === 'system' && m.subtype === 'hook_response');
  return { result: results[0]!, responses, written: existsSync(target), cwd };
}

const preHook = (command: string, timeout?: number): HooksSettings => ({
  PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }],
});

test('the worker sandboxes with bubblewrap (so the cases below are about the sandbox)', () => {
  expect(worker.output()).toMatch(/sandbox: bubblewrap \S+ \(\S*bwrap\), sessions default to 'required'/);
});

test('an operator hook whose script is under /tmp runs and its decision applies', async () => {
  const scripts = dir(tmpdir(), 'da-gates-tmp-');
  const { result, written } = await writeWith({ hooks: preHook(guardScript(scripts)) });
  expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('the guard says no') });
  expect(written).toBe(false);
  expect(readdirSync(scripts).sort()).toEqual(['guard.sh', 'ran']);
});

test("a hook in the worker's user settings whose script is under ~/.claude/hooks runs and its decision applies", async () => {
  const hooksDir = path.join(home, '.claude/hooks');
  writeJson(path.join(home, '.claude/settings.json'), { hooks: preHook(guardScript(hooksDir)) });
  try {
    const { result, written, responses } = await writeWith({ settingSources: ['user'] });
    expect(responses).toEqual([
      expect.objectContaining({ hook_name: 'PreToolUse[Write] #1 (user ~/.claude/settings.json)', outcome: 'success' }),
    ]);
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('the guard says no') });
    expect(written).toBe(false);
    expect(readdirSync(hooksDir).sort()).toEqual(['guard.sh', 'ran']);
  } finally {
    rmSync(path.join(home, '.claude/settings.json'));
  }
});

test('a PreToolUse hook whose script is missing (exit 127) denies the call, naming the hook', async () => {
  const { result, written, responses } = await writeWith({ hooks: preHook('/nonexistent/guard.sh') });
  expect(responses).toEqual([expect.objectContaining({ hook_event: 'PreToolUse', outcome: 'error', exit_code: 127 })]);
  expect(result).toMatchObject({
    is_error: true,
    content:
      'Blocked by a PreToolUse hook: The PreToolUse hook PreToolUse[Write] #1 (session options) could not run ' +
      '(exited 127: command or script not found), so the call was denied: a guard hook that cannot run never lets a call through.',
  });
  expect(written).toBe(false);
});

test('a PreToolUse hook past its timeout denies the call', async () => {
  const { result, written } = await writeWith({ hooks: preHook('sleep 30', 1) });
  expect(result).toMatchObject({
    is_error: true,
    content: expect.stringContaining('could not run (timed out after 1 s; its process group was killed), so the call was denied'),
  });
  expect(written).toBe(false);
});

test('a project hook runs in the sandbox: its script under /tmp is not there, and the call is denied, not waved through', async () => {
  const scripts = dir(tmpdir(), 'da-gates-tmp-');
  const cwd = dir('/var/tmp', 'da-gates-ws-');
  writeJson(path.join(cwd, '.claude/settings.json'), { hooks: preHook(guardScript(scripts)) });
  const { result, written } = await writeWith({ settingSources: ['project'] }, cwd);
  expect(result).toMatchObject({
    is_error: true,
    content: expect.stringMatching(
      /^Blocked by a PreToolUse hook: The PreToolUse hook PreToolUse\[Write\] #1 \(project \.claude\/settings\.json\) could not run \(exited 127/,
    ),
  });
  expect(written).toBe(false);
  expect(readdirSync(scripts)).toEqual(['guard.sh']);
});

test('a failing PostToolUse hook stays a non-blocking error: the call ran', async () => {
  const { result, written, responses } = await writeWith({
    hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: '/nonexistent/after.sh' }] }] },
  });
  expect(responses).toEqual([expect.objectContaining({ hook_event: 'PostToolUse', outcome: 'error', exit_code: 127 })]);
  expect(result.is_error).toBeFalsy();
  expect(result.content).toMatch(/^File created successfully at: /);
  expect(written).toBe(true);
});
