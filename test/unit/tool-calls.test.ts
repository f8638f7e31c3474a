import { discardTruncatedToolCalls, invalidCallReason, scheduleBatches, visibleTools } from '../../src/workflows/session/tool-calls';
import type { ToolSpec } from '../../src/shared/tools';

const spec = (name: string, readOnly: boolean, schema: Record<string, unknown> = { type: 'object', properties: {} }): ToolSpec => ({
  name,
  description: name,
  inputSchema: schema,
  readOnly,
});

describe('discardTruncatedToolCalls', () => {
  it('drops tool calls cut off by max_tokens', () => {
    const tu = { type: 'tool_use' as const, id: 't1', name: 'Read', input: {} };
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
  const specs = [
    spec('Read', true, {
      type: 'object',
      properties: { file_path: { type: 'string' }, limit: { type: 'integer' } },
      required: ['file_path'],
      additionalProperties: false,
    }),
  ];
  it('names the available tools for an unknown one', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Nope', input: {} }, specs)).toBe(
      'Error: No such tool available: Nope. Available tools: Read',
    );
  });
  it('reports malformed JSON arguments with the raw text', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Read', input: {}, raw_input: '{bad' }, specs)).toMatch(
      /not valid JSON \(\{bad\)/,
    );
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
