/** provisionWorkspace with real git in temp dirs (docs/ARCHITECTURE.md#workspaces). */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { hostQueueFor, workspacesRoot } from '../../src/activities/workspace';
import { mirrorPaths, sessionPaths } from '../../src/activities/workspace/layout';
import { activities, countingGit, git, makeOrigin, type Origin } from './helpers';

jest.setTimeout(60_000);

let dir: string;
let root: string;
let origin: Origin;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'da-ws-')));
  root = path.join(dir, 'root');
  origin = makeOrigin(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const failure = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApplicationFailure);
  return e as ApplicationFailure;
};

describe('the root and the host queue', () => {
  test('DURABLE_AGENT_WORKSPACES wins, else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(workspacesRoot({ DURABLE_AGENT_WORKSPACES: '/srv/ws' }, '/home/u')).toBe('/srv/ws');
    expect(workspacesRoot({ XDG_CACHE_HOME: '/c' }, '/home/u')).toBe('/c/durable-agent/workspaces');
    expect(workspacesRoot({}, '/home/u')).toBe('/home/u/.cache/durable-agent/workspaces');
  });
  test('the host queue is the tools queue at the host', () => {
    expect(hostQueueFor('agent-tools', 'build-1')).toBe('agent-tools@build-1');
    expect(hostQueueFor('agent-tools@build-1', 'build-1')).toBe('agent-tools@build-1');
  });
});

