/** `report`'s figures and `results`' rows, from rows alone (ARCHITECTURE.md#workspaces). */
import { batchReport, median, renderReport, type ReportInput } from '../../src/client/batch-report';
import { CSV_COLUMNS, jobRow, patchFileName, resultLines } from '../../src/client/batch-rows';
import type { JobResult } from '../../src/client/batch';
import type { ResultMessage } from '../../src/shared/events';

const row = (o: Partial<ReportInput>): ReportInput => ({
  model: 'a',
  status: 'completed',
  verdict: 'pass',
  costUsd: 0,
  turns: 0,
  durationMs: null,
  ...o,
});

describe('batchReport', () => {
  test('shares count every job; errors and skipped are columns of their own; cost and turns over jobs that ran', () => {
    const { models } = batchReport([
      row({ verdict: 'pass', costUsd: 1, turns: 2, durationMs: 10_000 }),
      row({ verdict: 'fail', costUsd: 3, turns: 4, durationMs: 30_000 }),
      row({ status: 'failed', verdict: null, costUsd: 0, turns: 0 }),
      row({ verdict: 'error', costUsd: 2, turns: 6, durationMs: 20_000 }),
      row({ status: 'skipped_budget', verdict: null }),
    ]);
    expect(models).toEqual([
      {
        model: 'a',
        jobs: 5,
        resolved: 1,
        resolvedShare: 0.2,
        unresolved: 1,
        errors: 2,
        skipped: 1,
        unfinished: 0,
        costUsd: { total: 6, mean: 1.5, median: 1.5 },
        turnsMean: 3,
        durationMsMedian: 20_000,
      },
    ]);
  });

  test('a job is an error only without a pass or fail: one that failed but whose verify ran counts by its verdict', () => {
    const { models } = batchReport([
      row({ status: 'failed', verdict: 'pass' }),
      row({ status: 'failed', verdict: 'fail' }),
      row({ status: 'cancelled', verdict: null }),
      row({ status: 'completed', verdict: 'error' }),
    ]);
    expect(models[0]).toMatchObject({ jobs: 4, resolved: 1, unresolved: 1, errors: 2 });
  });

  test('a row per model, in the order models first appear', () => {
    const { models } = batchReport([
      row({ model: 'm2', verdict: 'fail', costUsd: 1 }),
      row({ model: 'm1', costUsd: 5 }),
      row({ model: 'm2', costUsd: 3 }),
      row({ model: null, status: 'running', verdict: null }),
    ]);
    expect(models.map((m) => [m.model, m.jobs, m.resolved, m.resolvedShare, m.costUsd.total, m.unfinished])).toEqual([
      ['m2', 2, 1, 0.5, 4, 0],
      ['m1', 1, 1, 1, 5, 0],
      ['unknown', 1, 0, null, 0, 1],
    ]);
  });

  test('without any verdict the share is null, not 0', () => {
    expect(batchReport([row({ verdict: null }), row({ verdict: null })]).models[0]!.resolvedShare).toBeNull();
  });

  test('medians: odd, even, none', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });

  test('the table for people', () => {
    const lines = renderReport(
      batchReport([
        row({ model: 'gpt-4.1', costUsd: 0.02, turns: 3, durationMs: 61_000 }),
        row({ model: 'gpt-4.1', verdict: 'fail', costUsd: 0.04, turns: 5, durationMs: 59_000 }),
        row({ model: 'o4-mini', status: 'waiting', verdict: null }),
      ]),
    );
    expect(lines[0]).toMatch(/^MODEL\s+JOBS\s+RESOLVED\s+ERRORS\s+SKIPPED\s+COST\s+COST\/TASK\s+MEDIAN COST\s+TURNS\/TASK\s+MEDIAN TIME$/);
    expect(lines[1]).toMatch(/^gpt-4\.1\s+2\s+1 \(50\.0%\)\s+0\s+0\s+\$0\.0600\s+\$0\.0300\s+\$0\.0300\s+4\.0\s+1m00s$/);
    expect(lines[2]).toMatch(/^o4-mini\s+1\s+-\s+0\s+0\s+\$0\.0000\s+-\s+-\s+-\s+-$/);
    expect(lines[3]).toBe('(1 job not finished: counted as not resolved)');
  });
});

