/**
 * The client side of issue 40 as a user drives it — what holds before the tools host makes
 * workspaces: `info`, `diff`, `results` and `report` on sessions and batches without a workspace,
 * `submit --model A --model B`, and the refusals (exit 2, nothing started). Real server, worker and
 * CLI processes; the scripted model. Sessions with workspaces and verdicts are tested with the
 * workflow side (ARCHITECTURE.md#workspaces).
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';
import { cli, jsonLines } from './helpers';

const RUN = Date.now().toString(36);
const h = useHarness();
/** Nothing listens here: a command that got as far as connecting would fail with exit 1, not 2. */
const NOWHERE = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };

describe('refused before anything starts (exit 2)', () => {
  test.each([
    [['run', 'hi', '--repo', 'https://h/r.git#main', '--cwd', '/tmp'], /--cwd cannot be combined with --repo/],
    [['run', 'hi', '--workspace-from', '.', '--cwd', '/tmp'], /--cwd cannot be combined with --workspace-from/],
    [['run', 'hi', '--repo', '/r.git', '--workspace-from', '.'], /--repo and --workspace-from cannot be combined/],
    [['run', 'hi', '--repo', '/r.git#a..b'], /--repo: ref: not a valid git ref/],
    [['resume', 'some-id', '--repo', '/r.git'], /--repo: a resumed session works where its conversation began/],
    [['info'], /usage: durable-agent info/],
    [['diff', 'a', 'b'], /usage: durable-agent diff/],
    [['report'], /usage: durable-agent report/],
    [['results', 'b', '--patches', ''], /--patches: expected a folder/],
  ])('%j', async (args, message) => {
    const r = await cli(args, { env: NOWHERE });
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
  });

  test('a jobs file: workspace beside cwd, or an unknown workspace key, names the field and the line', async () => {
    const ws = h.workspace();
    const jsonl = path.join(ws, 'jobs.jsonl');
    writeFileSync(
      jsonl,
      [
        { prompt: 'a', workspace: { copy: 'tmpl' } },
        { prompt: 'b', cwd: ws, workspace: { copy: 'tmpl' } },
      ]
        .map((j) => JSON.stringify(j))
        .join('\n'),
    );
    const r = await cli(['submit', jsonl], { env: NOWHERE });
    expect(r.stderr).toContain(`${jsonl}:2: workspace: cannot be combined with cwd`);
    expect(r.code).toBe(2);
    const yaml = path.join(ws, 'suite.yaml');
    writeFileSync(yaml, ['- prompt: a', '  verify: npm test', '  workspace:', '    git: /r.git', '    branch: main'].join('\n'));
    const y = await cli(['submit', yaml, '--model', 'a', '--model', 'b'], { env: NOWHERE });
    expect(y.stderr).toContain(`${yaml}:3: workspace.branch: unknown option 'branch'`);
    expect(y.code).toBe(2);
  });

  test('several models: an id over 64 characters names the task', async () => {
    const ws = h.workspace();
    const file = path.join(ws, 'jobs.jsonl');
    writeFileSync(file, JSON.stringify({ id: 'x'.repeat(60), prompt: 'a' }));
    const r = await cli(['submit', file, '--model', 'gpt-4.1', '--model', 'gpt-4.1-mini'], { env: NOWHERE });
    expect(r.stderr).toMatch(
      new RegExp(`jobs\\.jsonl:1: id: 'x{60}:gpt-4\\.1' is longer than 64 characters \\(task 'x{60}' with model 'gpt-4\\.1'\\)`),
    );
    expect(r.code).toBe(2);
  });
});

