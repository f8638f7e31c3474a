/**
 * What the agent changed (docs/ARCHITECTURE.md#workspaces): the folder against its base, new files
 * included and ignored ones not, as `git add -A` into a private index would record it. The git
 * commands run with a git dir of the tools host's own (outside the folder; for a clone, borrowing
 * the clone's and the mirror's objects), so the session's index, branches, stash and objects are
 * untouched, and nothing the agent wrote in its `.git/config` (a filter, an fsmonitor) runs here.
 */
import { isUtf8 } from 'node:buffer';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { MAX_INLINE_PATCH_BYTES, MAX_PATCH_BYTES, PATCH_PART_BYTES, type DiffStat, type WorkspaceDiff } from '../../shared/workspace';
import { gitText, type GitRunner } from './git';
import { sessionPaths, type SessionMeta, type SessionPaths } from './layout';

export interface DiffDeps {
  root: string;
  git: GitRunner;
  signal?: AbortSignal;
}

export class NoWorkspace extends Error {}

async function readMeta(p: SessionPaths, sessionId: string): Promise<SessionMeta> {
  let meta: SessionMeta;
  try {
    meta = JSON.parse(await fsp.readFile(p.meta, 'utf8')) as SessionMeta;
  } catch {
    throw new NoWorkspace(`no workspace of session ${sessionId} on this host (${p.meta})`);
  }
  if (meta.sessionId !== sessionId) throw new NoWorkspace(`${p.meta} belongs to session ${meta.sessionId}, not ${sessionId}`);
  return meta;
}

/** For a clone: a bare git dir of our own whose objects are the clone's and the mirror's. */
async function diffGitDir(meta: SessionMeta, p: SessionPaths, { git, signal }: DiffDeps): Promise<void> {
  if (meta.kind === 'copy') return;
  await fsp.mkdir(p.gitDir, { recursive: true });
  if (!(await fsp.stat(path.join(p.gitDir, 'HEAD')).catch(() => undefined))) {
    await gitText(git, { args: ['init', '--quiet', '--bare', p.gitDir], signal });
  }
  const alternates = [path.join(meta.path, '.git', 'objects'), ...(meta.mirror ? [path.join(meta.mirror, 'objects')] : [])];
  await fsp.writeFile(path.join(p.gitDir, 'objects', 'info', 'alternates'), `${alternates.join('\n')}\n`);
  // The clone's own ignore list, read as data (the file, never its config).
  const exclude = await fsp.readFile(path.join(meta.path, '.git', 'info', 'exclude')).catch(() => Buffer.alloc(0));
  await fsp.mkdir(path.join(p.gitDir, 'info'), { recursive: true });
  await fsp.writeFile(path.join(p.gitDir, 'info', 'exclude'), exclude);
}

/** `N files changed, N insertions(+), N deletions(-)`, any part absent when zero. */
export function parseShortstat(text: string): DiffStat {
  const n = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  return { filesChanged: n(/(\d+) files? changed/), insertions: n(/(\d+) insertions?\(\+\)/), deletions: n(/(\d+) deletions?\(-\)/) };
}

export async function takeDiff(input: { sessionId: string; base: string }, deps: DiffDeps): Promise<WorkspaceDiff> {
  const { git, signal } = deps;
  const p = sessionPaths(deps.root, input.sessionId);
  const meta = await readMeta(p, input.sessionId);
  await diffGitDir(meta, p, deps);
  const index = path.join(p.gitDir, `diff-index-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  const env = { GIT_DIR: p.gitDir, GIT_WORK_TREE: meta.path, GIT_INDEX_FILE: index };
  // Fixed output whatever the worker's git config says: a patch `git apply` takes at -p1.
  const diffArgs = [
    'diff',
    '--cached',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-relative',
    '--src-prefix=a/',
    '--dst-prefix=b/',
  ];
  try {
    await gitText(git, { args: ['read-tree', input.base], cwd: meta.path, env, signal });
    await gitText(git, { args: ['add', '-A'], cwd: meta.path, env, signal });
    const r = await git({ args: [...diffArgs, '--binary', input.base], cwd: meta.path, env, signal, stdoutTo: p.patch });
    if (r.code !== 0) throw new Error(`git diff failed (exit ${r.code}): ${r.stderr.trim()}`);
    const diffStat = parseShortstat(await gitText(git, { args: [...diffArgs, '--shortstat', input.base], cwd: meta.path, env, signal }));
    const patchBytes = (await fsp.stat(p.patch)).size;
    const out: WorkspaceDiff = { base: input.base, diffStat, patchBytes, patchFile: p.patch };
    if (patchBytes > MAX_PATCH_BYTES) return { ...out, patchTruncated: true };
    if (patchBytes <= MAX_INLINE_PATCH_BYTES) {
      const bytes = await fsp.readFile(p.patch);
      // A text file in another encoding makes the patch not UTF-8: a string would change its bytes.
      if (isUtf8(bytes)) return { ...out, patch: bytes.toString('utf8') };
    }
    return { ...out, patchParts: Math.max(1, Math.ceil(patchBytes / PATCH_PART_BYTES)) };
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/** Bytes [part × PATCH_PART_BYTES, +PATCH_PART_BYTES) of the stored patch, base64. */
export async function readPart(input: { sessionId: string; part: number }, root: string): Promise<string> {
  const p = sessionPaths(root, input.sessionId);
  const fh = await fsp.open(p.patch, 'r').catch(() => {
    throw new NoWorkspace(`no patch of session ${input.sessionId} on this host (${p.patch})`);
  });
  try {
    const size = (await fh.stat()).size;
    const parts = Math.ceil(size / PATCH_PART_BYTES);
    if (!Number.isInteger(input.part) || input.part < 0 || input.part >= parts) {
      throw new RangeError(`part ${input.part}: the patch has ${parts} parts (0–${parts - 1})`);
    }
    const buf = Buffer.alloc(Math.min(PATCH_PART_BYTES, size - input.part * PATCH_PART_BYTES));
    await fh.read(buf, 0, buf.length, input.part * PATCH_PART_BYTES);
    return buf.toString('base64');
  } finally {
    await fh.close();
  }
}