const outcome = (o: Partial<JobResult> = {}): JobResult =>
  ({ id: 'fix-1:gpt-4.1', index: 1, sessionId: 'b/fix-1:gpt-4.1', status: 'completed', turns: 3, costUsd: 0.5, ...o }) as JobResult;

const result = (o: Partial<ResultMessage> = {}): ResultMessage =>
  ({
    type: 'result',
    subtype: 'success',
    result: 'done',
    is_error: false,
    num_turns: 3,
    duration_ms: 1234,
    total_cost_usd: 0.5,
    verdict: 'pass',
    verify: { command: 'npm test', exitCode: 0, durationMs: 800, outputTail: 'ok\n' },
    workspace: {
      path: '/ws/x',
      host: 'h1',
      kind: 'git',
      base: 'abc',
      source: { git: '/r.git', ref: 'main' },
      diffStat: { filesChanged: 1, insertions: 2, deletions: 0 },
      patch: 'diff --git a/x b/x\n',
    },
    ...o,
  }) as ResultMessage;

describe('jobRow and results lines', () => {
  test('a finished job: verdict, verify, diff figures and patch from its session result', () => {
    expect(jobRow(outcome({ result: 'done', model: 'gpt-4.1' } as Partial<JobResult>), { result: result() })).toEqual({
      id: 'fix-1:gpt-4.1',
      status: 'completed',
      result: 'done',
      turns: 3,
      costUsd: 0.5,
      error: null,
      sessionId: 'b/fix-1:gpt-4.1',
      model: 'gpt-4.1',
      durationMs: 1234,
      verdict: 'pass',
      verifyExitCode: 0,
      verifyDurationMs: 800,
      verifyOutputTail: 'ok\n',
      diffStat: { filesChanged: 1, insertions: 2, deletions: 0 },
      patch: 'diff --git a/x b/x\n',
    });
  });

  test('a job whose setup failed, and one skipped for budget, have verdict null', () => {
    const setup = jobRow(outcome({ status: 'failed', error: 'setup: cannot clone /r.git at nope' }), {
      result: result({ verdict: 'error' }),
    });
    expect(setup).toMatchObject({ status: 'failed', verdict: null, verifyExitCode: null, error: 'setup: cannot clone /r.git at nope' });
    expect(jobRow(outcome({ status: 'skipped_budget', error: 'not started: the batch budget was spent' }))).toMatchObject({
      status: 'skipped_budget',
      verdict: null,
      diffStat: null,
      patch: null,
      durationMs: null,
    });
    expect(jobRow(outcome(), { result: result({ verdict: undefined, verify: undefined, workspace: undefined }) })).toMatchObject({
      verdict: null,
      verifyExitCode: null,
      diffStat: null,
      patch: null,
    });
  });

  test('a patch put back together from parts wins over the result (which has none)', () => {
    expect(jobRow(outcome(), { result: result(), patch: 'big' }).patch).toBe('big');
  });

  test('JSONL carries every field; CSV every field but the patch, objects as JSON, quoted', () => {
    const r = jobRow(outcome({ model: 'gpt-4.1' } as Partial<JobResult>), {
      result: result({ verify: { command: 't', exitCode: 1, durationMs: 5, outputTail: 'FAIL, "x"\n' }, verdict: 'fail' }),
    });
    const [line] = resultLines([r], 'jsonl');
    expect(Object.keys(JSON.parse(line!) as object)).toEqual([...CSV_COLUMNS, 'patch']);
    expect(JSON.parse(line!).patch).toBe('diff --git a/x b/x\n');
    const csv = resultLines([r], 'csv');
    expect(csv[0]).toBe(
      'id,status,result,turns,costUsd,error,sessionId,model,durationMs,verdict,verifyExitCode,verifyDurationMs,verifyOutputTail,diffStat',
    );
    expect(csv[1]).toBe(
      'fix-1:gpt-4.1,completed,,3,0.5,,b/fix-1:gpt-4.1,gpt-4.1,1234,fail,1,5,"FAIL, ""x""\n","{""filesChanged"":1,""insertions"":2,""deletions"":0}"',
    );
    expect(csv[1]).not.toContain('diff --git');
  });

  test('patch file names: ids keep their colons; a slash cannot leave the folder', () => {
    expect(patchFileName('fix-1:openai_gpt-4.1')).toBe('fix-1:openai_gpt-4.1.patch');
    expect(patchFileName('../a/b')).toBe(`.._a_b.patch`);
  });
});
