/**
 * Reading a finished session's messages while no worker can answer the `events` query
 * (src/client/stream.ts): the reader keeps asking, and gets every event, the result included,
 * once a worker answers. A closed long run is answered by replaying its whole history; on a
 * loaded machine that outlasted the query's deadline, and the reader used to stop at once,
 * without the result (test/long/two-thousand-turns.test.ts, two suites at once).
 */
import { followEvents } from '../../src/client/stream';
import type { SessionEvent } from '../../src/shared/events';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

jest.setTimeout(300_000);

const h = useHarness();

test('a closed session with no worker to answer: the reader keeps asking and gets every event once a worker is back', async () => {
  const { handle, messages } = await h.run({ name: 'follow-closed', turns: [turn.text('the answer')] }, {});
  await h.stopWorker();
  let unanswered = 0;
  const got: SessionEvent[] = [];
  for await (const e of followEvents(h.client.client, handle.sessionId, {
    pollMs: 50,
    wait: async (ms) => {
      // Called only after a query went unanswered: there is no worker yet.
      if (++unanswered === 1) await h.startWorker();
      await new Promise((r) => setTimeout(r, ms));
    },
  })) {
    got.push(e);
  }
  expect(unanswered).toBeGreaterThan(0);
  expect(got.map((e) => e.seq)).toEqual(messages.map((e) => e.seq));
  expect(got.at(-1)).toMatchObject({ type: 'result', result: 'the answer' });
});
