/**
 * What a user turn has gathered for its result (error notes, the last stop reason) lives in the
 * carried state, so a continue-as-new between two model calls of one turn loses none of it.
 */
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

const h = useHarness();

test('an error note recorded before a continue-as-new is still in the final result', async () => {
  const { handle, result } = await h.run(
    {
      name: 'note-across-can',
      turns: [
        // The primary model fails; its note goes into the turn's errors and the fallback answers.
        turn.tool('Bash', { command: 'echo one' }, { faults: [{ status: 503 }] }),
        turn.tool('Bash', { command: 'echo two' }),
      ],
    },
    {
      retry: { maxAttempts: 1, initialIntervalMs: 100, maximumIntervalMs: 100 },
      fallbackModel: 'gpt-4.1-nano',
      continueAsNewEveryTurns: 1,
      maxTurns: 2,
    },
  );
  // The session really continued as new between its two model calls.
  const desc = await handle.workflow.describe();
  expect(desc.runId).not.toBe(handle.workflow.firstExecutionRunId);
  expect(result).toMatchObject({ subtype: 'error_max_turns', num_turns: 2, stop_reason: 'tool_use' });
  expect(result.errors).toEqual([
    expect.stringMatching(/^gpt-4\.1-mini: Model request failed .*503/),
    'Reached the maximum number of turns (2).',
  ]);
});
