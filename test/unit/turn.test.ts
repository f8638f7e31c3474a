import {
  afterTools,
  beforeModelCall,
  endsSession,
  OUTPUT_RETRIES,
  resolveTurn,
  resultSubtype,
  unhandledStep,
  type NextStep,
  type ReplyFacts,
} from '../../src/workflows/session/turn';
import { BUDGET_REFUSAL } from '../../src/shared/model-texts';
import type { ContentBlock, ToolUseBlock } from '../../src/shared/messages';

const base = { turnCount: 0, costUsd: 0, interrupted: false, cancelled: false };
const facts: ReplyFacts = { ...base, turnCount: 1, requireDoneTool: false, contextNearlyFull: false };
const tu: ToolUseBlock = { type: 'tool_use', id: 't1', name: 'Read', input: {} };
const text: ContentBlock = { type: 'text', text: 'hi' };

describe('beforeModelCall', () => {
  it('goes on when nothing applies', () => expect(beforeModelCall(base)).toBeNull());
  it('stops at exactly maxTurns', () => {
    expect(beforeModelCall({ ...base, turnCount: 2, maxTurns: 3 })).toBeNull();
    expect(beforeModelCall({ ...base, turnCount: 3, maxTurns: 3 })).toBe('max_turns');
  });
  it('stops when cost reaches the budget (the boundary counts)', () => {
    expect(beforeModelCall({ ...base, costUsd: 0.99, maxBudgetUsd: 1 })).toBeNull();
    expect(beforeModelCall({ ...base, costUsd: 1, maxBudgetUsd: 1 })).toBe('max_budget');
  });
  it('checks turns before budget', () => {
    expect(beforeModelCall({ ...base, turnCount: 3, maxTurns: 3, costUsd: 2, maxBudgetUsd: 1 })).toBe('max_turns');
  });
  it('distinguishes interrupt from cancellation, and both win over limits', () => {
    expect(beforeModelCall({ ...base, interrupted: true, turnCount: 5, maxTurns: 1 })).toBe('interrupted');
    expect(beforeModelCall({ ...base, cancelled: true, turnCount: 5, maxTurns: 1 })).toBe('aborted');
    expect(beforeModelCall({ ...base, cancelled: true, interrupted: true })).toBe('interrupted');
  });
});

describe('resolveTurn', () => {
  describe('run_tools', () => {
    it('runs the calls of a tool_use reply', () => {
      expect(resolveTurn({ stop_reason: 'tool_use', content: [text, tu] }, facts)).toEqual({ type: 'run_tools', calls: [tu] });
    });
    it('runs calls a provider returned with end_turn rather than drop them', () => {
      expect(resolveTurn({ stop_reason: 'end_turn', content: [tu] }, facts)).toEqual({ type: 'run_tools', calls: [tu] });
    });
    it('runs when the cost is just under the budget', () => {
      expect(resolveTurn({ stop_reason: 'tool_use', content: [tu] }, { ...facts, costUsd: 0.99, maxBudgetUsd: 1 }).type).toBe('run_tools');
    });
  });
  describe('refuse_tools', () => {
    it('answers the calls as not run once the reply brought the cost to the budget', () => {
      expect(resolveTurn({ stop_reason: 'tool_use', content: [tu] }, { ...facts, costUsd: 1, maxBudgetUsd: 1 })).toEqual({
        type: 'refuse_tools',
        calls: [tu],
        exit: 'max_budget',
        reason: BUDGET_REFUSAL,
      });
    });
    it('does not apply to a reply without calls: that one ends the turn normally', () => {
      expect(resolveTurn({ stop_reason: 'end_turn', content: [text] }, { ...facts, costUsd: 5, maxBudgetUsd: 1 })).toEqual({
        type: 'finish',
        exit: 'end_turn',
      });
    });
  });
  describe('remind_done', () => {
    it('reminds the model when requireDoneTool is on and it stopped without calling the tool', () => {
      expect(resolveTurn({ stop_reason: 'end_turn', content: [text] }, { ...facts, requireDoneTool: true })).toEqual({
        type: 'remind_done',
      });
      expect(resolveTurn({ stop_reason: 'tool_use', content: [text] }, { ...facts, requireDoneTool: true })).toEqual({
        type: 'remind_done',
      });
    });
  });
  describe('structured output (outputFormat)', () => {
    const out = (retries: number) => ({ ...facts, output: { retries } });
    it('finishes with the value of a final reply that matched', () => {
      expect(resolveTurn({ stop_reason: 'end_turn', content: [text], structured: { value: { a: 1 } } }, out(0))).toEqual({
        type: 'finish',
        exit: 'end_turn',
        structured: { value: { a: 1 } },
      });
    });
    it('sends a reply that did not match back with why, until the retries are spent', () => {
      const reply = { stop_reason: 'end_turn' as const, content: [text], structured: { error: 'no' } };
      expect(resolveTurn(reply, out(OUTPUT_RETRIES - 1))).toEqual({ type: 'retry_output', error: 'no' });
      expect(resolveTurn(reply, out(OUTPUT_RETRIES))).toEqual({ type: 'finish', exit: 'max_structured_output_retries' });
    });
    it('never takes an unchecked reply (a worker that predates outputFormat) as the output', () => {
      const step = resolveTurn({ stop_reason: 'end_turn', content: [text] }, out(0));
      expect(step).toMatchObject({ type: 'retry_output', error: expect.stringContaining('did not check the reply') });
    });
    it('runs tool calls as always: only a reply without calls is final', () => {
      expect(resolveTurn({ stop_reason: 'tool_use', content: [tu] }, out(0))).toEqual({ type: 'run_tools', calls: [tu] });
    });
    it('maps its exit to the SDK subtype', () => {
      expect(resultSubtype('max_structured_output_retries')).toBe('error_max_structured_output_retries');
    });
  });
  describe('compact_and_continue', () => {
    it('compacts after a cut-off when the context is nearly full', () => {
      expect(resolveTurn({ stop_reason: 'max_tokens', content: [text] }, { ...facts, contextNearlyFull: true })).toEqual({
        type: 'compact_and_continue',
        otherwise: 'max_tokens',
      });
    });
  });
  describe('finish', () => {
    it('ends the turn on end_turn, and on tool_use without calls', () => {
      expect(resolveTurn({ stop_reason: 'end_turn', content: [text] }, facts)).toEqual({ type: 'finish', exit: 'end_turn' });
      expect(resolveTurn({ stop_reason: 'tool_use', content: [text] }, facts)).toEqual({ type: 'finish', exit: 'end_turn' });
    });
    it('ends with max_tokens when the context is not what ran out', () => {
      expect(resolveTurn({ stop_reason: 'max_tokens', content: [tu] }, facts)).toEqual({ type: 'finish', exit: 'max_tokens' });
    });
    it('ends on a stop sequence, whatever else holds', () => {
      expect(
        resolveTurn({ stop_reason: 'stop_sequence', content: [tu] }, { ...facts, requireDoneTool: true, contextNearlyFull: true }),
      ).toEqual({
        type: 'finish',
        exit: 'stop_sequence',
      });
    });
  });
});

