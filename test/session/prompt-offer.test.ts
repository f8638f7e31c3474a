/**
 * A worker running both the workflow and the model role hands each model call its prompt in
 * memory (ARCHITECTURE.md#prompt-offer): the provider gets the same conversation the `prompt`
 * query would have given, and no call needed the query.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

const h = useHarness();

test('every model call of a session takes its prompt from the offer, and the provider sees every tool result', async () => {
  const ws = h.workspace();
  writeFileSync(path.join(ws, 'a.txt'), 'alpha-content\n');
  writeFileSync(path.join(ws, 'b.txt'), 'beta-content\n');
  const before = { ...h.worker.promptOffers! };
  const { result } = await h.run(
    {
      name: 'offered',
      turns: [
        turn.tool('Read', { file_path: path.join(ws, 'a.txt') }),
        turn.tool('Read', { file_path: path.join(ws, 'b.txt') }),
        turn.text('done'),
      ],
    },
    { cwd: ws, permissionMode: 'bypassPermissions' },
  );
  expect(result.subtype).toBe('success');
  const after = h.worker.promptOffers!;
  expect({ offered: after.offered - before.offered, taken: after.taken - before.taken }).toEqual({ offered: 3, taken: 3 });

  const requests = h.requestsOf('offered');
  expect(requests).toHaveLength(3);
  const last = requests[2]!.body.messages;
  expect(last[0]).toMatchObject({ role: 'system' });
  const toolResults = last.filter((m) => m.role === 'tool').map((m) => String(m.content));
  expect(toolResults).toHaveLength(2);
  expect(toolResults[0]).toContain('alpha-content');
  expect(toolResults[1]).toContain('beta-content');
  // Each request extends the previous one: the offered prompt is the whole transcript so far.
  expect(requests[2]!.body.messages.slice(0, requests[1]!.body.messages.length)).toEqual(requests[1]!.body.messages);
});
