/**
 * `durable-agent resume ID [prompt] [--fork]`: a new session (or a new run of the same one) that
 * continues another's conversation. The client sends `resume` (+ `forkSession`) in the session
 * config; the workflow loads the earlier transcript before its first turn.
 */
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { scenarioTag, useHarness } from '../helpers/harness';
import { cli, jsonLines } from './helpers';

const RUN = Date.now().toString(36);
const h = useHarness();

const conversation = (scenario: string, i: number) =>
  h
    .requestsOf(scenario)
    [i]!.body.messages.filter((m) => m.role !== 'system')
    .map((m) => [m.role, m.content]);

test('resume ID continues the conversation under the same id: the model sees the earlier turns', async () => {
  const id = `resumable-${RUN}`;
  h.model.addScenario({ name: 'resumable', turns: [turn.text('first answer'), turn.text('second answer')] });
  const first = await cli(['run', `${scenarioTag('resumable')} first question`, '--id', id, '--cwd', h.workspace(), '--json'], {
    env: h.env,
  });
  expect(first.code).toBe(0);

  const again = await cli(['resume', id, 'second', 'question', '--json'], { env: h.env });
  expect(again.stderr).toBe('');
  expect(again.code).toBe(0);
  const messages = jsonLines<SessionEvent>(again.stdout);
  expect(messages.every((m) => m.session_id === id)).toBe(true);
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'second answer' });
  expect(conversation('resumable', 1)).toEqual([
    ['user', `${scenarioTag('resumable')} first question`],
    ['assistant', 'first answer'],
    ['user', 'second question'],
  ]);
  const transcript = await (await h.client.get(id)).transcript();
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
});

test('resume --fork starts a new session from the transcript and leaves the original as it was', async () => {
  const id = `forkable-${RUN}`;
  h.model.addScenario({ name: 'forkable', turns: [turn.text('one'), turn.text('two')] });
  expect((await cli(['run', `${scenarioTag('forkable')} start`, '--id', id, '--cwd', h.workspace(), '--json'], { env: h.env })).code).toBe(
    0,
  );

  const fork = await cli(['resume', id, 'branch', 'off', '--fork', '--json'], { env: h.env });
  expect(fork.code).toBe(0);
  const messages = jsonLines<SessionEvent>(fork.stdout);
  const forkId = messages[0]!.session_id;
  expect(forkId).not.toBe(id);
  expect(messages.at(-1)).toMatchObject({ type: 'result', result: 'two' });
  expect(conversation('forkable', 1)).toEqual([
    ['user', `${scenarioTag('forkable')} start`],
    ['assistant', 'one'],
    ['user', 'branch off'],
  ]);
  expect((await (await h.client.get(id)).transcript()).map((m) => m.role)).toEqual(['user', 'assistant']);
});

test('resume refuses a session that is still running (without --fork) and an unknown session', async () => {
  const id = `still-running-${RUN}`;
  h.model.addScenario({ name: 'still-running', turns: [turn.text('slow', { delay_ms: 60_000 })] });
  expect(
    (await cli(['run', `${scenarioTag('still-running')} go`, '--id', id, '--cwd', h.workspace(), '--detach'], { env: h.env })).code,
  ).toBe(0);
  const r = await cli(['resume', id, 'more'], { env: h.env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/is still running/);
  await (await h.client.get(id)).cancel();

  const unknown = await cli(['resume', `nobody-${RUN}`, 'hello'], { env: h.env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/no session with id nobody-/);
});

test('resume of a session with callback hooks is refused: only the program that declared them can answer', async () => {
  const id = `with-callbacks-${RUN}`;
  const handle = await h.start(
    { name: 'with-callbacks', turns: [turn.text('answered')] },
    // PreCompact never fires here: the session ends without asking anyone.
    { sessionId: id, clientHooks: { PreCompact: [{ hooks: 1 }] } },
  );
  expect(await handle.result()).toMatchObject({ subtype: 'success' });
  const again = await cli(['resume', id, 'more'], { env: h.env });
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(
    `session ${id} has callback hooks (clientHooks: PreCompact), which only the program that started it with query() can answer; the CLI cannot`,
  );
});
