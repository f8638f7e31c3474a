/**
 * Workspaces on the real worker (ARCHITECTURE.md#workspaces): a session made from a git
 * repository at a ref or from a folder, pinned to the tools host that made it, returns what it
 * changed as a patch that applies to its base, and the verdict of its `verify` command.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import { git } from './helpers';
import { scenarioTag, useHarness } from '../helpers/harness';
import { scheduledActivities } from '../helpers/history';
import { cli } from '../cli/helpers';
import { MAX_INLINE_PATCH_BYTES, PATCH_PART_BYTES } from '../../src/shared/workspace';

// The worker in this process makes its workspaces here (outside /tmp: the sandbox's /tmp is private).
const WORKSPACES = varTmpDir('da-workspaces-');
process.env.DURABLE_AGENT_WORKSPACES = WORKSPACES;
afterAll(removeVarTmpDirs);

const h = useHarness();

/** A bare origin whose `main` has a failing test script, and a tag `v1` one commit back. */
function origin(): { bare: string; main: string; v1: string } {
  const work = h.workspace();
  git(work, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(work, 'test.sh'), 'grep -q fixed status.txt\n');
  writeFileSync(path.join(work, 'status.txt'), 'broken\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'v1');
  git(work, 'tag', 'v1');
  writeFileSync(path.join(work, 'README'), 'a project\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'readme');
  const bare = `${h.workspace()}/origin.git`;
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  return { bare, main: git(bare, 'rev-parse', 'main'), v1: git(bare, 'rev-parse', 'v1') };
}

const fix = turn.tool('Bash', { command: 'echo fixed > status.txt && echo new > added.txt' });

test('a git workspace at a ref: own folder, patch that applies to the base, verdict pass; the origin is untouched', async () => {
  const repo = origin();
  const refsBefore = git(repo.bare, 'show-ref');
  const { result, handle } = await h.run(
    { name: 'ws-fix', turns: [fix, turn.text('fixed')] },
    { workspace: { git: repo.bare, ref: 'main' }, verify: 'sh test.sh' },
  );
  expect(result.subtype).toBe('success');
  const ws = result.workspace!;
  expect(ws.path.startsWith(WORKSPACES + path.sep)).toBe(true);
  expect(ws.base).toBe(repo.main);
  expect(ws.kind).toBe('git');
  expect(ws.diffStat).toEqual({ filesChanged: 2, insertions: 2, deletions: 1 });
  expect(result.verdict).toBe('pass');
  expect(result.verify).toMatchObject({ command: 'sh test.sh', exitCode: 0 });
  // The patch applies to the base.
  const check = h.workspace();
  execFileSync('git', ['clone', '-q', repo.bare, check]);
  git(check, 'checkout', '-q', repo.main);
  writeFileSync(path.join(check, 'change.patch'), ws.patch!);
  git(check, 'apply', 'change.patch');
  expect(readFileSync(path.join(check, 'status.txt'), 'utf8')).toBe('fixed\n');
  expect(readFileSync(path.join(check, 'added.txt'), 'utf8')).toBe('new\n');
  expect(git(repo.bare, 'show-ref')).toBe(refsBefore);
  // Made on the shared tools queue; everything after it on the queue of the host that made it.
  const [made] = await scheduledActivities(handle.workflow, 'provisionWorkspace');
  expect(made!.taskQueue!.name).toBe(`${h.taskQueue}-tools`);
  const pinned = `${h.taskQueue}-tools@${hostname()}`;
  expect(ws.host).toBe(hostname());
  for (const name of ['runTool', 'workspaceDiff', 'runVerify']) {
    const scheduled = await scheduledActivities(handle.workflow, name);
    expect(scheduled.length).toBeGreaterThan(0);
    for (const a of scheduled) expect(a.taskQueue!.name).toBe(pinned);
  }
});

test('a session that changes nothing: empty patch, verdict fail; a tag ref checks out that commit', async () => {
  const repo = origin();
  const { result } = await h.run(
    { name: 'ws-idle', turns: [turn.tool('Bash', { command: 'git log --format=%H -1' }), turn.text('looked')] },
    { workspace: { git: repo.bare, ref: 'v1' }, verify: { command: 'sh test.sh', timeoutMs: 60_000 } },
  );
  expect(result.workspace!.base).toBe(repo.v1);
  expect(existsSync(path.join(result.workspace!.path, 'README'))).toBe(false);
  expect(result.workspace!.diffStat).toEqual({ filesChanged: 0, insertions: 0, deletions: 0 });
  expect(result.workspace!.patch).toBe('');
  expect(result.verdict).toBe('fail');
  expect(result.verify!.exitCode).toBe(1);
});

test('a ref that does not exist fails the session with a setup error naming the repository and the ref', async () => {
  const repo = origin();
  const { result } = await h.run(
    { name: 'ws-bad-ref', turns: [turn.text('never')] },
    { workspace: { git: repo.bare, ref: 'no-such-branch' }, verify: 'true' },
  );
  expect(result.subtype).toBe('error_during_execution');
  expect(result.errors![0]).toMatch(/^setup: /);
  expect(result.errors![0]).toContain(repo.bare);
  expect(result.errors![0]).toContain('no-such-branch');
  expect(result.verdict).toBeNull();
  expect(h.requestsOf('ws-bad-ref')).toHaveLength(0);
});

test('a copy workspace: the template is copied, the patch is against the copy, a hung verify is stopped', async () => {
  const template = h.workspace();
  writeFileSync(path.join(template, 'status.txt'), 'broken\n');
  const { result } = await h.run(
    { name: 'ws-copy', turns: [fix, turn.text('fixed')] },
    { workspace: { copy: template }, verify: { command: 'sleep 30', timeoutMs: 1_000 } },
  );
  expect(result.workspace!.kind).toBe('copy');
  expect(result.workspace!.path).not.toBe(template);
  expect(readFileSync(path.join(template, 'status.txt'), 'utf8')).toBe('broken\n');
  expect(result.workspace!.diffStat).toEqual({ filesChanged: 2, insertions: 2, deletions: 1 });
  expect(result.verdict).toBe('error');
  expect(result.verify!.error).toMatch(/timed out|timeout/i);
});

test('workspace and cwd together are refused before anything starts, naming the field', async () => {
  await expect(h.client.start({ prompt: 'x', cwd: h.workspace(), workspace: { git: '/nowhere' } })).rejects.toThrow(
    /workspace: cannot be combined with cwd/,
  );
  await expect(h.client.start({ prompt: 'x', workspace: { git: '/nowhere', branch: 'x' } as never })).rejects.toThrow(
    /workspace\.branch: unknown option/,
  );
});

test('a patch too large for the result is kept in history in parts, and `diff` puts it back together', async () => {
  const repo = origin();
  const big = turn.tool('Bash', { command: 'head -c 900000 /dev/urandom | base64 > big.txt && printf "é\\n" >> big.txt' });
  const { result, handle } = await h.run({ name: 'ws-big', turns: [big, turn.text('wrote it')] }, { workspace: { git: repo.bare } });
  const ws = result.workspace!;
  expect(ws.patch).toBeUndefined();
  expect(ws.patchBytes).toBeGreaterThan(MAX_INLINE_PATCH_BYTES);
  expect(ws.patchParts).toBe(Math.ceil(ws.patchBytes! / PATCH_PART_BYTES));
  const diff = await cli(['diff', handle.sessionId], { env: h.env });
  expect(diff.code).toBe(0);
  expect(Buffer.byteLength(diff.stdout)).toBe(ws.patchBytes);
  const check = h.workspace();
  execFileSync('git', ['clone', '-q', repo.bare, check]);
  writeFileSync(path.join(check, 'change.patch'), diff.stdout);
  git(check, 'apply', 'change.patch');
  expect(readFileSync(path.join(check, 'big.txt'))).toEqual(readFileSync(path.join(ws.path, 'big.txt')));
});

test('a subagent works in its parent workspace, on the host its parent is pinned to', async () => {
  const repo = origin();
  const helper = { description: 'Fixes things', prompt: 'You fix things.', tools: ['Bash'] };
  h.model.addScenario({
    name: 'ws-child',
    turns: [turn.tool('Bash', { command: 'echo fixed > status.txt' }), turn.text('child fixed it')],
  });
  const task = {
    id: 'task_fix',
    name: 'Task',
    arguments: { description: 'fix', prompt: `${scenarioTag('ws-child')} fix it`, subagent_type: 'helper' },
  };
  const { result, handle } = await h.run(
    { name: 'ws-parent', turns: [turn.tools([task]), turn.text('done')] },
    { workspace: { git: repo.bare }, verify: 'sh test.sh', agents: { helper } },
  );
  expect(result.verdict).toBe('pass');
  expect(result.workspace!.diffStat!.filesChanged).toBe(1);
  const child = h.client.client.workflow.getHandle(`${handle.sessionId}/task/task_fix`);
  const runs = await scheduledActivities(child, 'runTool');
  expect(runs).toHaveLength(1);
  expect(runs[0]!.taskQueue!.name).toBe(`${h.taskQueue}-tools@${hostname()}`);
  expect(await scheduledActivities(child, 'provisionWorkspace')).toHaveLength(0);
});
