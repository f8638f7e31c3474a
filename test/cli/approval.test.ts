/**
 * Durable approval from the command line: `durable-agent approve|deny|ls|watch` as spawned
 * processes, the workflow and tools on a `durable-agent worker` process that is SIGKILLed while a
 * session waits, the model on this process's worker (scripted). Settings files that do not
 * validate are refused before anything starts.
 */
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { TurnInput } from '../../src/testing/scenario';
import { SessionNotFoundError } from '../../src/client/client';
import { readJobsFile } from '../../src/client/jobs-file';
import { scenarioTag, startHarness, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';
import { writeWorkflowBundle } from '../helpers/chaos';
import { cli, cliEnv, jsonLines, spawnCli, type CliProcess } from './helpers';

const RUN = Date.now().toString(36);
let h: Harness;
let env: NodeJS.ProcessEnv;
let bundlePath: string;
const workers: CliProcess[] = [];
/** The live worker process. */
let worker: CliProcess;

beforeAll(async () => {
  // Only the model role here: workflows and tools run on worker processes this test can kill.
  h = await startHarness({ roles: ['model'] });
  env = cliEnv(h);
  bundlePath = await writeWorkflowBundle(mkdtempSync(path.join(tmpdir(), 'da-approval-')));
  worker = await startWorkerProcess();
});
afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await h?.close();
});

/** A `durable-agent worker` process running the workflow and tools roles on this harness's queues. */
async function startWorkerProcess(): Promise<CliProcess> {
  const w = spawnCli(['worker', '--roles', 'workflow,tools'], { env: { ...env, DURABLE_AGENT_WORKFLOW_BUNDLE: bundlePath } });
  workers.push(w);
  await w.waitForLine(/\] connected to .*; ready$/, 90_000);
  return w;
}

async function sigkill(w: CliProcess): Promise<void> {
  w.child.kill('SIGKILL');
  const r = await w.done;
  expect(r.signal).toBe('SIGKILL');
}

function runArgs(name: string, turns: TurnInput[], cwd: string, ...flags: string[]): string[] {
  h.model.addScenario({ name, turns });
  return ['run', `${scenarioTag(name)} Do the task.`, '--cwd', cwd, '--permission-mode', 'default', '--detach', ...flags];
}

const pendingIds = async (id: string) => (await (await h.client.get(id)).pendingPermissions()).map((p) => p.requestId);

test('approval survives a worker SIGKILL: the tool runs exactly once after `approve`, and the session finishes', async () => {
  const cwd = h.workspace();
  const id = `approve-kill-${RUN}`;
  const started = await cli(
    runArgs('approve-kill', [turn.tool('Bash', { command: 'echo ran >> count.txt' }), turn.text('done')], cwd, '--id', id),
    { env },
  );
  expect(started).toMatchObject({ code: 0, stdout: `${id}\n` });
  await waitFor('the pending request', async () => (await pendingIds(id)).length === 1, 60_000);

  const listed = await waitFor(
    '`ls --status waiting_for_approval` to list the session',
    async () => {
      const r = await cli(['ls', '--status', 'waiting_for_approval', '--json'], { env });
      return jsonLines<{ sessionId: string; status: string }>(r.stdout).find((s) => s.sessionId === id);
    },
    60_000,
  );
  expect(listed.status).toBe('waiting_for_approval');
  const watch = spawnCli(['watch', id], { env });
  const requestLine = await watch.waitForLine(/waits for approval/);
  expect(requestLine).toContain('? Bash(echo ran >> count.txt) waits for approval (perm-1)');
  await watch.waitForLine(new RegExp(`answer: durable-agent approve ${id} perm-1 \\[--always\\]  \\|  durable-agent deny ${id} perm-1`));

  await sigkill(worker);
  worker = await startWorkerProcess();
  const approved = await cli(['approve', id], { env });
  expect(approved).toMatchObject({ code: 0, stdout: 'approved perm-1: Bash(echo ran >> count.txt)\n' });

  const result = await (await h.client.get(id)).result();
  expect(result).toMatchObject({ subtype: 'success', result: 'done' });
  expect(readFileSync(path.join(cwd, 'count.txt'), 'utf8')).toBe('ran\n');
  const watched = await watch.done;
  expect(watched.code).toBe(0);
  expect(watched.stdout).toMatch(/perm-1 allowed/);
  expect(watched.stdout).toMatch(/✓ success/);

  const again = await cli(['approve', id], { env });
  expect(again.code).toBe(2);
  expect(again.stderr).toBe(`no pending permission request for session ${id}\n`);
}, 300_000);

