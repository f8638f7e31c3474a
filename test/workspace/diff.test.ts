/** workspaceDiff and readPatchPart with real git: the patch applies to the base (docs/ARCHITECTURE.md#workspaces). */
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MAX_INLINE_PATCH_BYTES, PATCH_PART_BYTES, type WorkspaceActivities, type WorkspaceDiff } from '../../src/shared/workspace';
import { parseShortstat } from '../../src/activities/workspace/diff';
import { sessionPaths } from '../../src/activities/workspace/layout';
import { activities, git, makeOrigin, type Origin } from './helpers';

jest.setTimeout(60_000);

let dir: string;
let root: string;
let origin: Origin;
let acts: WorkspaceActivities;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'da-wsd-')));
  root = path.join(dir, 'root');
  origin = makeOrigin(dir);
  acts = activities(root);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The whole patch, inline or from its parts. */
async function patchOf(sessionId: string, d: WorkspaceDiff): Promise<Buffer> {
  if (d.patch !== undefined) return Buffer.from(d.patch, 'utf8');
  const parts: Buffer[] = [];
  for (let part = 0; part < d.patchParts!; part++) parts.push(Buffer.from(await acts.readPatchPart({ sessionId, part }), 'base64'));
  return Buffer.concat(parts);
}

/** Every file under `d` but .git, with its bytes (symlinks as their target). */
function tree(d: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(d, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.name === '.git') continue;
      if (e.isDirectory()) walk(r);
      else out[r] = e.isSymbolicLink() ? `-> ${fs.readlinkSync(path.join(d, r))}` : fs.readFileSync(path.join(d, r)).toString('base64');
    }
  };
  walk('');
  return out;
}

/** Clone the base elsewhere and `git apply` the patch there. */
function applyToBase(url: string, base: string, patch: Buffer, name: string): string {
  const other = path.join(dir, name);
  git(dir, 'clone', '--quiet', url, other);
  git(other, 'checkout', '--quiet', '--detach', base);
  const file = path.join(dir, `${name}.patch`);
  fs.writeFileSync(file, patch);
  if (patch.length) git(other, 'apply', '--binary', file);
  return other;
}

const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0, 128]);

test('new, modified, deleted, binary and symlinked files: the patch applies to the base and gives the folder', async () => {
  const ws = await acts.provisionWorkspace({ sessionId: 'd', workspace: { git: origin.url, ref: 'feature' } });
  fs.writeFileSync(path.join(ws.path, 'a.txt'), 'changed\nmore\n');
  fs.rmSync(path.join(ws.path, 'f.txt'));
  fs.mkdirSync(path.join(ws.path, 'new/deep'), { recursive: true });
  fs.writeFileSync(path.join(ws.path, 'new/deep/n.txt'), 'new file\n');
  fs.writeFileSync(path.join(ws.path, 'blob.bin'), binary);
  fs.symlinkSync('a.txt', path.join(ws.path, 'link'));
  // Ignored: not in the patch.
  fs.mkdirSync(path.join(ws.path, 'build'));
  fs.writeFileSync(path.join(ws.path, 'build/out.o'), 'ignored\n');
  // Some of it committed by the agent: the diff is against the base, not HEAD.
  git(ws.path, 'add', 'a.txt');
  git(ws.path, 'commit', '--quiet', '-m', 'agent');
  const headBefore = git(ws.path, 'rev-parse', 'HEAD');
  const indexBefore = fs.readFileSync(path.join(ws.path, '.git/index'));

  const d = await acts.workspaceDiff({ sessionId: 'd', path: ws.path, base: ws.base });
  expect(d).toMatchObject({ base: origin.feature, diffStat: { filesChanged: 5 }, patchFile: sessionPaths(root, 'd').patch });
  expect(d.diffStat.insertions).toBe(4);
  expect(d.diffStat.deletions).toBe(2);
  expect(d.patch).toContain('GIT binary patch');
  expect(d.patch).not.toContain('build/out.o');
  expect(d.patchBytes).toBe(Buffer.byteLength(d.patch!));
  expect(fs.readFileSync(d.patchFile, 'utf8')).toBe(d.patch);

  // The session's repository is as it was: index, HEAD, no stash, untracked files untracked.
  expect(fs.readFileSync(path.join(ws.path, '.git/index'))).toEqual(indexBefore);
  expect(git(ws.path, 'rev-parse', 'HEAD')).toBe(headBefore);
  expect(git(ws.path, 'stash', 'list')).toBe('');
  expect(git(ws.path, 'status', '--porcelain')).toContain('?? new/');

  const applied = applyToBase(origin.url, ws.base, await patchOf('d', d), 'applied');
  const { ['build/out.o']: _ignored, ...expected } = tree(ws.path);
  expect(tree(applied)).toEqual(expected);
});

test('nothing changed: an empty patch', async () => {
  const ws = await acts.provisionWorkspace({ sessionId: 'd', workspace: { git: origin.url, ref: 'main' } });
  const d = await acts.workspaceDiff({ sessionId: 'd', path: ws.path, base: ws.base });
  expect(d).toMatchObject({ patch: '', patchBytes: 0, diffStat: { filesChanged: 0, insertions: 0, deletions: 0 } });
});

