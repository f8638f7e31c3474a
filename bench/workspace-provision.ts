/**
 * Benchmark 14 — what a workspace costs a job on the tools host (docs/ARCHITECTURE.md#workspaces):
 * a repository of `--files` files (100 per folder, ~1 KB each), then `--jobs` sessions provisioned
 * from it one after another, as a batch's jobs on one host are. The first clones the mirror; the
 * rest `git clone --shared` from it. Then the same tree as `{copy}` workspaces, and the diff of an
 * untouched clone (what every job's end pays). No Temporal server: the activities' own work.
 *
 *   npx tsx bench/workspace-provision.ts [--files 10000] [--jobs 20] [--copies 5] [--diffs 5] [--in DIR]
 *
 * `--in`: where the root and the repository go (default the OS temp dir); writing 10k files is
 * most of a job's time, so the file system decides the figure (`cp -a` of the tree is printed as
 * the floor).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runGit } from '../src/activities/workspace/git';
import { provision } from '../src/activities/workspace/provision';
import { takeDiff } from '../src/activities/workspace/diff';
import { load, machine, median, ms, percentile, table } from './lib';

export function makeRepository(dir: string, files: number): { url: string; tree: string } {
  const tree = path.join(dir, 'tree');
  for (let i = 0; i < files; i++) {
    const folder = path.join(tree, `pkg${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, `file${i}.ts`), `export const v${i} = ${i};\n${'// filler line of text\n'.repeat(40)}`);
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
  return { url, tree };
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, r];
}

export async function workspaceProvision(opts: { files: number; jobs: number; copies: number; diffs: number; in: string }): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(opts.in, 'da-bench-ws-')));
  const root = path.join(dir, 'root');
  const loadBefore = load();
  try {
    const [makeMs, { url, tree }] = await timed(async () => makeRepository(dir, opts.files));
    const deps = { root, git: runGit };
    const perJob: number[] = [];
    let firstMs = 0;
    const made: { sessionId: string; base: string }[] = [];
    for (let i = 0; i < opts.jobs; i++) {
      const sessionId = `job-${i}`;
      const [t, meta] = await timed(() => provision(sessionId, { git: url, ref: 'main' }, deps));
      made.push({ sessionId, base: meta.base });
      if (i === 0) firstMs = t;
      else perJob.push(t);
    }
    const copies: number[] = [];
    for (let i = 0; i < opts.copies; i++) {
      const [t] = await timed(() => provision(`copy-${i}`, { copy: tree }, deps));
      copies.push(t);
    }
    // The floor: what writing the same files costs this file system, without git.
    const cps: number[] = [];
    for (let i = 0; i < opts.copies; i++) {
      const [t] = await timed(async () => execFileSync('cp', ['-a', tree, path.join(dir, `cp-${i}`)]));
      cps.push(t);
    }
    const diffs: number[] = [];
    for (const m of made.slice(0, opts.diffs)) {
      const [t] = await timed(() => takeDiff(m, deps));
      diffs.push(t);
    }
    console.log(`\n## 14. Workspace provisioning (${opts.files} files, ${opts.jobs} git jobs, ${opts.copies} copies, ${opts.diffs} diffs)`);
    console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after; in ${opts.in}; making the repository took ${ms(makeMs)}`);
    console.log(
      table([
        ['what', 'median', 'p90', 'n'],
        ['first job (clones the mirror, then its folder)', ms(firstMs), '', 1],
        ['each later job (clone --shared from the mirror)', ms(median(perJob)), ms(percentile(perJob, 90)), perJob.length],
        ['{copy} of the same tree (copy + base commit)', ms(median(copies)), ms(percentile(copies, 90)), copies.length],
        ['cp -a of the tree (writing the files, no git)', ms(median(cps)), ms(percentile(cps, 90)), cps.length],
        ['diff of an untouched clone', ms(median(diffs)), ms(percentile(diffs, 90)), diffs.length],
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
      jobs: { type: 'string', default: '20' },
      copies: { type: 'string', default: '5' },
      diffs: { type: 'string', default: '5' },
      in: { type: 'string', default: tmpdir() },
    },
  });
  workspaceProvision({
    files: Number(values.files),
    jobs: Number(values.jobs),
    copies: Number(values.copies),
    diffs: Number(values.diffs),
    in: values.in,
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
