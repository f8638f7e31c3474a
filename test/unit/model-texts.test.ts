/**
 * A few of the texts the model reads, pinned to the byte: recorded sessions hold them, so a change
 * must be deliberate (the rest are pinned by the tests of the code that sends them).
 */
import {
  DEFAULT_DENY_MESSAGE,
  HOOK_DENIED,
  INTERRUPTED_RESULT,
  outputRetryNotice,
  restoredNote,
  subagentStoppedText,
  SUBAGENT_SAID_NOTHING,
} from '../../src/shared/model-texts';

test('refusals and denials', () => {
  expect(INTERRUPTED_RESULT).toBe('Interrupted by user: the tool call was cancelled before it finished.');
  expect(DEFAULT_DENY_MESSAGE).toBe('The user denied this tool call.');
  expect(HOOK_DENIED).toBe('Denied by a PreToolUse hook.');
});

test('the output-schema retry notice', () => {
  expect(outputRetryNotice('missing `x`')).toBe(
    'Your final reply must be only a JSON value that matches the output schema, with no other text. It did not: missing `x`. Reply again with only the JSON.',
  );
});

test('the restored-folder note', () => {
  expect(restoredNote({ lostHost: 'h1', host: 'h2', path: '/w', turn: 3, commit: '0123456789abcdef', now: 5 })).toBe(
    "The tools host that held this session's files (h1) was lost. The folder /w was restored on h2 from its last checkpoint " +
      '(0123456789ab), as it was at the end of turn 3. Files written and commands run after that checkpoint happened on the lost ' +
      'host and are not in the folder now (turn 5 is the current turn): check the files before relying on earlier results.',
  );
  expect(restoredNote({ lostHost: 'h1', host: 'h2', path: '/w', turn: 0, commit: 'abc', now: 1 })).toContain(
    '(abc), as the session found it.',
  );
});

test('subagent results', () => {
  expect(SUBAGENT_SAID_NOTHING).toBe('(the subagent said nothing)');
  expect(subagentStoppedText('explorer', 'error_max_turns', 'Reached the maximum number of turns (2).', 'half done')).toBe(
    'Error: the explorer subagent stopped (error_max_turns): Reached the maximum number of turns (2).\n\nIts last words: half done',
  );
  expect(subagentStoppedText('explorer', 'error_during_execution', 'boom', '')).toBe(
    'Error: the explorer subagent stopped (error_during_execution): boom',
  );
});
