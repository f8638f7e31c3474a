/**
 * `durable-agent` driven as a user would: spawned processes against the dev server, with a worker
 * (scripted model) in this process. Exit codes: 0 success, 1 error result, 2 bad input.
 */
import { turn } from '../../src/testing/scripted-model';
import type { TurnInput } from '../../src/testing/scenario';
import type { SessionEvent } from '../../src/shared/events';
import type { Message } from '../../src/shared/messages';
import { kinds, scenarioTag, useHarness } from '../helpers/harness';
import { cli, jsonLines, spawnCli } from './helpers';
import { workflowExists } from '../helpers/exists';
import { waitFor } from '../helpers/wait';

/** Ids unique to this run, so a reused server (TEMPORAL_TEST_ADDRESS) never has them already. */
const RUN = Date.now().toString(36);
const h = useHarness();

/** Arguments of `run` for a scenario served by this harness's scripted model. */
function runArgs(name: string, turns: TurnInput[], ...flags: string[]) {
  scenario(name, turns);
  return ['run', `${scenarioTag(name)} Do the task.`, '--cwd', h.workspace(), '--permission-mode', 'bypassPermissions', ...flags];
}
function scenario(name: string, turns: TurnInput[]) {
  h.model.addScenario({ name, turns });
}

describe('bad input exits 2 and starts nothing', () => {
  test.each([
    [['bogus'], /unknown command 'bogus'/],
    [['run', 'hi', '--bogus'], /Unknown option '--bogus'[\s\S]*usage: durable-agent run/],
    [['run'], /a prompt is required/],
    [['run', 'hi', '--max-turns', 'many'], /--max-turns: expected an integer/],
    [['watch'], /usage: durable-agent watch/],
    [['set-model', 'some-id'], /usage: durable-agent set-model/],
    [['ls', '--status', "x' OR 1=1"], /--status: expected a status/],
    [['submit', '/no/such/jobs.jsonl'], /jobs\.jsonl: cannot read/],
    [['results'], /usage: durable-agent results/],
    [['watch', 'no-such-session'], /no session with id no-such-session/],
  ])('%j', async (args, message) => {
    const r = await cli(args, { env: h.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test('an invalid session option is named, and no session exists afterwards', async () => {
    const r = await cli(['run', 'hi', '--permission-mode', 'yolo', '--id', `never-${RUN}`, '--cwd', h.workspace()], { env: h.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/permissionMode/);
    expect(await workflowExists(h.client, `never-${RUN}`)).toBe(false);
  });

  test('an id that is taken is refused', async () => {
    const args = runArgs('taken', [turn.text('first')], '--id', `taken-${RUN}`, '--json');
    expect((await cli(args, { env: h.env })).code).toBe(0);
    const again = await cli(args, { env: h.env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
  });

  test('--help prints the command usage and exits 0', async () => {
    const r = await cli(['submit', '--help'], { env: h.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/usage: durable-agent submit/);
  });
});

test('run --json prints one SDK message per line, in order, and exits 0 on success', async () => {
  const r = await cli(runArgs('json-run', [turn.tool('Glob', { pattern: '*' }), turn.text('All done.')], '--json'), { env: h.env });
  expect(r.code).toBe(0);
  const messages = jsonLines<SessionEvent>(r.stdout);
  expect(kinds(messages)).toEqual(['system/init', 'assistant', 'tool_progress', 'tool_progress', 'user', 'assistant', 'result']);
  expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i));
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'All done.' });
});

test('run attached renders a readable transcript; an error result exits 1', async () => {
  const r = await cli(
    runArgs('max-turns-run', [turn.tool('Glob', { pattern: '*' }), turn.tool('Glob', { pattern: '*' })], '--max-turns', '1'),
    { env: h.env },
  );
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/→ Glob\(\*\)/);
  expect(r.stdout).toMatch(/✗ error_max_turns \(max_turns\): Reached the maximum number of turns \(1\)/);
  expect(r.stderr).toMatch(/^session session-[0-9a-f-]+ \(Ctrl-C interrupts the turn\)/);
});

test('the prompt can come from stdin', async () => {
  scenario('stdin-prompt', [turn.text('Read you.')]);
  const r = await cli(['run', '--json', '--cwd', h.workspace()], {
    env: h.env,
    input: `${scenarioTag('stdin-prompt')} hello from a pipe\n`,
  });
  expect(r.code).toBe(0);
  expect(h.requestsOf('stdin-prompt')[0]!.body.messages.at(-1)).toMatchObject({
    content: `${scenarioTag('stdin-prompt')} hello from a pipe`,
  });
});

test('run --detach prints the id; watch streams the session to its result; usage and show read it', async () => {
  const d = await cli(
    runArgs('detached', [turn.tool('Glob', { pattern: '*' }, { delay_ms: 300 }), turn.text('Finished later.')], '--detach'),
    { env: h.env },
  );
  expect(d.code).toBe(0);
  const id = d.stdout.trim();
  expect(id).toMatch(/^session-/);

  const w = await cli(['watch', id, '--json'], { env: h.env });
  expect(w.code).toBe(0);
  const messages = jsonLines<SessionEvent>(w.stdout);
  expect(kinds(messages)[0]).toBe('system/init');
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Finished later.' });

  const after = await cli(['watch', id, '--json', '--after', String(messages.at(-2)!.seq)], { env: h.env });
  expect(jsonLines<SessionEvent>(after.stdout).map((m) => m.type)).toEqual(['result']);

  const u = await cli(['usage', id], { env: h.env });
  expect(u.code).toBe(0);
  expect(u.stdout).toMatch(/^tokens: in \d+ \(cached 0\) · out \d+ · cost \$\d/);
  const uj = JSON.parse((await cli(['usage', id, '--json'], { env: h.env })).stdout) as { perModel: Record<string, unknown> };
  expect(Object.keys(uj.perModel)).toEqual(['gpt-4.1-mini']);

  const s = await cli(['show', id], { env: h.env });
  expect(s.code).toBe(0);
  expect(s.stdout).toContain(`> ${scenarioTag('detached')} Do the task.`);
  expect(s.stdout).toContain('Finished later.');
  expect(s.stdout).toMatch(/✓ success/);
  const sj = jsonLines<Message>((await cli(['show', id, '--json'], { env: h.env })).stdout);
  expect(sj.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
});

test('interrupt, set-model and cancel steer a detached session', async () => {
  const slow = (text: string) => turn.text(text, { delay_ms: 600_000 });
  const id1 = (await cli(runArgs('to-interrupt', [slow('never')], '--detach'), { env: h.env })).stdout.trim();
  await waitFor('the model call to interrupt', () => h.requestsOf('to-interrupt').length > 0);
  expect((await cli(['interrupt', id1], { env: h.env })).code).toBe(0);
  const w1 = await cli(['watch', id1, '--json'], { env: h.env });
  expect(w1.code).toBe(1);
  expect(jsonLines<SessionEvent>(w1.stdout).at(-1)).toMatchObject({ type: 'result', exit_reason: 'interrupted' });

  // The first turn's Bash runs until the new model is in the session's state.
  const g = h.gate();
  const id2 = (
    await cli(runArgs('to-switch', [turn.tool('Bash', { command: g.command }), turn.text('ok')], '--detach'), { env: h.env })
  ).stdout.trim();
  await waitFor('the first model call', () => h.requestsOf('to-switch').length > 0);
  expect((await cli(['set-model', id2, 'gpt-4.1'], { env: h.env })).code).toBe(0);
  const switching = await h.client.get(id2);
  await waitFor('the new model in the session state', async () => (await switching.state()).model === 'gpt-4.1');
  g.release();
  expect((await cli(['watch', id2], { env: h.env })).code).toBe(0);
  expect(h.requestsOf('to-switch').map((q) => q.body.model)).toEqual(['gpt-4.1-mini', 'gpt-4.1']);

  const id3 = (await cli(runArgs('to-cancel', [slow('never')], '--detach'), { env: h.env })).stdout.trim();
  await waitFor('the model call to cancel', () => h.requestsOf('to-cancel').length > 0);
  expect((await cli(['cancel', id3], { env: h.env })).code).toBe(0);
  const w3 = await cli(['watch', id3, '--json'], { env: h.env });
  expect(w3.code).toBe(1);
  expect(jsonLines<SessionEvent>(w3.stdout).at(-1)).toMatchObject({ type: 'result', exit_reason: 'aborted' });
});

test('send: a follow-up message to an interactive session starts a turn; a one-shot session refuses it', async () => {
  const id = (
    await cli(runArgs('chat', [turn.text('Hello! What next?'), turn.text('Done with the second thing.')], '--interactive', '--detach'), {
      env: h.env,
    })
  ).stdout.trim();
  const sent = await cli(['send', id, 'Now', 'the', 'second', 'thing', '--id', 'msg-1'], { env: h.env });
  expect(sent.code).toBe(0);
  expect(sent.stdout.trim()).not.toBe('');
  const again = await cli(['send', id, 'Now the second thing', '--id', 'msg-1'], { env: h.env });
  expect(again.stdout).toMatch(/duplicate/);
  const chat = await h.client.get(id);
  await waitFor('the second turn', async () => (await chat.turnCount()) === 2);
  const transcript = await chat.transcript();
  expect(transcript.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
    `${scenarioTag('chat')} Do the task.`,
    'Now the second thing',
  ]);
  await chat.close();

  // The one-shot session is still running (its Bash waits for the test) when the message is sent.
  const g = h.gate();
  const oneShot = (
    await cli(runArgs('one-shot', [turn.tool('Bash', { command: g.command }), turn.text('bye')], '--detach'), { env: h.env })
  ).stdout.trim();
  const refused = await cli(['send', oneShot, 'more'], { env: h.env });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/rejected: .*not interactive/);
  g.release();
  expect(await (await h.client.get(oneShot)).result()).toMatchObject({ subtype: 'success', result: 'bye' });
});

test('ls lists sessions by status from their search attributes', async () => {
  const id = (await cli(runArgs('listed', [turn.text('slowly', { delay_ms: 60_000 })], '--detach'), { env: h.env })).stdout.trim();
  await waitFor('the session listed as running', async () => {
    const r = await cli(['ls', '--status', 'running', '--json', '--limit', '500'], { env: h.env });
    return jsonLines<{ sessionId: string }>(r.stdout).some((s) => s.sessionId === id);
  });
  const table = await cli(['ls', '--status', 'running', '--limit', '500'], { env: h.env });
  expect(table.stdout.split('\n')[0]).toMatch(/^ID +STATUS +MODEL +TURNS +COST +STARTED$/);
  expect(table.stdout).toMatch(new RegExp(`^${id} +running +gpt-4\\.1-mini +0 +\\$0\\.0000`, 'm'));
  await cli(['cancel', id], { env: h.env });
});

describe('Ctrl-C on an attached run', () => {
  /** The CLI says it is attached once its Ctrl-C handler is in place. */
  const ATTACHED = /\(Ctrl-C interrupts the turn\)/;

  test('interrupts the current turn; the session ends interrupted and the CLI exits 1', async () => {
    const p = spawnCli(runArgs('ctrl-c', [turn.text('never', { delay_ms: 600_000 })]), { env: h.env });
    await p.waitForLine(ATTACHED);
    await waitFor('the model call', () => h.requestsOf('ctrl-c').length > 0);
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.stderr).toMatch(/interrupting the current turn/);
    expect(r.stdout).toMatch(/✗ error_during_execution \(interrupted\)/);
    expect(r.code).toBe(1);
  });

  test('a second Ctrl-C (no terminal) detaches: exit 0, the session goes on', async () => {
    // Interactive: after the interrupted turn the session waits for input instead of ending, so
    // the second Ctrl-C cannot arrive after the CLI has already exited.
    const id = `ctrl-c-twice-${RUN}`;
    const p = spawnCli(runArgs('ctrl-c-twice', [turn.text('never', { delay_ms: 600_000 })], '--interactive', '--id', id), { env: h.env });
    await p.waitForLine(ATTACHED);
    await waitFor('the model call', () => h.requestsOf('ctrl-c-twice').length > 0);
    p.child.kill('SIGINT');
    await p.waitForLine(/Ctrl-C again to detach/);
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`detached; session ${id} goes on \\(durable-agent watch ${id}\\)`));
    const session = await h.client.get(id);
    await waitFor('the interrupted turn', async () => (await session.state()).status === 'waiting_for_input');
    const results = (await session.events()).events.filter((m) => m.type === 'result');
    expect(results).toEqual([expect.objectContaining({ exit_reason: 'interrupted' })]);
    expect((await session.workflow.describe()).status.name).toBe('RUNNING');
    await session.close();
  });
});
