/** The exits added with hooks and interactive rounds: when they happen, what they end, what they say. */
import { afterTools, beforeModelCall, endsSession, exitNote, resultSubtype, type ExitReason } from '../../src/workflows/session/turn';

const base = { turnCount: 0, costUsd: 0, interrupted: false, cancelled: false };
const limits = { maxTurns: 30, maxRounds: 4, maxBudgetUsd: 2.5 };

describe('stopped by a hook', () => {
  test('before a model call: after the user stopping it, before the limits', () => {
    expect(beforeModelCall({ ...base, stoppedByHook: true })).toBe('stopped_by_hook');
    expect(beforeModelCall({ ...base, stoppedByHook: true, turnCount: 9, maxTurns: 1, costUsd: 9, maxBudgetUsd: 1 })).toBe(
      'stopped_by_hook',
    );
    expect(beforeModelCall({ ...base, stoppedByHook: true, interrupted: true })).toBe('interrupted');
    expect(beforeModelCall({ ...base, stoppedByHook: true, cancelled: true })).toBe('aborted');
    expect(beforeModelCall({ ...base, stoppedByHook: false })).toBeNull();
  });

  test("after a turn's tools: after the user stopping it, before the done tool", () => {
    const none = { interrupted: false, cancelled: false, doneToolCalled: false };
    expect(afterTools({ ...none, stoppedByHook: true })).toBe('stopped_by_hook');
    expect(afterTools({ ...none, stoppedByHook: true, doneToolCalled: true })).toBe('stopped_by_hook');
    expect(afterTools({ ...none, stoppedByHook: true, cancelled: true })).toBe('aborted');
    expect(afterTools({ ...none, stoppedByHook: false })).toBeNull();
  });

  test('ends only the turn of an interactive session, as an error', () => {
    expect(endsSession('stopped_by_hook', { interactive: true, closed: false })).toBe(false);
    expect(resultSubtype('stopped_by_hook')).toBe('error_during_execution');
  });
});

test('max_rounds ends an interactive session and reports as max turns', () => {
  expect(endsSession('max_rounds', { interactive: true, closed: false })).toBe(true);
  expect(resultSubtype('max_rounds')).toBe('error_max_turns');
});

describe('exitNote', () => {
  test.each<[ExitReason, string | null]>([
    ['interrupted', 'The session was interrupted.'],
    ['aborted', 'The session was cancelled.'],
    ['max_tokens', 'The model hit its output token limit (max_tokens).'],
    ['stop_sequence', 'The model stopped at a stop sequence.'],
    ['max_turns', 'Reached the maximum number of turns (30).'],
    ['max_rounds', 'Reached the maximum number of rounds (4): this input was not answered.'],
    ['max_budget', 'Reached the maximum budget ($2.5).'],
    ['end_turn', null],
    ['model_error', null],
    ['setup_error', null],
    ['stopped_by_hook', null],
  ])('%s', (exit, note) => {
    expect(exitNote(exit, limits)).toBe(note);
  });
});
