/** Jobs files are validated completely before anything starts; errors name the line and the field. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readJobsFile, JobsFileError } from '../../src/client/jobs-file';

const dir = mkdtempSync(path.join(tmpdir(), 'da-jobs-'));
let n = 0;
function file(ext: string, text: string): string {
  const p = path.join(dir, `jobs${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}
const jsonl = (...jobs: unknown[]) => file('jsonl', jobs.map((j) => (typeof j === 'string' ? j : JSON.stringify(j))).join('\n'));

function errorOf(fn: () => unknown): JobsFileError {
  try {
    fn();
  } catch (e) {
    if (e instanceof JobsFileError) return e;
    throw e;
  }
  throw new Error('expected a JobsFileError');
}

test('JSONL: ids default to job-<n>, relative cwd resolves against --cwd, blank and comment lines are skipped', () => {
  const f = jsonl({ prompt: 'a' }, '', '# a comment', { id: 'second', prompt: 'b', cwd: 'sub', maxTurns: 3 });
  const { jobs, fingerprint, defaultBatchId } = readJobsFile(f, { cwd: '/work' });
  expect(jobs.map((j) => [j.id, j.index, j.options.cwd])).toEqual([
    ['job-1', 1, '/work'],
    ['second', 2, '/work/sub'],
  ]);
  expect(jobs[1]!.options).toMatchObject({ prompt: 'b', maxTurns: 3 });
  expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  expect(defaultBatchId).toMatch(/^batch-[0-9a-f]{12}$/);
  expect(readJobsFile(f, { cwd: '/work' }).defaultBatchId).toBe(defaultBatchId);
});

test.each([
  [[{ prompt: 'ok' }, { prompt: 'x', maxTurns: 'lots' }], 2, 'maxTurns', /:2: maxTurns: .*expected number/],
  [
    [{ prompt: 'ok' }, { prompt: 'ok' }, { prompt: 'x', permisionMode: 'plan' }],
    3,
    'permisionMode',
    /:3: permisionMode: unknown option 'permisionMode'/,
  ],
  [[{ prompt: '' }], 1, 'prompt', /:1: prompt: /],
  [[{ prompt: 'ok', id: 'has/slash' }], 1, 'id', /:1: id: expected 1-64 characters/],
  [
    [
      { prompt: 'ok', id: 'a' },
      { prompt: 'ok', id: 'a' },
    ],
    2,
    'id',
    /:2: id: 'a' is already used by the job at line 1/,
  ],
  [[{ prompt: 'ok', sessionId: 's' }], 1, 'sessionId', /:1: sessionId: not allowed in a batch job/],
  [['{"prompt": "ok"', { prompt: 'ok' }], 1, '(root)', /:1: invalid JSON/],
  [[[1, 2]], 1, '(root)', /:1: expected an object of session options/],
  [
    [{ prompt: 'ok' }, { prompt: 'x', outputFormat: { type: 'json_schema', schema: { type: 'wrong' } } }],
    2,
    'outputFormat.schema',
    /:2: outputFormat\.schema: not a usable JSON schema: /,
  ],
])('JSONL error: %j → line %d, field %s', (jobs, line, field, message) => {
  const e = errorOf(() => readJobsFile(jsonl(...jobs), { cwd: '/work' }));
  expect(e.line).toBe(line);
  expect(e.field).toBe(field);
  expect(e.message).toMatch(message);
});

test('YAML: a list of jobs; an error names the line of the offending field', () => {
  const good = file(
    'yaml',
    ['- prompt: first', '  id: one', '- prompt: |', '    second,', '    on two lines', '  model: gpt-4.1'].join('\n'),
  );
  const { jobs } = readJobsFile(good, { cwd: '/w' });
  expect(jobs.map((j) => [j.id, j.options.prompt, j.options.model])).toEqual([
    ['one', 'first', undefined],
    ['job-2', 'second,\non two lines\n', 'gpt-4.1'],
  ]);
  const bad = file('yml', ['- prompt: first', '- prompt: second', '  cwd: /tmp', '  maxBudgetUsd: -1'].join('\n'));
  const e = errorOf(() => readJobsFile(bad));
  expect([e.line, e.field]).toEqual([4, 'maxBudgetUsd']);
  expect(e.message).toMatch(/yml:4: maxBudgetUsd: /);
  const notList = errorOf(() => readJobsFile(file('yaml', 'prompt: x\n')));
  expect(notList.message).toMatch(/expected a list of jobs/);
  const broken = errorOf(() => readJobsFile(file('yaml', '- prompt: [oops\n')));
  expect(broken.message).toMatch(/invalid YAML/);
});

test('an empty file and a bad --batch-id are refused', () => {
  expect(errorOf(() => readJobsFile(jsonl('', '  '))).message).toMatch(/no jobs in the file/);
  expect(errorOf(() => readJobsFile(jsonl({ prompt: 'x' }), { batchId: 'a/b' })).message).toMatch(/--batch-id: expected 1-64 characters/);
});

test('command-line defaults (submit --allowed-tools, --ask-tools, --settings, …) apply to every job; a job’s own value wins; settingsFile resolves like cwd', () => {
  const f = jsonl({ prompt: 'a' }, { prompt: 'b', askTools: ['Write'], settingsFile: 'own.json' });
  const { jobs } = readJobsFile(f, {
    cwd: '/work',
    defaults: { allowedTools: ['Read'], askTools: ['Bash(git push:*)'], settingsFile: '/etc/ci.json', settingSources: ['project'] },
  });
  expect(jobs.map((j) => [j.options.allowedTools, j.options.askTools, j.options.settingsFile, j.options.settingSources])).toEqual([
    [['Read'], ['Bash(git push:*)'], '/etc/ci.json', ['project']],
    [['Read'], ['Write'], '/work/own.json', ['project']],
  ]);
});