describe('a session without a workspace', () => {
  test('info --json: its fields, workspace and verdict null; info: a short block; diff: exit 2, it has no workspace', async () => {
    const cwd = h.workspace();
    const handle = await h.start({ name: `info-${RUN}`, turns: [turn.text('done')] }, { cwd, sessionId: `info-${RUN}` });
    await handle.result();
    const r = await cli(['info', handle.sessionId, '--json'], { env: h.env });
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(info).toMatchObject({
      id: handle.sessionId,
      status: 'completed',
      executionStatus: 'COMPLETED',
      cwd,
      model: 'gpt-4.1-mini',
      workspace: null,
      verdict: null,
      turns: 1,
      error: null,
    });
    expect(typeof info.costUsd).toBe('number');
    expect(info.durationMs).toBeGreaterThan(0);
    const text = await cli(['info', handle.sessionId], { env: h.env });
    expect(text.stdout).toMatch(
      new RegExp(
        `^session   ${handle.sessionId}\nstatus    completed \\(completed\\)\nmodel     gpt-4\\.1-mini\ncwd       ${cwd}\nspent     \\$`,
      ),
    );
    const d = await cli(['diff', handle.sessionId], { env: h.env });
    expect(d.stderr).toMatch(/session info-\w+ has no workspace/);
    expect(d.stdout).toBe('');
    expect(d.code).toBe(2);
  });

  test('diff of a running session: exit 2, still running; info says running', async () => {
    const gate = h.gate();
    const handle = await h.start(
      { name: `diff-running-${RUN}`, turns: [turn.tool('Bash', { command: gate.command }), turn.text('ok')] },
      {},
    );
    await waitFor('the Bash call running', async () => (await handle.state()).pendingTools.length > 0);
    const d = await cli(['diff', handle.sessionId], { env: h.env });
    expect(d.stderr).toContain(`session ${handle.sessionId} is still running`);
    expect(d.code).toBe(2);
    const info = JSON.parse((await cli(['info', handle.sessionId, '--json'], { env: h.env })).stdout) as Record<string, unknown>;
    expect(info).toMatchObject({ status: 'running', executionStatus: 'RUNNING', verdict: null, durationMs: null });
    gate.release();
    await handle.result();
  });

  test('info and diff of an unknown id: exit 2', async () => {
    for (const cmd of ['info', 'diff']) {
      const r = await cli([cmd, `no-such-${RUN}`], { env: h.env });
      expect(r.stderr).toContain(`no session with id no-such-${RUN}`);
      expect(r.code).toBe(2);
    }
  });
});

test('submit --model A --model B: a job per task and model; results carry the new fields; report has a row per model', async () => {
  const ws = h.workspace();
  const tasks = ['t1', 't2'].map((id) => {
    const name = `models-${RUN}-${id}`;
    h.model.addScenario({ name, turns: [turn.text(`result ${id}`)] });
    return { id, prompt: `${scenarioTag(name)} task`, permissionMode: 'bypassPermissions' };
  });
  const file = path.join(ws, 'suite.jsonl');
  writeFileSync(file, tasks.map((t) => JSON.stringify(t)).join('\n'));
  const submit = await cli(['submit', file, '--cwd', ws, '--model', 'gpt-4.1-mini', '--model', 'openai/gpt-4.1', '--json'], { env: h.env });
  expect(submit.code).toBe(0);
  const batchId = /batch (batch-[0-9a-f]{12}) submitted/.exec(submit.stderr)?.[1];
  expect(batchId).toBeDefined();

  const res = await cli(['results', batchId!, '--patches', path.join(ws, 'patches')], { env: h.env });
  expect(res.code).toBe(0);
  const rows = jsonLines<Record<string, unknown>>(res.stdout);
  expect(rows.map((r) => [r.id, r.model, r.status, r.result])).toEqual([
    ['t1:gpt-4.1-mini', 'gpt-4.1-mini', 'completed', 'result t1'],
    ['t1:openai_gpt-4.1', 'openai/gpt-4.1', 'completed', 'result t1'],
    ['t2:gpt-4.1-mini', 'gpt-4.1-mini', 'completed', 'result t2'],
    ['t2:openai_gpt-4.1', 'openai/gpt-4.1', 'completed', 'result t2'],
  ]);
  for (const r of rows) {
    expect(r).toMatchObject({
      verdict: null,
      verifyExitCode: null,
      verifyDurationMs: null,
      verifyOutputTail: null,
      diffStat: null,
      patch: null,
    });
    expect(r.durationMs).toBeGreaterThan(0);
  }
  // No job changed a workspace: no patch files.
  expect(existsSync(path.join(ws, 'patches')) ? readdirSync(path.join(ws, 'patches')) : []).toEqual([]);
  expect(res.stderr).toContain('0 patches written');
  const csv = await cli(['results', batchId!, '--format', 'csv'], { env: h.env });
  expect(csv.stdout.split('\n')[0]).toBe(
    'id,status,result,turns,costUsd,error,sessionId,model,durationMs,verdict,verifyExitCode,verifyDurationMs,verifyOutputTail,diffStat',
  );

  const report = await cli(['report', batchId!, '--json'], { env: h.env });
  expect(report.code).toBe(0);
  const r = JSON.parse(report.stdout) as {
    batches: string[];
    models: { model: string; jobs: number; resolvedShare: number | null; errors: number }[];
  };
  expect(r.batches).toEqual([batchId]);
  expect(r.models.map((m) => [m.model, m.jobs, m.resolvedShare, m.errors])).toEqual([
    ['gpt-4.1-mini', 2, null, 0],
    ['openai/gpt-4.1', 2, null, 0],
  ]);
  const table = (await cli(['report', batchId!], { env: h.env })).stdout.split('\n');
  expect(table[0]).toMatch(/^MODEL\s+JOBS\s+RESOLVED/);
  expect(table[2]).toMatch(/^openai\/gpt-4\.1\s+2\s+-\s+0\s+0\s/);
  expect((await cli(['report', `no-such-batch-${RUN}`], { env: h.env })).code).toBe(2);
});
