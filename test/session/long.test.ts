/**
 * Long sessions: interactive follow-ups (one sent while the worker is down), continue-as-new
 * followed transparently, the done tool, and the final summary at maxTurns.
 */
import { turn } from '../../src/testing/scripted-model';
import { closeSignal, sendMessageUpdate } from '../../src/shared/api';
import { DONE_REMINDER, FINAL_SUMMARY_PROMPT } from '../../src/shared/model-texts';
import type { ResultMessage } from '../../src/shared/events';
import { collect, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

test('an interactive session takes three messages, one while the worker is down, and closes', async () => {
  const handle = await h.start(
    { name: 'interactive', turns: [turn.text('first answer'), turn.text('second answer'), turn.text('third answer')] },
    { interactive: true },
  );
  const waiting = () => waitFor('waiting_for_input', async () => (await handle.state()).status === 'waiting_for_input');
  await waiting();
  const send = (text: string, id?: string) => handle.workflow.executeUpdate(sendMessageUpdate, { args: [{ text, id }] });

  expect(await send('second question', 'm2')).toEqual({ turnId: 'turn-2', duplicate: false });
  expect(await send('second question', 'm2')).toEqual({ turnId: 'turn-2', duplicate: true });
  await waitFor('turn 2', async () => (await handle.turnCount()) === 2 && (await handle.state()).status === 'waiting_for_input');

  await h.stopWorker();
  const third = send('third question', 'm3'); // accepted by the server, applied once a worker is back
  await waitFor('the server to hold the update for a worker', async () =>
    Boolean((await handle.workflow.describe()).raw.pendingWorkflowTask),
  );
  await h.startWorker();
  expect(await third).toEqual({ turnId: 'turn-3', duplicate: false });
  await waitFor('turn 3', async () => (await handle.turnCount()) === 3 && (await handle.state()).status === 'waiting_for_input');

  await handle.workflow.signal(closeSignal);
  const final = await handle.result();
  expect(final).toMatchObject({ subtype: 'success', result: 'third answer', num_turns: 3 });

  const messages = await collect(handle);
  expect(messages.filter((m): m is ResultMessage => m.type === 'result').map((r) => r.result)).toEqual([
    'first answer',
    'second answer',
    'third answer',
  ]);
  const transcript = await handle.transcript();
  expect(
    transcript.map((m) => [m.role, typeof m.content === 'string' ? m.content.replace(/^\[scenario:[^\]]+\] /, '') : 'blocks']),
  ).toEqual([
    ['user', 'Do the task.'],
    ['assistant', 'blocks'],
    ['user', 'second question'],
    ['assistant', 'blocks'],
    ['user', 'third question'],
    ['assistant', 'blocks'],
  ]);
  await expect(send('too late')).rejects.toThrow();
});

test('sendMessage is rejected with a reason for a one-shot session', async () => {
  // Still running (its Bash waits for the test) when the message comes.
  const g = h.gate();
  const handle = await h.start({ name: 'not-interactive', turns: [turn.tool('Bash', { command: g.command }), turn.text('done')] }, {});
  const err = await handle.workflow.executeUpdate(sendMessageUpdate, { args: [{ text: 'more' }] }).then(
    () => undefined,
    (e: Error & { cause?: Error }) => e,
  );
  expect(err?.cause?.message).toBe(
    'sendMessage: this session is not interactive (start it with interactive: true); a running turn can be steered with steer: true',
  );
  g.release();
  expect(await handle.result()).toMatchObject({ subtype: 'success', result: 'done' });
});

test('continue-as-new is followed transparently: one stream, continuous seq, full transcript', async () => {
  const turns = Array.from({ length: 8 }, (_, i) => turn.tool('Bash', { command: `echo step ${i}` }));
  const { handle, messages, result } = await h.run(
    { name: 'can', turns: [...turns, turn.text('all steps done')] },
    { continueAsNewEveryTurns: 3 },
  );
  expect(result).toMatchObject({ subtype: 'success', num_turns: 9, result: 'all steps done' });
  expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i));
  const transcript = await handle.transcript();
  expect(transcript).toHaveLength(18);
  // Several runs: the first run's history ends with a continue-as-new.
  const firstRunId = handle.workflow.firstExecutionRunId!;
  const first = await h.client.client.workflow.getHandle(handle.sessionId, firstRunId).fetchHistory();
  const lastEvent = first.events![first.events!.length - 1]!;
  expect(lastEvent.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  expect((await handle.workflow.describe()).runId).not.toBe(firstRunId);
  // Each model call still saw the whole conversation so far.
  expect(h.requestsOf('can').map((r) => r.turnIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

test('requireDoneTool: a reply without tool calls does not end the session; TaskComplete does', async () => {
  const { result } = await h.run(
    {
      name: 'done-tool',
      turns: [turn.text('I think I am finished.'), turn.tool('TaskComplete', { message: 'Fixed the bug and ran the tests.' })],
    },
    { requireDoneTool: true },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'Fixed the bug and ran the tests.', num_turns: 2 });
  const second = h.requestsOf('done-tool')[1]!.body;
  expect(second.messages[second.messages.length - 1]).toEqual({ role: 'user', content: DONE_REMINDER });
  expect((second.tools ?? []).map((t) => (t as { function: { name: string } }).function.name)).toContain('TaskComplete');
});

test('finalSummary: at maxTurns one last call without tools writes the result text', async () => {
  const { result } = await h.run(
    {
      name: 'final-summary',
      turns: [
        turn.tool('Glob', { pattern: '*' }),
        turn.tool('Glob', { pattern: '*.ts' }),
        turn.text('Listed files; nothing else was done.'),
      ],
    },
    { maxTurns: 2, finalSummary: true },
  );
  expect(result).toMatchObject({ subtype: 'error_max_turns', num_turns: 2, result: 'Listed files; nothing else was done.' });
  const last = h.requestsOf('final-summary')[2]!.body;
  expect(last.tools).toBeUndefined();
  expect(last.messages[last.messages.length - 1]).toEqual({ role: 'user', content: FINAL_SUMMARY_PROMPT });
});