describe('git workspaces', () => {
  test.each([
    ['a branch', 'feature', 'feature'],
    ['a tag', 'v1', 'tagged'],
    ['a commit', 'SHA', 'tagged'],
  ] as const)('cloned at %s', async (_what, ref, expected) => {
    const want = origin[expected];
    const ws = await activities(root).provisionWorkspace({
      sessionId: 'sess/1:a',
      workspace: { git: origin.url, ref: ref === 'SHA' ? want : ref },
    });
    expect(ws).toMatchObject({ kind: 'git', base: want, host: 'host-1', hostQueue: 'agent-tools@host-1' });
    expect(ws.path).toBe(sessionPaths(root, 'sess/1:a').folder);
    expect(git(ws.path, 'rev-parse', 'HEAD')).toBe(want);
    expect(git(ws.path, 'status', '--porcelain')).toBe('');
    // origin is the real URL, not the mirror; the clone borrows the mirror's objects.
    expect(git(ws.path, 'remote', 'get-url', 'origin')).toBe(origin.url);
    expect(fs.readFileSync(path.join(ws.path, '.git/objects/info/alternates'), 'utf8').trim()).toBe(
      path.join(mirrorPaths(root, origin.url).dir, 'objects'),
    );
    // Not a worktree: its own .git directory.
    expect(fs.statSync(path.join(ws.path, '.git')).isDirectory()).toBe(true);
    if (ref === 'feature') expect(git(ws.path, 'symbolic-ref', '--short', 'HEAD')).toBe('feature');
    // Nothing of the host's own in the folder.
    expect(fs.readdirSync(ws.path).sort()).toEqual(
      ref === 'feature' ? ['.git', '.gitignore', 'a.txt', 'f.txt'] : ['.git', '.gitignore', 'a.txt'],
    );
  });

  test('no ref: the remote HEAD', async () => {
    const ws = await activities(root).provisionWorkspace({ sessionId: 's', workspace: { git: origin.url } });
    expect(ws.base).toBe(origin.main);
  });

  test('the agent commits in its folder: origin and mirror untouched', async () => {
    const ws = await activities(root).provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
    const mirror = mirrorPaths(root, origin.url).dir;
    const before = { origin: git(origin.url, 'show-ref'), mirror: git(mirror, 'show-ref'), objects: git(mirror, 'count-objects', '-v') };
    fs.writeFileSync(path.join(ws.path, 'a.txt'), 'agent\n');
    git(ws.path, 'commit', '--quiet', '-am', 'agent');
    git(ws.path, 'checkout', '--quiet', '-b', 'agent-branch');
    git(ws.path, 'stash', 'list');
    expect({ origin: git(origin.url, 'show-ref'), mirror: git(mirror, 'show-ref'), objects: git(mirror, 'count-objects', '-v') }).toEqual(
      before,
    );
    expect(git(origin.url, 'rev-parse', 'main')).toBe(origin.main);
  });

  test('a second session on the same repository does not clone it again', async () => {
    const counter = countingGit();
    const acts = activities(root, counter.git);
    await acts.provisionWorkspace({ sessionId: 's1', workspace: { git: origin.url, ref: origin.main } });
    const ino = fs.statSync(mirrorPaths(root, origin.url).dir).ino;
    await acts.provisionWorkspace({ sessionId: 's2', workspace: { git: origin.url, ref: origin.tagged } });
    expect(counter.clones()).toBe(1);
    // A commit already in the mirror needs no fetch either.
    expect(counter.fetches()).toBe(0);
    expect(fs.statSync(mirrorPaths(root, origin.url).dir).ino).toBe(ino);
  });

  test('five sessions at once on one URL: one clone', async () => {
    const counter = countingGit();
    const acts = activities(root, counter.git);
    const all = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => acts.provisionWorkspace({ sessionId: `s${i}`, workspace: { git: origin.url, ref: 'main' } })),
    );
    expect(counter.clones()).toBe(1);
    expect(counter.fetches()).toBe(0);
    expect(new Set(all.map((w) => w.path)).size).toBe(5);
    for (const w of all) expect(git(w.path, 'rev-parse', 'HEAD')).toBe(origin.main);
  });

  test('a ref missing from the mirror: fetched, not cloned again', async () => {
    const counter = countingGit();
    const acts = activities(root, counter.git);
    await acts.provisionWorkspace({ sessionId: 's1', workspace: { git: origin.url, ref: 'main' } });
    const work = path.join(dir, 'work');
    git(work, 'checkout', '--quiet', '-b', 'later');
    fs.writeFileSync(path.join(work, 'l.txt'), 'later\n');
    git(work, 'add', '-A');
    git(work, 'commit', '--quiet', '-m', 'later');
    git(work, 'push', '--quiet', origin.url, 'later');
    const ws = await acts.provisionWorkspace({ sessionId: 's2', workspace: { git: origin.url, ref: 'later' } });
    expect(git(ws.path, 'rev-parse', 'HEAD')).toBe(git(work, 'rev-parse', 'HEAD'));
    expect(counter.clones()).toBe(1);
    expect(counter.fetches()).toBe(1);
  });

  test('a branch is fetched again once the last fetch is over a minute old; offline, the mirror stands', async () => {
    const counter = countingGit();
    const acts = activities(root, counter.git);
    const stamp = mirrorPaths(root, origin.url).stamp;
    const age = () => {
      const old = new Date(Date.now() - 120_000);
      fs.utimesSync(stamp, old, old);
    };
    await acts.provisionWorkspace({ sessionId: 's1', workspace: { git: origin.url, ref: 'main' } });
    const work = path.join(dir, 'work');
    git(work, 'checkout', '--quiet', 'main');
    fs.writeFileSync(path.join(work, 'a.txt'), 'three\n');
    git(work, 'commit', '--quiet', '-am', 'three');
    git(work, 'push', '--quiet', origin.url, 'main');
    const moved = git(work, 'rev-parse', 'HEAD');
    // Fetched under a minute ago: the mirror's main.
    expect((await acts.provisionWorkspace({ sessionId: 's2', workspace: { git: origin.url, ref: 'main' } })).base).toBe(origin.main);
    expect(counter.fetches()).toBe(0);
    age();
    expect((await acts.provisionWorkspace({ sessionId: 's3', workspace: { git: origin.url, ref: 'main' } })).base).toBe(moved);
    expect(counter.fetches()).toBe(1);
    fs.renameSync(origin.url, `${origin.url}.away`);
    age();
    expect((await acts.provisionWorkspace({ sessionId: 's4', workspace: { git: origin.url, ref: 'main' } })).base).toBe(moved);
    expect(counter.fetches()).toBe(2);
    expect(counter.clones()).toBe(1);
  });

  test('a retry of a finished provisioning returns the same answer and remakes nothing', async () => {
    const acts = activities(root);
    const first = await acts.provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
    fs.writeFileSync(path.join(first.path, 'agent.txt'), 'work in progress\n');
    const again = await acts.provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
    expect(again).toEqual(first);
    expect(fs.readFileSync(path.join(first.path, 'agent.txt'), 'utf8')).toBe('work in progress\n');
  });

  test('a repository that cannot be cloned: WorkspaceSetupError naming it and the ref, not retried', async () => {
    const url = 'https://user:s3cret@127.0.0.1:9/nope.git';
    const e = await failure(activities(root).provisionWorkspace({ sessionId: 's', workspace: { git: url, ref: 'dev' } }));
    expect(e.type).toBe('WorkspaceSetupError');
    expect(e.nonRetryable).toBe(true);
    expect(e.message).toContain('https://***@127.0.0.1:9/nope.git at dev');
    expect(e.message).not.toContain('s3cret');
    expect(fs.readdirSync(path.join(root, 'sessions'))).toEqual([]);
  });

  test('a ref that does not exist: WorkspaceSetupError naming it and the URL', async () => {
    const e = await failure(activities(root).provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'no-such-branch' } }));
    expect(e.type).toBe('WorkspaceSetupError');
    expect(e.nonRetryable).toBe(true);
    expect(e.message).toBe(`workspace: ref no-such-branch does not exist in ${origin.url}`);
    expect(fs.readdirSync(path.join(root, 'sessions'))).toEqual([]);
  });

  test('a worker killed mid-provision: the next attempt makes a complete folder, the half-made one is never used', async () => {
    const marker = path.join(dir, 'paused');
    const tsx = path.join(__dirname, '../../node_modules/.bin/tsx');
    const child = spawn(tsx, [path.join(__dirname, 'provision-child.ts'), root, 's', origin.url, marker], { stdio: 'ignore' });
    const deadline = Date.now() + 45_000;
    while (!fs.existsSync(marker)) {
      if (Date.now() > deadline) throw new Error('the child never reached the pause');
      await new Promise((r) => setTimeout(r, 50));
    }
    // The process that provisions (tsx runs the script in a node process of its own).
    const pid = Number(fs.readFileSync(marker, 'utf8'));
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(() => process.kill(pid, 0)).toThrow();
    const p = sessionPaths(root, 's');
    const sessions = path.join(root, 'sessions');
    // What the crash left: a temp folder, the metadata, the lock; no folder in place.
    const left = fs.readdirSync(sessions);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^\.tmp-/);
    expect(fs.existsSync(p.folder)).toBe(false);
    expect(fs.existsSync(p.lock)).toBe(true);
    // Break the leftover so that using it would show.
    fs.rmSync(path.join(sessions, left[0]!, 'a.txt'));

    const ws = await activities(root).provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
    expect(ws.path).toBe(p.folder);
    expect(fs.readdirSync(sessions)).toEqual([path.basename(p.folder)]);
    expect(fs.readFileSync(path.join(ws.path, 'a.txt'), 'utf8')).toBe('two\n');
    expect(git(ws.path, 'status', '--porcelain')).toBe('');
  });
});

