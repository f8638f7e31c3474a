import { checkTermination, discardTruncatedToolCalls, invalidCallReason, resolveReply, resultSubtype, scheduleBatches, visibleTools } from '../../src/workflows/decide';
import type { ToolSpec } from '../../src/shared/tools';

const spec = (name: string, readOnly: boolean, schema: Record<string, unknown> = { type: 'object', properties: {} }): ToolSpec => ({
  name,
  description: name,
  inputSchema: schema,
  readOnly,
});

describe('checkTermination', () => {
  const base = { turnCount: 0, costUsd: 0, interrupted: false, cancelled: false };
  it('goes on when nothing applies', () => expect(checkTermination(base)).toBeNull());
  it('stops at exactly maxTurns', () => {
    expect(checkTermination({ ...base, turnCount: 2, maxTurns: 3 })).toBeNull();
    expect(checkTermination({ ...base, turnCount: 3, maxTurns: 3 })).toBe('max_turns');
  });
  it('stops when cost reaches the budget', () => {
    expect(checkTermination({ ...base, costUsd: 0.99, maxBudgetUsd: 1 })).toBeNull();
    expect(checkTermination({ ...base, costUsd: 1, maxBudgetUsd: 1 })).toBe('max_budget');
  });
  it('distinguishes interrupt from cancellation, and both win over limits', () => {
    expect(checkTermination({ ...base, interrupted: true, turnCount: 5, maxTurns: 1 })).toBe('interrupted');
    expect(checkTermination({ ...base, cancelled: true })).toBe('aborted');
    expect(checkTermination({ ...base, cancelled: true, interrupted: true })).toBe('interrupted');
  });
});

describe('resolveReply', () => {
  const tu = { type: 'tool_use' as const, id: 't1', name: 'Read', input: {} };
  it('maps the four stop reasons', () => {
    expect(resolveReply({ stop_reason: 'end_turn', content: [] })).toEqual({ type: 'finish', exit: 'end_turn' });
    expect(resolveReply({ stop_reason: 'tool_use', content: [tu] })).toEqual({ type: 'run_tools', calls: [tu] });
    expect(resolveReply({ stop_reason: 'max_tokens', content: [] })).toEqual({ type: 'finish', exit: 'max_tokens' });
    expect(resolveReply({ stop_reason: 'stop_sequence', content: [] })).toEqual({ type: 'finish', exit: 'stop_sequence' });
  });
  it('treats tool_use with no tool calls as end_turn', () => {
    expect(resolveReply({ stop_reason: 'tool_use', content: [{ type: 'text', text: 'hi' }] })).toEqual({ type: 'finish', exit: 'end_turn' });
  });
  it('maps exit reasons to result subtypes (seed 002 table)', () => {
    expect(resultSubtype('end_turn')).toBe('success');
    expect(resultSubtype('max_turns')).toBe('error_max_turns');
    expect(resultSubtype('max_budget')).toBe('error_max_budget_usd');
    for (const r of ['max_tokens', 'interrupted', 'aborted', 'stop_sequence', 'model_error'] as const) {
      expect(resultSubtype(r)).toBe('error_during_execution');
    }
  });
  it('drops tool calls cut off by max_tokens', () => {
    const cut = { type: 'tool_use' as const, id: 't2', name: 'Bash', input: {}, raw_input: '{"comm' };
    expect(discardTruncatedToolCalls([{ type: 'text', text: 'a' }, tu, cut])).toEqual([{ type: 'text', text: 'a' }, tu]);
  });
});

describe('scheduleBatches', () => {
  it('runs consecutive read-only calls together and mutating ones alone, keeping order', () => {
    const calls = [
      { id: 1, readOnly: true },
      { id: 2, readOnly: true },
      { id: 3, readOnly: false },
      { id: 4, readOnly: false },
      { id: 5, readOnly: true },
    ];
    expect(scheduleBatches(calls).map((b) => b.map((c) => c.id))).toEqual([[1, 2], [3], [4], [5]]);
  });
});

describe('invalidCallReason', () => {
  const specs = [spec('Read', true, { type: 'object', properties: { file_path: { type: 'string' }, limit: { type: 'integer' } }, required: ['file_path'], additionalProperties: false })];
  it('names the available tools for an unknown one', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Nope', input: {} }, specs)).toBe('Error: No such tool available: Nope. Available tools: Read');
  });
  it('reports malformed JSON arguments with the raw text', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Read', input: {}, raw_input: '{bad' }, specs)).toMatch(/not valid JSON \(\{bad\)/);
  });
  it('names the offending field', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Read', input: {} }, specs)).toBe(
      'InputValidationError: Read failed due to the following issue: `file_path`: required parameter is missing',
    );
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Read', input: { file_path: '/a', limit: 'ten' } }, specs)).toBe(
      'InputValidationError: Read failed due to the following issue: `limit`: expected integer, received string',
    );
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Read', input: { file_path: '/a' } }, specs)).toBeNull();
  });
});

describe('visibleTools', () => {
  const all = [spec('Read', true), spec('Bash', false), spec('Grep', true)];
  it('keeps only `tools` and drops bare disallowed names, but not specifier rules', () => {
    expect(visibleTools(all, { tools: ['Read', 'Bash'], disallowedTools: [] }).map((s) => s.name)).toEqual(['Read', 'Bash']);
    expect(visibleTools(all, { disallowedTools: ['Bash'] }).map((s) => s.name)).toEqual(['Read', 'Grep']);
    expect(visibleTools(all, { disallowedTools: ['Bash(rm *)'] }).map((s) => s.name)).toEqual(['Read', 'Bash', 'Grep']);
  });
});
