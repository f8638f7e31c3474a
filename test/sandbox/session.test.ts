/**
 * The Bash sandbox end to end, tried as a hostile model would: sessions on a real dev server whose
 * Bash calls and command hooks run on real `durable-agent worker --roles tools` processes, started as the README
 * says, with the model's API key in their environment. Each worker has its own tools queue and
 * sandbox settings (DURABLE_AGENT_SANDBOX / DURABLE_AGENT_BWRAP); a session picks one with
 * `toolsTaskQueue`. The unsandboxed worker is the control that shows each probe can see a leak.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { homedir, tmpdir } from 'node:os';
import { turn } from '../../src/testing/scripted-model';
import type { HookResponseMessage } from '../../src/shared/events';
import type { HooksSettings } from '../../src/shared/hooks';
import type { ToolResultBlock } from '../../src/shared/messages';
import { spawnWorker, toolResultsById, type WorkerProcess } from '../helpers/chaos';
import { startHarness, type Harness } from '../helpers/harness';

jest.setTimeout(180_000);

const CANARY = `sk-live-canary-${process.pid}-${Date.now()}`;
let h: Harness;
const workers: Record<'auto' | 'netHost' | 'noBwrap' | 'off', { queue: string; proc: WorkerProcess }> = {} as never;
const dirs: string[] = [];

beforeAll(async () => {
  // Workflows and model calls in this process; every tool call goes to a worker process below.
  h = await startHarness({ roles: ['workflow', 'model'] });
  const specs = {
    auto: {},
    netHost: { DURABLE_AGENT_SANDBOX: '{"network":"host"}' },
    noBwrap: { DURABLE_AGENT_SANDBOX: 'required', DURABLE_AGENT_BWRAP: '/nonexistent/bwrap' },
    off: { DURABLE_AGENT_SANDBOX: 'off' },
  };
  await Promise.all(
    Object.entries(specs).map(async ([name, env]) => {
      const queue = `${h.taskQueue}-tools-${name}`;
      const proc = spawnWorker({
        address: h.address,
        modelUrl: h.model.url,
        bundlePath: '',
        name,
        roles: ['tools'],
        env: { ...env, OPENAI_API_KEY: CANARY, DURABLE_AGENT_TASK_QUEUE: h.taskQueue, DURABLE_AGENT_TOOLS_TASK_QUEUE: queue },
      });
      workers[name as keyof typeof workers] = { queue, proc };
      await proc.ready;
    }),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(workers).map((w) => w.proc?.stop()));
  await h?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let n = 0;
/** One session whose model makes one Bash call on `worker`'s queue; returns that call's result. */
async function bashOn(worker: keyof typeof workers, command: string, cwd = h.workspace()): Promise<ToolResultBlock> {
  const run = await h.run(
    { name: `sandbox-${n++}`, turns: [turn.tool('Bash', { command }), turn.text('done')] },
    { cwd, toolsTaskQueue: workers[worker].queue },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  const results = [...toolResultsById(await run.handle.transcript()).values()];
  expect(results).toHaveLength(1);
  return results[0]!;
}

/** Outside /tmp: the sandbox's /tmp is private, which would hide a /tmp directory for another reason. */
function outsideDir(prefix: string): string {
  const d = realpathSync(mkdtempSync(path.join('/var/tmp', prefix)));
  dirs.push(d);
  return d;
}

test("the worker's start-up line says whether Bash will be sandboxed", () => {
  expect(workers.auto.proc.output()).toMatch(
    /sandbox: bubblewrap \S+ \(\S*bwrap\), sessions default to 'auto', network proxy through socat \S+ \(\S*socat\), sessions default to network 'on';( [^;]+;)? ready/,
  );
  expect(workers.noBwrap.proc.output()).toContain(
    "sandbox: UNAVAILABLE (no executable bubblewrap at /nonexistent/bwrap (DURABLE_AGENT_BWRAP)) — Bash runs unsandboxed in 'auto' " +
      "sessions and is refused in 'required' ones; sessions default to 'required';",
  );
});

test("a command cannot read the worker's environment; the API key never reaches a tool result", async () => {
  const snoop = `tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/*/environ; do tr '\\0' '\\n' < "$f"; done; echo end`;
  const control = await bashOn('off', `tr '\\0' '\\n' < /proc/$PPID/environ | grep OPENAI_API_KEY`);
  expect(control.content).toBe(`OPENAI_API_KEY=${CANARY}`);
  const sandboxed = await bashOn('auto', snoop);
  expect(sandboxed.content).toContain('PATH=');
  expect(sandboxed.content.endsWith('end')).toBe(true);
  expect(sandboxed.content).not.toContain(CANARY);
  expect(sandboxed.content).not.toContain('OPENAI_API_KEY');
  const direct = await bashOn('auto', `tr '\\0' '\\n' < /proc/${workers.auto.proc.pid}/environ`);
  expect(direct.content).not.toContain(CANARY);
});

test('a command cannot write outside its workspace: a path, a symlink, `..`', async () => {
  const base = outsideDir('da-sbx-e2e-');
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  symlinkSync(outside, path.join(ws, 'link'));
  const inTmp = mkdtempSync(path.join(tmpdir(), 'da-outside-'));
  dirs.push(inTmp);
  const command = `echo x > ${inTmp}/f; echo x > ${outside}/a; echo x > link/b; echo x > ../outside/c; echo x > inside; echo exit`;
  const result = await bashOn('auto', command, ws);
  expect(result.content.match(/Read-only file system|No such file or directory/g)).toHaveLength(4);
  expect(readdirSync(outside)).toEqual([]);
  expect(readdirSync(inTmp)).toEqual([]);
  expect(existsSync(path.join(ws, 'inside'))).toBe(true);
  // The control: the same command unsandboxed writes all of them.
  await bashOn('off', command, ws);
  expect(readdirSync(outside).sort()).toEqual(['a', 'b', 'c']);
});

test("by default a session's Bash cannot reach the Temporal frontend it runs under: not raw, not through the proxy, not with the temporal CLI", async () => {
  const [host, port] = [h.address.slice(0, h.address.lastIndexOf(':')), h.address.slice(h.address.lastIndexOf(':') + 1)];
  const temporal = path.join(homedir(), '.cache/durable-agent/bin/temporal');
  expect(existsSync(temporal)).toBe(true);
  const command =
    `bash -c 'echo > /dev/tcp/${host}/${port}' && echo RAW-CONNECTED; ` +
    `curl -sS --max-time 5 -p telnet://${host}:${port} </dev/null && echo PROXY-CONNECTED; ` +
    `timeout 20 ${temporal} workflow list --address ${h.address} --limit 1 -o json >/dev/null 2>&1 && echo CLI-LISTED; echo end`;
  const sandboxed = await bashOn('auto', command);
  expect(sandboxed.content).toMatch(/Connection refused[^]*CONNECT tunnel failed, response 403[^]*\nend$/);
  expect(sandboxed.content).not.toMatch(/RAW-CONNECTED|PROXY-CONNECTED|CLI-LISTED/);
  // The control: with network 'host' (outside the walls) each of them gets through.
  const control = await bashOn('netHost', command);
  expect(control.content).toMatch(/RAW-CONNECTED[^]*CLI-LISTED\nend$/);
});

test("sandbox 'required' on a worker without bubblewrap refuses Bash and runs nothing", async () => {
  const ws = h.workspace();
  const result = await bashOn('noBwrap', 'touch ran', ws);
  expect(result).toMatchObject({ is_error: true });
  expect(result.content).toMatch(
    /^The command was not run: this session requires a sandbox \(sandbox: 'required'\) and none works on this worker: no executable bubblewrap at \/nonexistent\/bwrap/,
  );
  expect(existsSync(path.join(ws, 'ran'))).toBe(false);
});

/**
 * One session on `worker`'s queue with a UserPromptSubmit command hook in the project's
 * `.claude/settings.json` — a file the model could have written, so the hook runs in the sandbox
 * (operator hooks run outside it: test/hooks/gates.test.ts); returns its hook_response events.
 */
async function hookOn(
  worker: keyof typeof workers,
  command: string,
  cwd: string,
  extra: { turns?: ReturnType<typeof turn.text>[]; hooks?: HooksSettings } = {},
) {
  const hooks = extra.hooks ?? { UserPromptSubmit: [{ hooks: [{ type: 'command' as const, command }] }] };
  mkdirSync(path.join(cwd, '.claude'), { recursive: true });
  writeFileSync(path.join(cwd, '.claude/settings.json'), JSON.stringify({ hooks }));
  const run = await h.run(
    { name: `sandbox-hook-${n++}`, turns: extra.turns ?? [turn.text('done')] },
    { cwd, toolsTaskQueue: workers[worker].queue, settingSources: ['project'] },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  return { responses: run.messages.filter((m): m is HookResponseMessage => m.type === 'system' && m.subtype === 'hook_response'), run };
}

test("a command hook cannot read the worker's environment or write outside its workspace; unsandboxed it can (the control)", async () => {
  const outside = outsideDir('da-sbx-hook-');
  // What the hook sees goes to a file under its cwd: a hook's output never reaches the session.
  const command =
    `{ tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/*/environ; do tr '\\0' '\\n' < "$f"; done; ` +
    `tr '\\0' '\\n' < /proc/${workers.auto.proc.pid}/environ; echo end; } > seen.txt 2>&1; echo x > ${outside}/from-hook; true`;
  const ws = h.workspace();
  const { responses } = await hookOn('auto', command, ws);
  expect(responses).toEqual([expect.objectContaining({ hook_event: 'UserPromptSubmit', outcome: 'success' })]);
  const seen = readFileSync(path.join(ws, 'seen.txt'), 'utf8');
  expect(seen).toContain('PATH=');
  expect(seen.endsWith('end\n')).toBe(true);
  expect(seen).not.toContain(CANARY);
  expect(seen).not.toContain('OPENAI_API_KEY');
  expect(readdirSync(outside)).toEqual([]);

  const control = h.workspace();
  await hookOn('off', command, control);
  expect(readFileSync(path.join(control, 'seen.txt'), 'utf8')).toContain(`OPENAI_API_KEY=${CANARY}`);
  expect(readdirSync(outside)).toEqual(['from-hook']);
});

test("sandbox 'required' on a worker without bubblewrap: a PreToolUse hook is an error, is not run, and the tool is blocked", async () => {
  const ws = h.workspace();
  const { responses, run } = await hookOn('noBwrap', '', ws, {
    turns: [turn.tool('Write', { file_path: path.join(ws, 'written.txt'), content: 'x' }), turn.text('done')],
    hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'touch hook-ran' }] }] },
  });
  expect(responses).toEqual([expect.objectContaining({ hook_event: 'PreToolUse', outcome: 'error' })]);
  expect(responses[0]!.stderr).toMatch(
    /^The command was not run: this session requires a sandbox \(sandbox: 'required'\) and none works on this worker/,
  );
  const results = [...toolResultsById(await run.handle.transcript()).values()];
  expect(results).toEqual([
    expect.objectContaining({ is_error: true, content: expect.stringMatching(/^Blocked by a PreToolUse hook: The command was not run/) }),
  ]);
  expect(readdirSync(ws)).toEqual(['.claude']);
});
