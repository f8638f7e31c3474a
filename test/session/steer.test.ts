/**
 * Steering (a message for the running turn, seen before its next model call) versus a follow-up
 * (waits for the turn to end), and `maxRounds`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

const gated = (gate: string) => turn.tool('Bash', { command: `while [ ! -f '${gate}' ]; do sleep 0.05; done; echo released` });

test('a steer sent during a tool call reaches the model with that call’s result, in the same turn (one-shot session)', async () => {
  const cwd = h.workspace();
  const gate = path.join(cwd, 'gate');
  const handle = await h.start({ name: 'steer-one-shot', turns: [gated(gate), turn.text('steered answer')] }, { cwd });
  await waitFor('the gated Bash call', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  expect(await handle.steer('Also mention the weather.')).toEqual({ turnId: 'turn-1', duplicate: false });
  writeFileSync(gate, '');
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', result: 'steered answer', num_turns: 2 });
  const second = h.model.requests.filter((r) => r.scenario === 'steer-one-shot')[1]!;
  const last = JSON.stringify(second.body.messages.slice(-2));
  expect(last).toContain('released');
  expect(last).toContain('Also mention the weather.');
});

test('a steer that arrives as the model ends its turn still gets an answer in that turn', async () => {
  const handle = await h.start(
    { name: 'steer-late', turns: [turn.text('first answer', { delay_ms: 1_500 }), turn.text('answer to the steer')] },
    {},
  );
  await waitFor('the model call', async () => h.model.requests.some((r) => r.scenario === 'steer-late'));
  await handle.steer('One more thing.');
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', result: 'answer to the steer', num_turns: 2 });
});

test('a steer to a one-shot session that is not running is refused by name', async () => {
  const { handle } = await h.run({ name: 'steer-done', turns: [turn.text('done')] }, {});
  const err = await handle.steer('too late').then(
    () => undefined,
    (e: Error & { cause?: Error }) => e.cause?.message ?? e.message,
  );
  expect(err).toMatch(/session is closed|nothing to steer|workflow execution already completed/i);
});

test('interactive: a follow-up waits for the turn to end; maxRounds ends the session at the next input', async () => {
  const cwd = h.workspace();
  const gate = path.join(cwd, 'gate');
  const handle = await h.start(
    { name: 'rounds', turns: [gated(gate), turn.text('round one'), turn.text('round two')] },
    { cwd, interactive: true, maxRounds: 2 },
  );
  await waitFor('the gated Bash call', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  expect(await handle.send('second question')).toEqual({ turnId: 'turn-2', duplicate: false });
  writeFileSync(gate, '');
  await waitFor(
    'round two answered',
    async () => (await handle.turnCount()) === 3 && (await handle.state()).status === 'waiting_for_input',
  );
  // The follow-up was not part of round one's requests.
  const roundOne = h.model.requests.filter((r) => r.scenario === 'rounds')[1]!;
  expect(JSON.stringify(roundOne.body.messages)).not.toContain('second question');
  await handle.send('third question');
  const messages: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  const results = messages.filter((m) => m.type === 'result');
  expect(results.map((r) => (r as { exit_reason: string }).exit_reason)).toEqual(['end_turn', 'end_turn', 'max_rounds']);
  expect(results[2]).toMatchObject({
    subtype: 'error_max_turns',
    errors: ['Reached the maximum number of rounds (2): this input was not answered.'],
  });
  expect((await handle.workflow.describe()).status.name).toBe('COMPLETED');
});