test("a filter in the clone's own .git/config does not run on the tools host", async () => {
  const ws = await acts.provisionWorkspace({ sessionId: 'd', workspace: { git: origin.url, ref: 'main' } });
  const pwned = path.join(dir, 'pwned');
  git(ws.path, 'config', 'filter.evil.clean', `touch ${pwned}; cat`);
  git(ws.path, 'config', 'core.fsmonitor', `touch ${pwned}`);
  fs.writeFileSync(path.join(ws.path, '.gitattributes'), '* filter=evil\n');
  fs.writeFileSync(path.join(ws.path, 'a.txt'), 'x\n');
  const d = await acts.workspaceDiff({ sessionId: 'd', path: ws.path, base: ws.base });
  expect(d.diffStat.filesChanged).toBe(2);
  expect(fs.existsSync(pwned)).toBe(false);
});

test('a copy workspace: diffed against its base outside the folder', async () => {
  const template = path.join(dir, 'template');
  fs.mkdirSync(template);
  fs.writeFileSync(path.join(template, 'keep.txt'), 'keep\n');
  fs.writeFileSync(path.join(template, 'gone.txt'), 'gone\n');
  fs.writeFileSync(path.join(template, '.gitignore'), '*.log\n');
  const ws = await acts.provisionWorkspace({ sessionId: 'c', workspace: { copy: template } });
  fs.rmSync(path.join(ws.path, 'gone.txt'));
  fs.writeFileSync(path.join(ws.path, 'keep.txt'), 'kept\n');
  fs.writeFileSync(path.join(ws.path, 'added.bin'), binary);
  fs.writeFileSync(path.join(ws.path, 'run.log'), 'ignored\n');
  const d = await acts.workspaceDiff({ sessionId: 'c', path: ws.path, base: ws.base });
  expect(d.diffStat).toEqual({ filesChanged: 3, insertions: 1, deletions: 2 });
  expect(d.patch).not.toContain('run.log');
  // No .git appeared in the folder.
  expect(fs.existsSync(path.join(ws.path, '.git'))).toBe(false);

  // The template as a repository is the base: the patch applies to it.
  git(template, 'init', '--quiet');
  git(template, 'add', '-A');
  git(template, 'commit', '--quiet', '-m', 'base');
  const applied = applyToBase(template, 'HEAD', await patchOf('c', d), 'applied');
  const { ['run.log']: _ignored, ...expected } = tree(ws.path);
  expect(tree(applied)).toEqual(expected);
});

test('a large patch comes in parts that reassemble to the file and apply', async () => {
  const ws = await acts.provisionWorkspace({ sessionId: 'big', workspace: { git: origin.url, ref: 'main' } });
  // Text with multi-byte characters, so a part boundary may fall inside one.
  const line = 'é€𝄞 large patch line with some text to make it long enough\n';
  const target = PATCH_PART_BYTES * 2 + 12345;
  fs.writeFileSync(path.join(ws.path, 'big.txt'), line.repeat(Math.ceil(target / Buffer.byteLength(line))));
  const d = await acts.workspaceDiff({ sessionId: 'big', path: ws.path, base: ws.base });
  expect(d.patch).toBeUndefined();
  expect(d.patchBytes).toBeGreaterThan(PATCH_PART_BYTES * 2);
  expect(d.patchParts).toBe(Math.ceil(d.patchBytes / PATCH_PART_BYTES));
  expect(d.patchParts).toBe(3);
  const whole = await patchOf('big', d);
  expect(whole.equals(fs.readFileSync(d.patchFile))).toBe(true);
  const applied = applyToBase(origin.url, ws.base, whole, 'applied');
  expect(fs.readFileSync(path.join(applied, 'big.txt')).equals(fs.readFileSync(path.join(ws.path, 'big.txt')))).toBe(true);

  const e = await acts.readPatchPart({ sessionId: 'big', part: 3 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ApplicationFailure);
  expect(e).toMatchObject({ type: 'PatchPartOutOfRange', message: 'part 3: the patch has 3 parts (0–2)' });
});

test('a patch that is not UTF-8 is not inlined: its parts keep its bytes', async () => {
  const ws = await acts.provisionWorkspace({ sessionId: 'l1', workspace: { git: origin.url, ref: 'main' } });
  fs.writeFileSync(path.join(ws.path, 'a.txt'), Buffer.from('caf\xe9\n', 'latin1'));
  const d = await acts.workspaceDiff({ sessionId: 'l1', path: ws.path, base: ws.base });
  expect(d.patchBytes).toBeLessThan(MAX_INLINE_PATCH_BYTES);
  expect(d.patch).toBeUndefined();
  expect(d.patchParts).toBe(1);
  const applied = applyToBase(origin.url, ws.base, await patchOf('l1', d), 'applied');
  expect(fs.readFileSync(path.join(applied, 'a.txt'))).toEqual(Buffer.from('caf\xe9\n', 'latin1'));
});

test('a session without a workspace here: WorkspaceNotFound', async () => {
  const e = await acts.workspaceDiff({ sessionId: 'nobody', path: '/x', base: 'HEAD' }).catch((x: unknown) => x);
  expect(e).toMatchObject({ type: 'WorkspaceNotFound', nonRetryable: true });
});

test('shortstat parsing', () => {
  expect(parseShortstat(' 3 files changed, 10 insertions(+), 2 deletions(-)')).toEqual({ filesChanged: 3, insertions: 10, deletions: 2 });
  expect(parseShortstat(' 1 file changed, 1 deletion(-)')).toEqual({ filesChanged: 1, insertions: 0, deletions: 1 });
  expect(parseShortstat('')).toEqual({ filesChanged: 0, insertions: 0, deletions: 0 });
});