describe('afterTools', () => {
  const none = { interrupted: false, cancelled: false, doneToolCalled: false };
  it('calls the model again when nothing happened', () => expect(afterTools(none)).toBeNull());
  it('ends the turn when the done tool was called', () => expect(afterTools({ ...none, doneToolCalled: true })).toBe('end_turn'));
  it('interrupt and cancellation win over the done tool', () => {
    expect(afterTools({ ...none, interrupted: true, doneToolCalled: true })).toBe('interrupted');
    expect(afterTools({ ...none, cancelled: true, doneToolCalled: true })).toBe('aborted');
    expect(afterTools({ ...none, cancelled: true, interrupted: true })).toBe('interrupted');
  });
});

describe('endsSession', () => {
  const one = { interactive: false, closed: false };
  const open = { interactive: true, closed: false };
  it('every exit ends a one-shot session', () => {
    for (const exit of ['end_turn', 'interrupted', 'model_error', 'max_tokens'] as const) expect(endsSession(exit, one)).toBe(true);
  });
  it('an interactive session waits after a normal end, an interrupt, an error', () => {
    for (const exit of ['end_turn', 'interrupted', 'model_error', 'max_tokens', 'stop_sequence'] as const)
      expect(endsSession(exit, open)).toBe(false);
  });
  it('limits, cancellation and a failed start end an interactive session', () => {
    for (const exit of ['max_turns', 'max_budget', 'aborted', 'setup_error'] as const) expect(endsSession(exit, open)).toBe(true);
  });
  it('a closed session ends', () => expect(endsSession('end_turn', { interactive: true, closed: true })).toBe(true));
});

describe('resultSubtype', () => {
  it('maps exits to the result subtypes', () => {
    expect(resultSubtype('end_turn')).toBe('success');
    expect(resultSubtype('max_turns')).toBe('error_max_turns');
    expect(resultSubtype('max_budget')).toBe('error_max_budget_usd');
    for (const r of ['max_tokens', 'interrupted', 'aborted', 'stop_sequence', 'model_error', 'setup_error'] as const) {
      expect(resultSubtype(r)).toBe('error_during_execution');
    }
  });
});

test('a switch over NextStep must handle every kind: one that misses a kind does not compile', () => {
  const kind = (step: NextStep): string => {
    switch (step.type) {
      case 'finish':
      case 'run_tools':
        return step.type;
      default:
        // @ts-expect-error -- the other four kinds reach `default`, so `step` is not `never` (tsc checks this line).
        return unhandledStep(step);
    }
  };
  expect(kind({ type: 'finish', exit: 'end_turn' })).toBe('finish');
  // Reached at run time anyway (a step from newer code), it throws: the workflow task fails, not the session.
  expect(() => kind({ type: 'remind_done' })).toThrow('no handling for the step {"type":"remind_done"}');
});
