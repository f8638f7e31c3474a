/**
 * Batch runs on repositories, end to end (ARCHITECTURE.md#workspaces): `submit` a jobs file whose
 * jobs each bring a repository at a ref and a `verify` command, against the real worker; `results`
 * gives each job's verdict and a patch that applies to its base; a second batch on the same
 * repository reuses its mirror; `report` gives the resolve rate and cost per task, one row per model.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { sessionIdFor } from '../../src/shared/batch';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import { git } from './helpers';
import { scenarioTag, useHarness } from '../helpers/harness';
import { cli, jsonLines } from '../cli/helpers';

// The worker in this process makes its workspaces here (outside /tmp: the sandbox's /tmp is private).
const WORKSPACES = varTmpDir('da-batch-workspaces-');
process.env.DURABLE_AGENT_WORKSPACES = WORKSPACES;
afterAll(removeVarTmpDirs);

const h = useHarness();
const RUN = Date.now().toString(36);

/** A bare repository whose test script fails until status.txt says fixed. */
function origin(): { bare: string; main: string } {
  const work = h.workspace();
  git(work, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(work, 'test.sh'), 'grep -q fixed status.txt\n');
  writeFileSync(path.join(work, 'status.txt'), 'broken\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'start');
  const bare = path.join(h.workspace(), 'origin.git');
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  return { bare, main: git(bare, 'rev-parse', 'main') };
}

/** A jobs file: each task fixes the script (`fix-*`), does nothing (`idle-*`) or names a ref that does not exist (`bad-*`). */
function jobsFile(repo: string, tasks: string[]): string {
  const lines = tasks.map((id) => {
    const fixes = id.startsWith('fix');
    h.model.addScenario({
      name: `${RUN}-${id}`,
      turns: fixes ? [turn.tool('Bash', { command: 'echo fixed > status.txt' }), turn.text('fixed')] : [turn.text('nothing to do')],
    });
    return JSON.stringify({
      id,
      prompt: `${scenarioTag(`${RUN}-${id}`)} make the test pass`,
      permissionMode: 'bypassPermissions',
      workspace: { git: repo, ref: id.startsWith('bad') ? 'no-such-ref' : 'main' },
      verify: 'sh test.sh',
    });
  });
  const file = path.join(h.workspace(), 'jobs.jsonl');
  writeFileSync(file, lines.join('\n'));
  return file;
}

interface Line {
  id: string;
  error: string | null;
  status: string;
  verdict: string | null;
  verifyExitCode: number | null;
  diffStat: { filesChanged: number } | null;
  patch: string | null;
  model: string | null;
}

test('a batch on one repository: own folders, verdicts, patches that apply; a second batch reuses the mirror', async () => {
  const repo = origin();
  const refs = git(repo.bare, 'show-ref');
  const first = `ws-${RUN}-a`;
  const submitted = await cli(['submit', jobsFile(repo.bare, ['fix-1', 'fix-2', 'idle-1', 'bad-1']), '--batch-id', first], { env: h.env });
  // One job failed (its workspace could not be made): the batch went on, and submit says so.
  expect(submitted.code).toBe(1);
  expect(submitted.stderr).toMatch(/4\/4 done.* 1 failed/);

  const patches = path.join(h.workspace(), 'patches');
  const res = await cli(['results', first, '--patches', patches], { env: h.env });
  expect(res.code).toBe(0);
  const lines = jsonLines<Line>(res.stdout).sort((a, b) => a.id.localeCompare(b.id));
  expect(lines.map((l) => [l.id, l.status, l.verdict, l.verifyExitCode])).toEqual([
    ['bad-1', 'failed', null, null],
    ['fix-1', 'completed', 'pass', 0],
    ['fix-2', 'completed', 'pass', 0],
    ['idle-1', 'completed', 'fail', 1],
  ]);
  expect(lines[0]!.error).toMatch(/^setup: .*no-such-ref/);
  expect(lines.map((l) => l.diffStat?.filesChanged)).toEqual([undefined, 1, 1, 0]);

  // Each job in its own folder at the base, the origin untouched, the patch applies to the base.
  const infos = await Promise.all(
    ['fix-1', 'fix-2'].map(async (id) => JSON.parse((await cli(['info', sessionIdFor(first, id), '--json'], { env: h.env })).stdout)),
  );
  expect(new Set(infos.map((i) => i.workspace.path)).size).toBe(2);
  for (const i of infos) expect(i.workspace.base).toBe(repo.main);
  expect(git(repo.bare, 'show-ref')).toBe(refs);
  const check = h.workspace();
  execFileSync('git', ['clone', '-q', repo.bare, check]);
  git(check, 'apply', path.join(patches, 'fix-1.patch'));
  expect(readFileSync(path.join(check, 'status.txt'), 'utf8')).toBe('fixed\n');
  const diff = await cli(['diff', sessionIdFor(first, 'fix-2')], { env: h.env });
  expect(diff.code).toBe(0);
  expect(diff.stdout).toBe(readFileSync(path.join(patches, 'fix-2.patch'), 'utf8'));

  // One mirror; the second batch neither clones it again nor makes another.
  const mirrors = () => readdirSync(path.join(WORKSPACES, 'mirrors')).filter((f) => f.endsWith('.git'));
  expect(mirrors()).toHaveLength(1);
  const mirror = statSync(path.join(WORKSPACES, 'mirrors', mirrors()[0]!));
  const second = `ws-${RUN}-b`;
  expect((await cli(['submit', jobsFile(repo.bare, ['fix-3']), '--batch-id', second], { env: h.env })).code).toBe(0);
  expect(mirrors()).toHaveLength(1);
  expect(statSync(path.join(WORKSPACES, 'mirrors', mirrors()[0]!)).ino).toBe(mirror.ino);
  expect(statSync(path.join(WORKSPACES, 'mirrors', mirrors()[0]!)).birthtimeMs).toBe(mirror.birthtimeMs);

  // The report: resolve rate and cost per task.
  const report = await cli(['report', first, '--json'], { env: h.env });
  expect(report.code).toBe(0);
  const [row] = JSON.parse(report.stdout).models as {
    jobs: number;
    resolved: number;
    errors: number;
    resolvedShare: number;
    costUsd: { total: number };
  }[];
  expect(row).toMatchObject({ jobs: 4, resolved: 2, errors: 1 });
  expect(row!.resolvedShare).toBeCloseTo(2 / 4);
  expect(row!.costUsd.total).toBeGreaterThan(0);
  const table = await cli(['report', first], { env: h.env });
  expect(table.stdout).toMatch(/\b4\s+2 \(50(\.0)?%\)\s+1\b/);

  // After the export, --cleanup removes this batch's folders from this host, and only those.
  const secondInfo = JSON.parse((await cli(['info', sessionIdFor(second, 'fix-3'), '--json'], { env: h.env })).stdout);
  const cleaned = await cli(['results', first, '--cleanup', '--out', path.join(h.workspace(), 'r.jsonl')], { env: h.env });
  expect(cleaned.code).toBe(0);
  expect(cleaned.stderr).toContain('3 workspaces removed');
  for (const i of infos) expect(existsSync(i.workspace.path)).toBe(false);
  expect(existsSync(secondInfo.workspace.path)).toBe(true);
}, 300_000);

test('two models on one suite: every task once per model, one report row each', async () => {
  const repo = origin();
  const batch = `ws-${RUN}-models`;
  const file = jobsFile(repo.bare, ['fix-m', 'idle-m']);
  const r = await cli(['submit', file, '--batch-id', batch, '--model', 'gpt-4.1-mini', '--model', 'gpt-4.1'], { env: h.env });
  expect(r.code).toBe(0);
  const lines = jsonLines<Line>((await cli(['results', batch], { env: h.env })).stdout);
  expect(lines.map((l) => l.id).sort()).toEqual(['fix-m:gpt-4.1', 'fix-m:gpt-4.1-mini', 'idle-m:gpt-4.1', 'idle-m:gpt-4.1-mini']);
  const report = JSON.parse((await cli(['report', batch, '--json'], { env: h.env })).stdout) as {
    models: { model: string; jobs: number; resolved: number }[];
  };
  expect(report.models.map((m) => [m.model, m.jobs, m.resolved]).sort()).toEqual([
    ['gpt-4.1', 2, 1],
    ['gpt-4.1-mini', 2, 1],
  ]);
}, 300_000);