test('deny --message reaches the model as the tool error result; several pending requests must be named', async () => {
  const cwd = h.workspace();
  writeFileSync(path.join(cwd, 'a.txt'), 'A\n');
  writeFileSync(path.join(cwd, 'b.txt'), 'B\n');
  const id = `deny-${RUN}`;
  const reads = turn.tools([
    { name: 'Read', arguments: { file_path: path.join(cwd, 'a.txt') } },
    { name: 'Read', arguments: { file_path: path.join(cwd, 'b.txt') } },
  ]);
  const args = runArgs(
    'deny-two',
    [reads, turn.tool('Bash', { command: 'git push --force' }), turn.text('understood')],
    cwd,
    '--id',
    id,
    '--ask-tools',
    'Read',
  );
  expect((await cli(args, { env })).code).toBe(0);
  // Both reads ask at once (read-only calls of a turn run side by side).
  await waitFor('two pending requests', async () => (await pendingIds(id)).length === 2, 60_000);

  const ambiguous = await cli(['deny', id], { env });
  expect(ambiguous.code).toBe(2);
  expect(ambiguous.stderr).toContain(`session ${id} has 2 pending permission requests; name one:`);
  expect(ambiguous.stderr).toMatch(/perm-1 {2}Read\(.*a\.txt\)/);
  expect(ambiguous.stderr).toMatch(/perm-2 {2}Read\(.*b\.txt\)/);
  const unknown = await cli(['approve', id, 'perm-9'], { env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(new RegExp(`^no pending permission request perm-9 for session ${id}; pending:`));

  expect((await cli(['approve', id, 'perm-1'], { env })).code).toBe(0);
  expect((await cli(['deny', id, 'perm-2', '--message', 'b.txt is private'], { env })).code).toBe(0);
  await waitFor('the Bash request', async () => (await pendingIds(id))[0] === 'perm-3', 60_000);
  const denied = await cli(['deny', id, '--message', 'Never force-push; open a PR instead.'], { env });
  expect(denied).toMatchObject({ code: 0, stdout: 'denied perm-3: Bash(git push --force)\n' });

  const result = await (await h.client.get(id)).result();
  expect(result.subtype).toBe('success');
  const requests = h.model.requests.filter((r) => r.scenario === 'deny-two');
  const toolMessages = (i: number) =>
    (requests[i]!.body.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'tool').map((m) => m.content);
  expect(toolMessages(1)).toEqual([expect.stringContaining('A'), 'b.txt is private']);
  expect(toolMessages(2).at(-1)).toBe('Never force-push; open a PR instead.');
}, 300_000);

test('run --settings and --setting-sources reach the session: an ask rule from the file waits for approval, a project hook sees the call', async () => {
  const cwd = h.workspace();
  const settings = write(path.join(cwd, 'ci-settings.json'), JSON.stringify({ permissions: { ask: ['Bash(git push:*)'] } }));
  write(
    path.join(cwd, '.claude', 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [{ type: 'command', command: 'cat >> "$CLAUDE_PROJECT_DIR/hook.log"; echo >> "$CLAUDE_PROJECT_DIR/hook.log"' }],
          },
        ],
      },
    }),
  );
  const id = `settings-${RUN}`;
  const args = runArgs(
    'from-settings',
    [turn.tool('Bash', { command: 'git push origin main' }), turn.text('ok')],
    cwd,
    '--id',
    id,
    '--allowed-tools',
    'Bash',
  );
  expect((await cli([...args, '--settings', settings, '--setting-sources', 'project'], { env })).code).toBe(0);
  const [request] = await waitFor(
    'the ask from the settings file',
    async () => {
      const p = await (await h.client.get(id)).pendingPermissions();
      return p.length ? p : undefined;
    },
    60_000,
  );
  expect(request).toMatchObject({ toolName: 'Bash', input: { command: 'git push origin main' } });
  const logged = readFileSync(path.join(cwd, 'hook.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(logged).toEqual([
    expect.objectContaining({
      session_id: id,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'git push origin main' },
    }),
  ]);
  expect((await cli(['deny', id, '--message', 'No pushing from CI.'], { env })).code).toBe(0);
  expect((await (await h.client.get(id)).result()).permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })]);
}, 300_000);

