/**
 * The client side of workspaces (ARCHITECTURE.md#workspaces), without a server: `run`'s flags,
 * a jobs file's `workspace` and `verify` (refused by field and line), and `submit --model A --model B`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../src/cli/args';
import { workspaceFlags } from '../../src/cli/session';
import { isLocalGitPath, jobIdFor, JobsFileError, readJobsFile } from '../../src/client/jobs-file';

describe('run --repo / --workspace-from / --verify', () => {
  test('--repo URL#REF is a git workspace at that ref; without #, no ref', () => {
    expect(workspaceFlags({ repo: 'https://example.com/r.git#v1.2' }, '/here')).toEqual({
      workspace: { git: 'https://example.com/r.git', ref: 'v1.2' },
    });
    expect(workspaceFlags({ repo: 'git@example.com:org/r.git' }, '/here')).toEqual({ workspace: { git: 'git@example.com:org/r.git' } });
  });

  test('a repository given as a relative path, and --workspace-from, are made absolute', () => {
    expect(workspaceFlags({ repo: '../r#main' }, '/here/sub')).toEqual({ workspace: { git: '/here/r', ref: 'main' } });
    expect(workspaceFlags({ 'workspace-from': 'tmpl' }, '/here')).toEqual({ workspace: { copy: '/here/tmpl' } });
    expect(workspaceFlags({ 'workspace-from': '/abs/tmpl', verify: 'npm test' }, '/here')).toEqual({
      workspace: { copy: '/abs/tmpl' },
      verify: 'npm test',
    });
  });

  test.each<[Record<string, string>, RegExp]>([
    [{ cwd: '/w', repo: 'u' }, /^--cwd cannot be combined with --repo/],
    [{ cwd: '/w', 'workspace-from': 'd' }, /^--cwd cannot be combined with --workspace-from/],
    [{ repo: 'u', 'workspace-from': 'd' }, /^--repo and --workspace-from cannot be combined/],
    [{ repo: 'u#' }, /^--repo: nothing after '#'/],
    [{ repo: '#main' }, /^--repo: expected URL\[#REF\]/],
    [{ verify: '  ' }, /^--verify: expected a command/],
    [{ repo: '/r.git#a..b' }, /^--repo: ref: not a valid git ref/],
    [{ repo: '-u' }, /^--repo: git: not a git URL or path/],
  ])('%j is refused by name', (flags, message) => {
    expect(() => workspaceFlags(flags, '/here')).toThrow(UsageError);
    expect(() => workspaceFlags(flags, '/here')).toThrow(message);
  });

  test.each([
    ['/srv/r.git', true],
    ['../r', true],
    ['r', true],
    ['./a:b', true],
    ['https://h/r.git', false],
    ['file:///srv/r.git', false],
    ['git@h:r.git', false],
    ['h:r.git', false],
  ])('isLocalGitPath(%s) = %s', (s, local) => expect(isLocalGitPath(s)).toBe(local));
});

const dir = mkdtempSync(path.join(tmpdir(), 'da-ws-jobs-'));
let n = 0;
function file(ext: string, text: string): string {
  const p = path.join(dir, `jobs${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}
const jsonl = (...jobs: unknown[]) => file('jsonl', jobs.map((j) => JSON.stringify(j)).join('\n'));

function errorOf(fn: () => unknown): JobsFileError {
  try {
    fn();
  } catch (e) {
    if (e instanceof JobsFileError) return e;
    throw e;
  }
  throw new Error('expected a JobsFileError');
}

describe('a jobs file with workspace and verify', () => {
  test('a job with a workspace gets no default cwd; relative copy and git paths resolve like the other paths', () => {
    const f = jsonl(
      { id: 'a', prompt: 'p', workspace: { copy: 'tmpl' }, verify: 'npm test' },
      { id: 'b', prompt: 'p', workspace: { git: 'https://h/r.git', ref: 'main' }, verify: { command: 'make check', timeoutMs: 60_000 } },
      { id: 'c', prompt: 'p', workspace: { git: '../mirror.git' } },
      { id: 'd', prompt: 'p' },
    );
    const { jobs } = readJobsFile(f, { cwd: '/work/suite' });
    expect(jobs.map((j) => [j.id, j.options.cwd, j.options.workspace])).toEqual([
      ['a', undefined, { copy: '/work/suite/tmpl' }],
      ['b', undefined, { git: 'https://h/r.git', ref: 'main' }],
      ['c', undefined, { git: '/work/mirror.git' }],
      ['d', '/work/suite', undefined],
    ]);
    expect(jobs[0]!.options.verify).toBe('npm test');
    expect(jobs[1]!.options.verify).toEqual({ command: 'make check', timeoutMs: 60_000 });
  });

  test('JSONL: workspace beside cwd is refused naming the field and the line', () => {
    const f = jsonl({ prompt: 'ok' }, { prompt: 'x', cwd: '/w', workspace: { copy: '/t' } });
    const e = errorOf(() => readJobsFile(f, { cwd: '/work' }));
    expect(e.line).toBe(2);
    expect(e.field).toBe('workspace');
    expect(e.message).toMatch(/jobs\d+\.jsonl:2: workspace: cannot be combined with cwd/);
  });

  test('YAML: an unknown workspace key is refused naming the field and the line of `workspace`', () => {
    const f = file(
      'yaml',
      ['- prompt: ok', '- prompt: x', '  verify: npm test', '  workspace:', '    git: /r.git', '    branch: main'].join('\n'),
    );
    const e = errorOf(() => readJobsFile(f, { cwd: '/work' }));
    expect(e.line).toBe(4);
    expect(e.field).toBe('workspace.branch');
    expect(e.message).toMatch(/jobs\d+\.yaml:4: workspace\.branch: unknown option 'branch'/);
  });

  test.each<[unknown, string, RegExp]>([
    [{ copy: '/t', git: '/r' }, 'workspace.copy', /workspace\.copy: give exactly one of git, copy or checkpoint/],
    [{ copy: '/t', ref: 'main' }, 'workspace.ref', /workspace\.ref: ref goes with git/],
    [{ git: '/r', ref: 'a..b' }, 'workspace.ref', /workspace\.ref: not a valid git ref/],
  ])('workspace %j is refused by field', (workspace, field, message) => {
    const e = errorOf(() => readJobsFile(jsonl({ prompt: 'ok' }, { prompt: 'x', workspace }), { cwd: '/work' }));
    expect([e.line, e.field]).toEqual([2, field]);
    expect(e.message).toMatch(message);
  });

  test('a bad verify is refused naming the field and the line', () => {
    const e = errorOf(() =>
      readJobsFile(jsonl({ prompt: 'x', workspace: { copy: '/t' }, verify: { command: 'x', timeout: 5 } }), { cwd: '/w' }),
    );
    expect([e.line, e.field]).toEqual([1, 'verify.timeout']);
    expect(e.message).toMatch(/:1: verify\.timeout: unknown option 'timeout'/);
  });
});

describe('submit --model A --model B', () => {
  const suite = () =>
    file('yaml', ['- id: fix-1', '  prompt: one', '  workspace: {copy: /t}', '- prompt: two', '  workspace: {copy: /t}'].join('\n'));

  test('every task once per model, as TASK:MODEL with / written _, in task order', () => {
    const { jobs } = readJobsFile(suite(), { cwd: '/w', models: ['openai/gpt-4.1', 'qwen2.5-coder:7b'] });
    expect(jobs.map((j) => [j.id, j.index, j.options.model])).toEqual([
      ['fix-1:openai_gpt-4.1', 1, 'openai/gpt-4.1'],
      ['fix-1:qwen2.5-coder:7b', 2, 'qwen2.5-coder:7b'],
      ['job-2:openai_gpt-4.1', 3, 'openai/gpt-4.1'],
      ['job-2:qwen2.5-coder:7b', 4, 'qwen2.5-coder:7b'],
    ]);
    expect(jobIdFor('t', 'a/b/c')).toBe('t:a_b_c');
  });

  test('one --model is a default: ids stay, a job naming its own model keeps it', () => {
    const f = jsonl({ id: 'a', prompt: 'p', cwd: '/w' }, { id: 'b', prompt: 'p', cwd: '/w', model: 'mine' });
    const { jobs } = readJobsFile(f, { models: ['m1'] });
    expect(jobs.map((j) => [j.id, j.options.model])).toEqual([
      ['a', 'm1'],
      ['b', 'mine'],
    ]);
  });

  test('the default batch id depends on the model list; the same list finds the same batch', () => {
    const f = suite();
    const none = readJobsFile(f, { cwd: '/w' }).defaultBatchId;
    const ab = readJobsFile(f, { cwd: '/w', models: ['a', 'b'] }).defaultBatchId;
    expect(
      new Set([
        none,
        ab,
        readJobsFile(f, { cwd: '/w', models: ['a', 'c'] }).defaultBatchId,
        readJobsFile(f, { cwd: '/w', models: ['a'] }).defaultBatchId,
      ]).size,
    ).toBe(4);
    expect(readJobsFile(f, { cwd: '/w', models: ['a', 'b'] }).defaultBatchId).toBe(ab);
    expect(ab).toMatch(/^batch-[0-9a-f]{12}$/);
  });

  test('an id over 64 characters is refused naming the task and its line', () => {
    const long = 't'.repeat(50);
    const f = file('yaml', ['- prompt: ok', `- id: ${long}`, '  prompt: x', '  cwd: /w'].join('\n'));
    const e = errorOf(() => readJobsFile(f, { models: ['a', 'anthropic/claude-sonnet-4'] }));
    expect([e.line, e.field]).toEqual([2, 'id']);
    expect(e.message).toContain(
      `id: '${long}:anthropic_claude-sonnet-4' is longer than 64 characters (task '${long}' with model 'anthropic/claude-sonnet-4')`,
    );
  });

  test('a job naming its own model is refused with several models; so are bad or repeated models', () => {
    const f = file('yaml', ['- prompt: ok', '  cwd: /w', '- prompt: x', '  cwd: /w', '  model: m'].join('\n'));
    const e = errorOf(() => readJobsFile(f, { models: ['a', 'b'] }));
    expect([e.line, e.field]).toEqual([5, 'model']);
    expect(e.message).toMatch(/:5: model: not allowed with several --model flags/);
    expect(errorOf(() => readJobsFile(f, { models: ['a', 'b c'] })).message).toContain(`--model 'b c': a job id holds only`);
    expect(errorOf(() => readJobsFile(f, { models: ['a/b', 'a_b'] })).message).toContain(`--model 'a_b' is given twice`);
  });
});
