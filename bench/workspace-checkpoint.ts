/**
 * Benchmark 16 — what a per-turn workspace checkpoint costs the tools host
 * (docs/ARCHITECTURE.md#workspaces, checkpoints): a repository of `--files` files in a small-file
 * mix (80% ~2 KB, 18% ~12 KB, 2% ~100 KB: ~55 MB for 10k), provisioned as a `{git}` workspace;
 * then checkpoint 0 (every file hashed and written into the host's checkpoint repository), and
 * `--turns` turns each changing 1, 10 and 100 files, plus turns changing none; once with no
 * checkpoint remote and once with a bare remote on the same disk. Then the host is "lost" (the
 * folder, the checkpoint repository and the session's metadata removed, the mirror kept) and the
 * folder restored from the remote, as a git workspace and as a plain folder. No Temporal server:
 * the activities' own work.
 *
 *   npx tsx bench/workspace-checkpoint.ts [--files 10000] [--turns 20] [--restores 3] [--in DIR]
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkpoint, type CheckpointDeps } from '../src/activities/workspace/checkpoint';
import { runGit } from '../src/activities/workspace/git';
import { checkpointRepoPaths, sessionPaths } from '../src/activities/workspace/layout';
import { provision } from '../src/activities/workspace/provision';
import { restore } from '../src/activities/workspace/restore';
import type { CheckpointResult } from '../src/shared/checkpoint';
import { load, machine, median, ms, percentile, table } from './lib';

/** Code-like text of about `bytes`, different per file (so it compresses as source does, not to nothing). */
function text(i: number, bytes: number): string {
  const lines: string[] = [`// file ${i}`];
  let size = lines[0]!.length + 1;
  for (let n = 0; size < bytes; n++) {
    const line = `export const v${i}_${n} = compute(${(i * 7919 + n * 104729) % 1000003}, "${(n * 2654435761) % 4294967296}");`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

const sizeOf = (i: number) => (i % 50 === 0 ? 100_000 : i % 5 === 0 ? 12_000 : 2_000);

function makeRepository(dir: string, files: number): { url: string; bytes: number } {
  const tree = path.join(dir, 'tree');
  let bytes = 0;
  for (let i = 0; i < files; i++) {
    const folder = path.join(tree, `pkg${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    const t = text(i, sizeOf(i));
    bytes += t.length;
    writeFileSync(path.join(folder, `file${i}.ts`), t);
  }
  const url = path.join(dir, 'origin.git');
  const env = {
    ...process.env,
    GIT_DIR: url,
    GIT_WORK_TREE: tree,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b',
  };
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', url]);
  execFileSync('git', ['add', '-A'], { env });
  execFileSync('git', ['commit', '--quiet', '-m', 'tree'], { env });
  rmSync(tree, { recursive: true, force: true });
  return { url, bytes };
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, r];
}

interface Run {
  first: number;
  perTurn: Map<number, number[]>;
  pushed: Set<string>;
  last: CheckpointResult;
  checkpoint0: CheckpointResult;
  provisionMs: number;
  folder: string;
  base: string;
}

/** One session: provisioned, checkpoint 0, then turns changing `k` files each. */
async function session(root: string, url: string, files: number, turns: number, remote: string | undefined): Promise<Run> {
  const deps: CheckpointDeps = { root, git: runGit, ...(remote ? { checkpointRemote: remote } : {}) };
  const sessionId = 'bench/session:1';
  const [provisionMs, meta] = await timed(() => provision(sessionId, { git: url, ref: 'main' }, deps));
  execFileSync('sync'); // provisioning's writes are not checkpoint 0's cost
  const [first, c0] = await timed(() => checkpoint({ sessionId, path: meta.path, run: 'run-1', turn: 0 }, deps));
  const perTurn = new Map<number, number[]>();
  const pushed = new Set<string>([c0.pushed]);
  let last = c0;
  let turn = 0;
  let touched = 0;
  for (const k of [0, 1, 10, 100]) {
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      turn++;
      for (let j = 0; j < k; j++) {
        // Spread over the tree, a different file each time.
        const i = (touched++ * 7919) % files;
        appendFileSync(path.join(meta.path, `pkg${Math.floor(i / 100)}`, `file${i}.ts`), `// turn ${turn}\n`);
      }
      const [tMs, r] = await timed(() => checkpoint({ sessionId, path: meta.path, run: 'run-1', turn, parent: last.commit }, deps));
      if (r.changed !== k > 0) throw new Error(`turn ${turn}: changed ${r.changed} with ${k} files changed`);
      pushed.add(r.pushed);
      times.push(tMs);
      last = r;
    }
    perTurn.set(k, times);
  }
  return { first, perTurn, pushed, last, checkpoint0: c0, provisionMs, folder: meta.path, base: meta.base };
}

function duSize(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? duSize(p) : statSync(p).size;
  }
  return total;
}