describe('copy workspaces', () => {
  let template: string;
  beforeEach(() => {
    template = path.join(dir, 'template');
    fs.mkdirSync(path.join(template, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(template, 'sub/x.txt'), 'x\n');
    fs.symlinkSync('sub/x.txt', path.join(template, 'link'));
  });

  test('copied with symlinks as symlinks, the base committed outside the folder', async () => {
    const ws = await activities(root).provisionWorkspace({ sessionId: 'c', workspace: { copy: template } });
    expect(ws.kind).toBe('copy');
    expect(fs.readFileSync(path.join(ws.path, 'sub/x.txt'), 'utf8')).toBe('x\n');
    expect(fs.readlinkSync(path.join(ws.path, 'link'))).toBe('sub/x.txt');
    expect(fs.readdirSync(ws.path).sort()).toEqual(['link', 'sub']);
    const gitDir = sessionPaths(root, 'c').gitDir;
    expect(git(dir, '--git-dir', gitDir, 'ls-tree', '-r', '--name-only', ws.base).split('\n')).toEqual(['link', 'sub/x.txt']);
  });

  test.each([
    ['does not exist', (t: string) => path.join(t, 'missing')],
    ['is not a directory', (t: string) => path.join(t, 'sub/x.txt')],
  ])('a folder that %s is refused', async (what, of) => {
    const e = await failure(activities(root).provisionWorkspace({ sessionId: 'c', workspace: { copy: of(template) } }));
    expect(e.type).toBe('WorkspaceSetupError');
    expect(e.message).toBe(`workspace: cannot copy ${of(template)} ${what}`);
  });
});
