import { SEARCH_ATTRIBUTE_KEYS as keys } from '../../src/shared/api';
import {
  batchSearchAttributes,
  BatchSettings,
  ID_PATTERN,
  jobWorkflowIdFor,
  JobError,
  MAX_JOB_BYTES,
  parseJob,
  sessionIdFor,
  startSearchAttributes,
} from '../../src/shared/batch';

const opts = { index: 7, batchId: 'b1', platform: 'linux' };

function jobError(raw: unknown): JobError {
  try {
    parseJob(raw, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(JobError);
    expect((e as JobError).name).toBe('JobError');
    return e as JobError;
  }
  throw new Error('expected a JobError');
}

describe('parseJob', () => {
  test('a valid job keeps its options, gets the platform, and defaults its id to job-<index>', () => {
    expect(parseJob({ prompt: 'hi', cwd: '/w' }, opts)).toEqual({
      id: 'job-7',
      index: 7,
      options: { platform: 'linux', prompt: 'hi', cwd: '/w' },
    });
  });

  test('an explicit id and platform are kept; the id is not part of the options', () => {
    expect(parseJob({ id: 'fix-42', prompt: 'hi', cwd: '/w', platform: 'darwin' }, opts)).toEqual({
      id: 'fix-42',
      index: 7,
      options: { platform: 'darwin', prompt: 'hi', cwd: '/w' },
    });
  });

  test.each<[string, unknown]>([
    ['null', null],
    ['a string', 'prompt'],
    ['an array', [{ prompt: 'hi' }]],
  ])('%s is not a job', (_name, raw) => {
    const e = jobError(raw);
    expect(e.message).toBe('expected an object of session options');
    expect(e.field).toBe('(root)');
  });

  test.each<[unknown, string]>([
    ['a/b', '"a/b"'],
    ['', '""'],
    ['x'.repeat(65), `"${'x'.repeat(65)}"`],
    [12, '12'],
  ])('id %j is refused with the rule', (id, shown) => {
    const e = jobError({ id, prompt: 'hi', cwd: '/w' });
    expect(e.message).toBe(`id: expected 1-64 characters: letters, digits, . _ : -, got ${shown}`);
    expect(e.field).toBe('id');
  });

  test('the longest and the most varied allowed ids pass', () => {
    expect(parseJob({ id: 'x'.repeat(64), prompt: 'hi', cwd: '/w' }, opts).id).toBe('x'.repeat(64));
    expect(parseJob({ id: 'A.z_0:9-', prompt: 'hi', cwd: '/w' }, opts).id).toBe('A.z_0:9-');
  });

  test.each(['sessionId', 'batchId', 'startedAt', 'resume', 'forkSession'])('%s is set by the batch, not the job', (key) => {
    const e = jobError({ prompt: 'hi', cwd: '/w', [key]: 'x' });
    expect(e.message).toBe(`${key}: not allowed in a batch job (the batch sets it)`);
    expect(e.field).toBe(key);
  });

  test('session options are validated as the session will, naming the field without the config prefix', () => {
    const e = jobError({ prompt: 'hi', cwd: '/w', maxTurns: 'three' });
    expect(e.field).toBe('maxTurns');
    expect(e.message).toMatch(/^maxTurns: /);
    const missing = jobError({ cwd: '/w' });
    expect(missing.field).toBe('prompt');
    expect(missing.message).toMatch(/^prompt: /);
  });

  test('a job larger than the limit is refused as a whole', () => {
    const e = jobError({ prompt: 'x'.repeat(MAX_JOB_BYTES), cwd: '/w' });
    expect(e.message).toBe('the job is larger than 524288 bytes');
    expect(e.field).toBe('(root)');
    // Just under the limit passes: the limit is on the JSON of the options.
    const room = MAX_JOB_BYTES - JSON.stringify({ platform: 'linux', prompt: '', cwd: '/w' }).length;
    expect(parseJob({ prompt: 'x'.repeat(room), cwd: '/w' }, opts).options.prompt).toHaveLength(room);
    expect(() => parseJob({ prompt: 'x'.repeat(room + 1), cwd: '/w' }, opts)).toThrow('the job is larger than 524288 bytes');
  });
});

describe('batch ids', () => {
  test('session and job workflow ids are derived from the batch and job ids', () => {
    expect(sessionIdFor('b1', 'job-3')).toBe('b1/job-3');
    expect(jobWorkflowIdFor('b1', 'job-3')).toBe('b1/job-3/job');
  });

  test('ID_PATTERN is anchored at both ends', () => {
    expect(ID_PATTERN.test('ok')).toBe(true);
    expect(ID_PATTERN.test('ok/')).toBe(false);
    expect(ID_PATTERN.test('/ok')).toBe(false);
    expect(ID_PATTERN.test('a b')).toBe(false);
  });
});

describe('BatchSettings', () => {
  test('defaults eventsPerRun and livenessCheckMs and keeps the rest', () => {
    expect(BatchSettings.parse({ batchId: 'b1', concurrency: 500, total: 1 })).toEqual({
      batchId: 'b1',
      concurrency: 500,
      total: 1,
      eventsPerRun: 2_000,
      livenessCheckMs: 60_000,
    });
  });

  test.each<[string, Record<string, unknown>]>([
    ['a bad batch id', { batchId: 'a/b' }],
    ['concurrency 0', { concurrency: 0 }],
    ['concurrency over 500', { concurrency: 501 }],
    ['a fractional concurrency', { concurrency: 1.5 }],
    ['no jobs', { total: 0 }],
    ['eventsPerRun under 100', { eventsPerRun: 99 }],
    ['an unknown field', { extra: 1 }],
  ])('refuses %s', (_name, patch) => {
    expect(BatchSettings.safeParse({ batchId: 'b1', concurrency: 1, total: 1, ...patch }).success).toBe(false);
  });

  test('the bad batch id is reported with the id rule', () => {
    const r = BatchSettings.safeParse({ batchId: 'a/b', concurrency: 1, total: 1 });
    expect(r.success ? null : r.error.issues[0]!.message).toBe('1-64 characters: letters, digits, . _ : -');
  });

  test('eventsPerRun of exactly 100 is allowed', () => {
    expect(BatchSettings.parse({ batchId: 'b1', concurrency: 1, total: 1, eventsPerRun: 100 }).eventsPerRun).toBe(100);
  });
});

describe('search attributes set at start', () => {
  test('a session starts running at turn 0 and cost 0 with its model', () => {
    expect(startSearchAttributes({ model: 'gpt-4o', searchAttributes: true })).toEqual([
      { key: keys.status, value: 'running' },
      { key: keys.model, value: 'gpt-4o' },
      { key: keys.turns, value: 0 },
      { key: keys.costUsd, value: 0 },
    ]);
  });

  test("a batch job's session also carries its batch id", () => {
    expect(startSearchAttributes({ model: 'm', batchId: 'b1', searchAttributes: true })).toContainEqual({ key: keys.batchId, value: 'b1' });
    expect(startSearchAttributes({ model: 'm', batchId: 'b1', searchAttributes: true })).toHaveLength(5);
  });

  test('a session with searchAttributes: false sets none', () => {
    expect(startSearchAttributes({ model: 'm', batchId: 'b1', searchAttributes: false })).toEqual([]);
  });

  test('batch and job workflows carry only the batch id', () => {
    expect(batchSearchAttributes('b1')).toEqual([{ key: keys.batchId, value: 'b1' }]);
  });
});