test('approve/deny bad input: no such session, flags of the other command, nothing pending', async () => {
  const missing = await cli(['approve', `no-such-${RUN}`], { env });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/no session with id no-such-/);
  expect((await cli(['approve', 'x', '--message', 'hi'], { env })).stderr).toMatch(/--message does not apply to approve/);
  expect((await cli(['deny', 'x', '--always'], { env })).stderr).toMatch(/--always does not apply to deny/);
  expect((await cli(['deny'], { env })).stderr).toMatch(/usage: durable-agent deny SESSION \[REQUEST\]/);
});

describe('settings that do not validate: exit 2 naming the file, the key and the problem; nothing starts', () => {
  const cases: [string, (cwd: string) => string[], RegExp][] = [
    [
      'an unparsable rule in --settings',
      (cwd) => ['--settings', write(path.join(cwd, 'ci.json'), '{"permissions": {"deny": ["Bash(rm:*"]}}')],
      /ci\.json: permissions\.deny\[0\]: invalid permission rule 'Bash\(rm:\*'/,
    ],
    [
      'a project settings file that is not JSON',
      (cwd) => (write(path.join(cwd, '.claude', 'settings.json'), '{\n  "hooks": {,\n}'), ['--setting-sources', 'project']),
      /\.claude\/settings\.json: \(file\): not valid JSON at line 2 column 13: expected a property name in double quotes/,
    ],
    [
      'an unknown hook event in local settings',
      (cwd) => (
        write(path.join(cwd, '.claude', 'settings.local.json'), '{"hooks": {"BeforeBash": []}}'),
        ['--setting-sources', 'local,project']
      ),
      /settings\.local\.json: hooks\.BeforeBash: unknown hook event 'BeforeBash'/,
    ],
    [
      'a --settings file that does not exist',
      (cwd) => ['--settings', path.join(cwd, 'missing.json')],
      /missing\.json: \(file\): no such file/,
    ],
    ['an unknown setting source', () => ['--setting-sources', 'user,team'], /--setting-sources: unknown source 'team'/],
    ['an unparsable --ask-tools rule', () => ['--ask-tools', 'Bash(git push'], /askTools\.0: invalid permission rule 'Bash\(git push'/],
  ];
  test.each(cases)('%s', async (_what, flags, message) => {
    const cwd = h.workspace();
    const id = `bad-settings-${RUN}-${Math.random().toString(36).slice(2, 8)}`;
    const r = await cli(['run', 'hi', '--cwd', cwd, '--id', id, ...flags(cwd)], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    await expect(h.client.get(id)).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});

test('submit --settings: every job is checked before anything is submitted', async () => {
  const cwd = h.workspace();
  const jobs = write(
    path.join(cwd, 'jobs.jsonl'),
    `${JSON.stringify({ prompt: 'a' })}\n${JSON.stringify({ prompt: 'b', id: 'second' })}\n`,
  );
  const bad = write(path.join(cwd, 'bad.json'), '{"permissions": {"allow": ["Edit(src/**"]}}');
  const r = await cli(['submit', jobs, '--cwd', cwd, '--settings', bad, '--detach'], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`${jobs}: job job-1: ${bad}: permissions.allow[0]: invalid permission rule 'Edit(src/**'`);
  const batchId = readJobsFile(jobs, { cwd }).defaultBatchId;
  await expect(h.client.get(batchId)).rejects.toBeInstanceOf(SessionNotFoundError);
});

function write(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}
