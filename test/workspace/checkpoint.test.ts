/** Workspace checkpoints with real git: made, pushed, restored on "another host", forked (docs/ARCHITECTURE.md#checkpoints). */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { checkpoint, type CheckpointDeps } from '../../src/activities/workspace/checkpoint';
import { takeDiff } from '../../src/activities/workspace/diff';
import { runGit } from '../../src/activities/workspace/git';
import { checkpointRepoPaths, sessionPaths } from '../../src/activities/workspace/layout';
import { provision } from '../../src/activities/workspace/provision';
import { restore } from '../../src/activities/workspace/restore';
import type { CheckpointResult } from '../../src/shared/checkpoint';
import { activities, git, makeOrigin } from './helpers';

jest.setTimeout(60_000);

let dir: string;
let root: string;
let remote: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'da-ckpt-')));
  root = path.join(dir, 'root');
  remote = path.join(dir, 'remote.git');
  git(dir, 'init', '--quiet', '--bare', remote);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const deps = (extra: Partial<CheckpointDeps> = {}): CheckpointDeps => ({ root, git: runGit, ...extra });
const repo = () => checkpointRepoPaths(root).dir;
const write = (file: string, text: string, mode?: number) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (mode !== undefined) fs.chmodSync(file, mode);
};

/** Every file under `d` but `.git`: its mode's x bit and bytes, or a symlink's target; empty folders not listed. */
function files(d: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(d, rel), { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(d, r);
      if (e.isSymbolicLink()) out[r] = `-> ${fs.readlinkSync(full)}`;
      else if (e.isDirectory()) walk(r);
      else out[r] = `${fs.statSync(full).mode & 0o111 ? 'x' : '-'} ${fs.readFileSync(full, 'utf8')}`;
    }
  };
  walk('');
  return out;
}

/** Paths and modes of a commit in the checkpoint repository. */
const recorded = (commit: string): string[] =>
  git(root, '--git-dir', repo(), 'ls-tree', '-r', '--full-tree', commit)
    .split('\n')
    .map((l) => `${l.split(' ')[0]} ${l.split('\t')[1]}`);

/** A template folder: text, an executable, a symlink, a nested folder, a file the agent deletes. */
function template(at: string): string {
  write(path.join(at, 'README.md'), 'readme\n');
  write(path.join(at, 'bin/run.sh'), '#!/bin/sh\necho run\n', 0o755);
  write(path.join(at, 'src/lib/util.ts'), 'export const u = 1;\n');
  write(path.join(at, 'old.txt'), 'to be deleted\n');
  fs.symlinkSync('README.md', path.join(at, 'link.md'));
  return at;
}

/** The agent's turn: a change, a new file, a deletion, a mode change, a new symlink. */
function agentTurn(folder: string): void {
  write(path.join(folder, 'src/lib/util.ts'), 'export const u = 2;\n');
  write(path.join(folder, 'src/new.ts'), 'export const n = 1;\n');
  fs.rmSync(path.join(folder, 'old.txt'));
  fs.chmodSync(path.join(folder, 'README.md'), 0o755);
  fs.symlinkSync('src/new.ts', path.join(folder, 'new-link'));
}

/** The host is lost: everything under the root goes, the folder included (a plain one given too). */
function loseHost(...also: string[]): void {
  fs.rmSync(root, { recursive: true, force: true });
  for (const d of also) fs.rmSync(d, { recursive: true, force: true });
}

const failure = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApplicationFailure);
  return e as ApplicationFailure;
};