export async function workspaceCheckpoint(opts: { files: number; turns: number; restores: number; in: string }): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(opts.in, 'da-bench-ckpt-')));
  const loadBefore = load();
  try {
    const [makeMs, { url, bytes }] = await timed(async () => makeRepository(dir, opts.files));
    const local = await session(path.join(dir, 'root-local'), url, opts.files, opts.turns, undefined);
    const remote = path.join(dir, 'checkpoints-remote.git');
    execFileSync('git', ['init', '--quiet', '--bare', remote]);
    const rootR = path.join(dir, 'root-remote');
    const pushing = await session(rootR, url, opts.files, opts.turns, remote);
    if ([...pushing.pushed].some((p) => p !== 'remote')) throw new Error(`pushes: ${[...pushing.pushed].join(', ')}`);

    // Another host: the same root, nothing of the session's left (the repository's mirror kept).
    const deps: CheckpointDeps = { root: rootR, git: runGit, checkpointRemote: remote };
    const p = sessionPaths(rootR, 'bench/session:1');
    const lose = () => {
      for (const f of [p.folder, p.meta, p.gitDir, p.ckptIndex, checkpointRepoPaths(rootR).dir])
        rmSync(f, { recursive: true, force: true });
    };
    const c = { commit: pushing.last.commit, ref: pushing.last.ref };
    const gitRestores: number[] = [];
    const plainRestores: number[] = [];
    const plain = path.join(dir, 'plain');
    // Each timing starts with nothing left to write back from the step before it (the removals).
    const settle = () => execFileSync('sync');
    for (let i = 0; i < opts.restores; i++) {
      lose();
      settle();
      const [t] = await timed(() =>
        restore(
          {
            sessionId: 'bench/session:1',
            path: p.folder,
            kind: 'git',
            source: { git: url, ref: 'main' },
            base: pushing.base,
            checkpoint: c,
          },
          deps,
        ),
      );
      gitRestores.push(t);
      lose();
      rmSync(plain, { recursive: true, force: true });
      settle();
      const [t2] = await timed(() =>
        restore(
          {
            sessionId: 'bench/session:1',
            path: plain,
            kind: 'cwd',
            checkpoint: c,
            baseCheckpoint: { commit: pushing.checkpoint0.commit, ref: pushing.checkpoint0.ref },
          },
          deps,
        ),
      );
      plainRestores.push(t2);
    }
    // The floor: what writing the same files costs this file system, without git.
    const cps: number[] = [];
    for (let i = 0; i < opts.restores; i++) {
      settle();
      const [t] = await timed(async () => execFileSync('cp', ['-a', plain, path.join(dir, `cp-${i}`)]));
      cps.push(t);
    }
    const repoBytes = duSize(checkpointRepoPaths(path.join(dir, 'root-local')).dir);

    console.log(`\n## 16. Workspace checkpoints (${opts.files} files, ${(bytes / 2 ** 20).toFixed(0)} MiB; ${opts.turns} turns per row)`);
    console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after; in ${opts.in}; making the repository took ${ms(makeMs)}`);
    console.log(
      `provisioning the {git} workspace: ${ms(local.provisionMs)} and ${ms(pushing.provisionMs)}; ` +
        `the local checkpoint repository after ${1 + 4 * opts.turns} checkpoints: ${(repoBytes / 2 ** 20).toFixed(0)} MiB`,
    );
    const row = (what: string, a: number[], b: number[]) => [
      what,
      ms(median(a)),
      ms(percentile(a, 90)),
      ms(median(b)),
      ms(percentile(b, 90)),
      a.length,
    ];
    console.log(
      table([
        ['checkpoint', 'no remote: median', 'p90', 'bare remote on disk: median', 'p90', 'n'],
        row('turn 0 (every file hashed and written)', [local.first], [pushing.first]),
        row('a turn changing no file (changed: false)', local.perTurn.get(0)!, pushing.perTurn.get(0)!),
        row('a turn changing 1 file', local.perTurn.get(1)!, pushing.perTurn.get(1)!),
        row('a turn changing 10 files', local.perTurn.get(10)!, pushing.perTurn.get(10)!),
        row('a turn changing 100 files', local.perTurn.get(100)!, pushing.perTurn.get(100)!),
      ]),
    );
    console.log(
      table([
        ['restore on another host (fetched from the remote)', 'median', 'p90', 'n'],
        [
          'git workspace (clone --shared from the mirror at base, checkpoint files)',
          ms(median(gitRestores)),
          ms(percentile(gitRestores, 90)),
          gitRestores.length,
        ],
        [
          'plain folder (checkpoint files, checkpoint 0 as the base)',
          ms(median(plainRestores)),
          ms(percentile(plainRestores, 90)),
          plainRestores.length,
        ],
        ['cp -a of the restored folder (writing the files, no git)', ms(median(cps)), ms(percentile(cps, 90)), cps.length],
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      files: { type: 'string', default: '10000' },
      turns: { type: 'string', default: '20' },
      restores: { type: 'string', default: '3' },
      in: { type: 'string', default: tmpdir() },
    },
  });
  workspaceCheckpoint({ files: Number(values.files), turns: Number(values.turns), restores: Number(values.restores), in: values.in }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