test('checkpoint 0, a changed turn, an unchanged turn; a retried turn makes the same commit', async () => {
  const ws = await provision('s1', { copy: template(path.join(dir, 'tpl')) }, deps());
  const slug = sessionPaths(root, 's1').slug;
  const c0 = await checkpoint({ sessionId: 's1', path: ws.path, run: 'run-1', turn: 0 }, deps());
  expect(c0).toMatchObject({ turn: 0, ref: `refs/checkpoints/${slug}/run-1/0`, changed: true, pushed: 'local' });
  expect(c0.durationMs).toBeGreaterThanOrEqual(0);
  expect(git(root, '--git-dir', repo(), 'rev-list', '--parents', '-n1', c0.commit)).toBe(c0.commit);
  expect(git(root, '--git-dir', repo(), 'config', 'gc.auto')).toBe('0');

  agentTurn(ws.path);
  const c1 = await checkpoint({ sessionId: 's1', path: ws.path, run: 'run-1', turn: 1, parent: c0.commit }, deps());
  expect(c1).toMatchObject({ turn: 1, changed: true, pushed: 'local' });
  expect(c1.commit).not.toBe(c0.commit);
  expect(git(root, '--git-dir', repo(), 'rev-parse', `${c1.commit}^`)).toBe(c0.commit);
  expect(recorded(c1.commit)).toEqual([
    '100755 README.md',
    '100755 bin/run.sh',
    '120000 link.md',
    '120000 new-link',
    '100644 src/lib/util.ts',
    '100644 src/new.ts',
  ]);

  const c2 = await checkpoint({ sessionId: 's1', path: ws.path, run: 'run-1', turn: 2, parent: c1.commit }, deps());
  expect(c2).toMatchObject({ turn: 2, commit: c1.commit, changed: false, ref: `refs/checkpoints/${slug}/run-1/2` });
  // Every checkpointed turn's ref exists, an unchanged one at its parent's commit.
  expect(git(root, '--git-dir', repo(), 'rev-parse', c2.ref)).toBe(c1.commit);

  const again = await checkpoint({ sessionId: 's1', path: ws.path, run: 'run-1', turn: 1, parent: c0.commit }, deps());
  expect(again).toMatchObject({ commit: c1.commit, changed: true });

  // The checkpoint repository gone (the session's index kept names objects it lacks): made
  // afresh, the files all there, a root commit since the parent is gone too.
  const files1 = recorded(c1.commit);
  fs.rmSync(repo(), { recursive: true });
  const c3 = await checkpoint({ sessionId: 's1', path: ws.path, run: 'run-1', turn: 3, parent: c2.commit }, deps());
  expect(c3.changed).toBe(true);
  expect(recorded(c3.commit)).toEqual(files1);
  expect(git(root, '--git-dir', repo(), 'rev-list', '--parents', '-n1', c3.commit)).toBe(c3.commit);
});

test('untracked files in, ignored ones out, a .git never; the user repository untouched', async () => {
  const proj = path.join(dir, 'proj');
  fs.mkdirSync(proj);
  git(proj, 'init', '--quiet', '--initial-branch=trunk');
  write(path.join(proj, '.gitignore'), '*.log\nbuild/\n');
  write(path.join(proj, 'a.txt'), 'one\n');
  git(proj, 'add', '-A');
  git(proj, 'commit', '--quiet', '-m', 'one');
  write(path.join(proj, 'a.txt'), 'stashed\n');
  git(proj, 'stash', '--quiet');
  write(path.join(proj, 'a.txt'), 'staged\n');
  git(proj, 'add', 'a.txt');
  write(path.join(proj, 'a.txt'), 'staged, then changed again\n');
  write(path.join(proj, 'untracked.txt'), 'new\n');
  write(path.join(proj, 'app.log'), 'ignored\n');
  write(path.join(proj, 'build/out.o'), 'ignored\n');
  // A nested repository with a commit: a gitlink, as git itself records it.
  const nested = path.join(proj, 'vendor/lib');
  write(path.join(nested, 'x.c'), 'x\n');
  git(nested, 'init', '--quiet');
  git(nested, 'add', '-A');
  git(nested, 'commit', '--quiet', '-m', 'x');
  // A nested repository without a commit: skipped, the checkpoint made all the same.
  write(path.join(proj, 'fresh/y.c'), 'y\n');
  git(path.join(proj, 'fresh'), 'init', '--quiet');
  // A `.git` file (a worktree's, a submodule's) in a subfolder: never recorded, its neighbours are.
  write(path.join(proj, 'wt/.git'), 'gitdir: /nowhere\n');
  write(path.join(proj, 'wt/z.txt'), 'z\n');

  // No `git status` here: it may rewrite the index itself (refreshing its stat data).
  const state = () => ({
    index: createHash('sha256')
      .update(fs.readFileSync(path.join(proj, '.git/index')))
      .digest('hex'),
    head: git(proj, 'rev-parse', 'HEAD'),
    branch: git(proj, 'symbolic-ref', '--short', 'HEAD'),
    staged: git(proj, 'diff', '--cached', '--name-only'),
    stash: git(proj, 'stash', 'list'),
    refs: git(proj, 'for-each-ref'),
  });
  const before = state();
  const c = await checkpoint({ sessionId: 'plain', path: proj, run: 'r', turn: 0 }, deps());
  expect(state()).toEqual(before);
  expect(recorded(c.commit)).toEqual(['100644 .gitignore', '100644 a.txt', '100644 untracked.txt', '160000 vendor/lib', '100644 wt/z.txt']);
  expect(git(root, '--git-dir', repo(), 'show', `${c.commit}:a.txt`)).toBe('staged, then changed again');
  // Nothing of ours in the folder.
  expect(fs.readdirSync(proj).sort()).toEqual([
    '.git',
    '.gitignore',
    'a.txt',
    'app.log',
    'build',
    'fresh',
    'untracked.txt',
    'vendor',
    'wt',
  ]);
});

test('a git workspace: the agent’s branch, index and stash untouched; restored elsewhere, git diff shows its work', async () => {
  const origin = makeOrigin(dir);
  // A file the repository tracks though its .gitignore ignores it: in no checkpoint, put back on restore.
  const work = path.join(dir, 'work');
  git(work, 'checkout', '--quiet', 'main');
  write(path.join(work, 'build/keep.txt'), 'kept\n');
  git(work, 'add', '-f', 'build/keep.txt');
  git(work, 'commit', '--quiet', '-m', 'keep');
  git(work, 'push', '--quiet', origin.url, 'main');
  const ws = await provision('job/1', { git: origin.url, ref: 'main' }, deps());
  const withRemote = deps({ checkpointRemote: remote });
  const c0 = await checkpoint({ sessionId: 'job/1', path: ws.path, run: 'r1', turn: 0 }, withRemote);
  // The agent: a commit, a stash, a staged change, an untracked file, an ignored one, a script.
  write(path.join(ws.path, 'a.txt'), 'committed\n');
  git(ws.path, 'commit', '--quiet', '-am', 'agent');
  write(path.join(ws.path, 'a.txt'), 'stashed\n');
  git(ws.path, 'stash', '--quiet');
  write(path.join(ws.path, 'a.txt'), 'staged\n');
  git(ws.path, 'add', 'a.txt');
  write(path.join(ws.path, 'new.txt'), 'new\n');
  write(path.join(ws.path, 'build/out.o'), 'ignored\n');
  write(path.join(ws.path, 'tool.sh'), '#!/bin/sh\n', 0o755);
  const state = () => ({
    index: createHash('sha256')
      .update(fs.readFileSync(path.join(ws.path, '.git/index')))
      .digest('hex'),
    head: git(ws.path, 'rev-parse', 'HEAD'),
    branch: git(ws.path, 'symbolic-ref', '--short', 'HEAD'),
    staged: git(ws.path, 'diff', '--cached', '--name-only'),
    stash: git(ws.path, 'stash', 'list'),
  });
  const before = state();
  const c1 = await checkpoint({ sessionId: 'job/1', path: ws.path, run: 'r1', turn: 1, parent: c0.commit }, withRemote);
  expect(state()).toEqual(before);
  expect(c1).toMatchObject({ changed: true, pushed: 'remote' });
  expect(git(dir, '--git-dir', remote, 'rev-parse', c1.ref)).toBe(c1.commit);
  const want = files(ws.path);
  delete want['build/out.o'];
  expect(recorded(c1.commit).filter((l) => l.includes('build/'))).toEqual([]);

  loseHost(); // the folder is under the root
  const input = {
    sessionId: 'job/1',
    path: ws.path,
    kind: 'git' as const,
    source: { git: origin.url, ref: 'main' },
    base: ws.base,
    checkpoint: { commit: c1.commit, ref: c1.ref },
  };
  const r = await activities(root, undefined, {}, remote).restoreWorkspace(input);
  expect(r).toEqual({ path: ws.path, base: ws.base, kind: 'git', host: 'host-1', hostQueue: 'agent-tools@host-1' });
  expect(files(ws.path)).toEqual(want);
  expect(git(ws.path, 'rev-parse', 'HEAD')).toBe(ws.base);
  expect(want['build/keep.txt']).toBe('- kept\n');
  expect(git(ws.path, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
  expect(git(ws.path, 'status', '--porcelain')).toBe('M a.txt\n?? new.txt\n?? tool.sh'); // ' M': trimmed
  expect(git(ws.path, 'diff')).toContain('-two\n+staged');
  const d = await takeDiff({ sessionId: 'job/1', base: ws.base }, deps());
  expect(d.diffStat.filesChanged).toBe(3);

  // A retry finds it done: the same answer, the folder not remade.
  write(path.join(ws.path, 'after.txt'), 'the session went on\n');
  expect(await restore(input, deps({ checkpointRemote: remote }))).toEqual({ path: ws.path, base: ws.base, kind: 'git' });
  expect(fs.existsSync(path.join(ws.path, 'after.txt'))).toBe(true);
  // The next checkpoint on this host follows the restored one.
  const c2 = await checkpoint({ sessionId: 'job/1', path: ws.path, run: 'r1', turn: 2, parent: c1.commit }, withRemote);
  expect(git(root, '--git-dir', repo(), 'rev-parse', `${c2.commit}^`)).toBe(c1.commit);
  expect(git(root, '--git-dir', repo(), 'diff-tree', '--name-only', '-r', c1.commit, c2.commit)).toBe('after.txt');
});

test('a copy workspace restored elsewhere: the checkpoint’s files, checkpoint 0 as the base', async () => {
  const ws = await provision('c', { copy: template(path.join(dir, 'tpl')) }, deps());
  const withRemote = deps({ checkpointRemote: remote });
  const c0 = await checkpoint({ sessionId: 'c', path: ws.path, run: 'r', turn: 0 }, withRemote);
  agentTurn(ws.path);
  const c1 = await checkpoint({ sessionId: 'c', path: ws.path, run: 'r', turn: 1, parent: c0.commit }, withRemote);
  const want = files(ws.path);

  loseHost();
  const r = await restore(
    {
      sessionId: 'c',
      path: ws.path,
      kind: 'copy',
      source: { copy: path.join(dir, 'tpl') },
      base: ws.base,
      checkpoint: { commit: c1.commit, ref: c1.ref },
      baseCheckpoint: { commit: c0.commit, ref: c0.ref },
    },
    withRemote,
  );
  // Checkpoint 0's files committed with the base's fixed identity: the very same base commit.
  expect(r).toEqual({ path: ws.path, base: ws.base, kind: 'copy' });
  expect(files(ws.path)).toEqual(want);
  expect(fs.existsSync(path.join(ws.path, 'old.txt'))).toBe(false);
  const d = await takeDiff({ sessionId: 'c', base: r.base }, deps());
  expect(d.diffStat.filesChanged).toBe(5);
  expect(d.patch).toContain('deleted file mode 100644');
});

test('a plain folder restored only where nothing is', async () => {
  const proj = template(path.join(dir, 'proj'));
  const withRemote = deps({ checkpointRemote: remote });
  const c0 = await checkpoint({ sessionId: 'p', path: proj, run: 'r', turn: 0 }, withRemote);
  agentTurn(proj);
  const c1 = await checkpoint({ sessionId: 'p', path: proj, run: 'r', turn: 1, parent: c0.commit }, withRemote);
  const want = files(proj);

  loseHost(proj);
  const input = {
    sessionId: 'p',
    path: proj,
    kind: 'cwd' as const,
    checkpoint: { commit: c1.commit, ref: c1.ref },
    baseCheckpoint: { commit: c0.commit, ref: c0.ref },
  };
  const r = await restore(input, withRemote);
  expect(r.path).toBe(proj);
  expect(files(proj)).toEqual(want);
  // The base is checkpoint 0's files.
  expect(git(root, '--git-dir', sessionPaths(root, 'p').gitDir, 'rev-parse', `${r.base}^{tree}`)).toBe(
    git(root, '--git-dir', repo(), 'rev-parse', `${c0.commit}^{tree}`),
  );
  expect(await restore(input, withRemote)).toEqual(r);

  // Another session's folder there: refused, not retried, nothing touched.
  const acts = activities(root, undefined, {}, remote);
  const e = await failure(acts.restoreWorkspace({ ...input, sessionId: 'q' }));
  expect(e.type).toBe('WorkspaceRestoreRefused');
  expect(e.nonRetryable).toBe(true);
  expect(e.message).toContain(proj);
  expect(files(proj)).toEqual(want);
  // An empty folder is fine.
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty);
  expect((await acts.restoreWorkspace({ ...input, sessionId: 'q', path: empty })).path).toBe(empty);
  expect(files(empty)).toEqual(want);
});

test('a checkpoint neither here nor fetchable: CheckpointUnavailable, not retried', async () => {
  const commit = 'a'.repeat(40);
  const ref = 'refs/checkpoints/gone-0123456789/r/3';
  const input = { sessionId: 'gone', path: path.join(dir, 'gone'), kind: 'cwd' as const, checkpoint: { commit, ref } };
  const none = await failure(activities(root).restoreWorkspace(input));
  expect(none.type).toBe('CheckpointUnavailable');
  expect(none.nonRetryable).toBe(true);
  expect(none.message).toContain('session gone');
  expect(none.message).toContain(ref);
  expect(none.message).toContain('DURABLE_AGENT_CHECKPOINT_REMOTE is not set');
  const missing = await failure(activities(root, undefined, {}, remote).restoreWorkspace(input));
  expect(missing.type).toBe('CheckpointUnavailable');
  expect(missing.message).toContain('not in the checkpoint remote');
  expect(fs.existsSync(input.path)).toBe(false);
});

test('refs safe for any session id; a remote that cannot be reached fails the push, not the checkpoint', async () => {
  const proj = template(path.join(dir, 'proj'));
  const id = 'batch/7:job 3:..x';
  const ok = await checkpoint({ sessionId: id, path: proj, run: 'run/a:b', turn: 0 }, deps({ checkpointRemote: remote }));
  expect(ok.ref).toMatch(/^refs\/checkpoints\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+\/0$/);
  expect(git(dir, 'check-ref-format', ok.ref)).toBe('');
  expect(git(dir, '--git-dir', remote, 'rev-parse', ok.ref)).toBe(ok.commit);

  const bad = 'https://user:s3cret@127.0.0.1:9/checkpoints.git';
  write(path.join(proj, 'more.txt'), 'more\n');
  const r: CheckpointResult = await checkpoint(
    { sessionId: id, path: proj, run: 'run/a:b', turn: 1, parent: ok.commit },
    deps({ checkpointRemote: bad }),
  );
  expect(r).toMatchObject({ changed: true, pushed: 'failed' });
  expect(r.pushError).toMatch(/git push to the checkpoint remote failed: .+/);
  expect(r.pushError).not.toContain('s3cret');
  expect(git(root, '--git-dir', repo(), 'rev-parse', r.ref)).toBe(r.commit);
});

test('provisioning from another session’s checkpoint, fetched from the remote', async () => {
  const src = await provision('origin-session', { copy: template(path.join(dir, 'tpl')) }, deps());
  agentTurn(src.path);
  const c = await checkpoint({ sessionId: 'origin-session', path: src.path, run: 'r', turn: 4 }, deps({ checkpointRemote: remote }));
  const want = files(src.path);
  fs.rmSync(repo(), { recursive: true, force: true });

  const from = { session: 'origin-session', turn: 4, commit: c.commit, ref: c.ref };
  const acts = activities(root, undefined, {}, remote);
  const ws = await acts.provisionWorkspace({ sessionId: 'fork', workspace: { checkpoint: from } });
  expect(ws.kind).toBe('copy');
  expect(files(ws.path)).toEqual(want);
  const meta = JSON.parse(fs.readFileSync(sessionPaths(root, 'fork').meta, 'utf8')) as { source: unknown };
  expect(meta.source).toEqual({ checkpoint: from });
  expect((await acts.workspaceDiff({ sessionId: 'fork', path: ws.path, base: ws.base })).diffStat.filesChanged).toBe(0);
  write(path.join(ws.path, 'fork.txt'), 'forked\n');
  expect((await acts.workspaceDiff({ sessionId: 'fork', path: ws.path, base: ws.base })).diffStat.filesChanged).toBe(1);
  // Its own checkpoint 0 is the files as it found them.
  const f0 = await checkpoint({ sessionId: 'fork', path: ws.path, run: 'f', turn: 0 }, deps());
  expect(git(root, '--git-dir', repo(), 'diff-tree', '--name-only', '-r', c.commit, f0.commit)).toBe('fork.txt');

  const e = await failure(
    activities(root).provisionWorkspace({ sessionId: 'fork2', workspace: { checkpoint: { ...from, commit: 'b'.repeat(40) } } }),
  );
  expect(e.type).toBe('WorkspaceSetupError');
  expect(e.message).toContain('DURABLE_AGENT_CHECKPOINT_REMOTE is not set');
});
