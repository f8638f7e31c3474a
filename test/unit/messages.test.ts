import {
  addUsage,
  ContentBlock,
  emptyUsage,
  Message,
  textOf,
  tokenCounts,
  toolUsesOf,
  type ModelUsageEntry,
  type ToolUseBlock,
} from '../../src/shared/messages';

const use: ToolUseBlock = { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } };

test('textOf: a string is its own text; blocks give their text parts joined, nothing else', () => {
  expect(textOf('plain')).toBe('plain');
  expect(
    textOf([
      { type: 'thinking', thinking: 'hmm' },
      { type: 'text', text: 'one ' },
      use,
      { type: 'tool_result', tool_use_id: 't1', content: 'result' },
      { type: 'text', text: 'two' },
    ]),
  ).toBe('one two');
  expect(textOf([use])).toBe('');
});

test('toolUsesOf: the tool calls in order; none in a string', () => {
  const second: ToolUseBlock = { ...use, id: 't2' };
  expect(toolUsesOf('call Read')).toEqual([]);
  expect(toolUsesOf([{ type: 'text', text: 'x' }, use, { type: 'tool_result', tool_use_id: 't0', content: '' }, second])).toEqual([
    use,
    second,
  ]);
});

test('emptyUsage is all zeros and a fresh object each time', () => {
  expect(emptyUsage()).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  const a = emptyUsage();
  a.input_tokens = 5;
  expect(emptyUsage().input_tokens).toBe(0);
});

test('addUsage adds every token count in place, snake_case or camelCase; a missing or null count adds 0', () => {
  const total = emptyUsage();
  addUsage(total, { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 });
  addUsage(total, { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: null });
  expect(total).toEqual({ input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 });

  const entry: ModelUsageEntry = {
    inputTokens: 1,
    outputTokens: 2,
    cacheReadInputTokens: 3,
    cacheCreationInputTokens: 4,
    costUSD: 0.5,
    contextWindow: 1000,
    costBasis: 'table',
  };
  addUsage(entry, { inputTokens: 10, outputTokens: 20, cacheReadInputTokens: 30, cacheCreationInputTokens: 40 });
  expect(entry).toEqual({
    inputTokens: 11,
    outputTokens: 22,
    cacheReadInputTokens: 33,
    cacheCreationInputTokens: 44,
    costUSD: 0.5,
    contextWindow: 1000,
    costBasis: 'table',
  });
});

test('tokenCounts is the same counts in camelCase, in the same order, and nothing else', () => {
  const counts = tokenCounts({ input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 });
  expect(Object.entries(counts)).toEqual([
    ['inputTokens', 1],
    ['outputTokens', 2],
    ['cacheReadInputTokens', 3],
    ['cacheCreationInputTokens', 4],
  ]);
});

describe('transcript schemas', () => {
  test('accept every block kind, with the optional fields', () => {
    const m = {
      role: 'assistant',
      content: [
        { type: 'text', text: 't' },
        { type: 'thinking', thinking: 'th' },
        { type: 'tool_use', id: 'i', name: 'n', input: { a: 1 }, raw_input: '{"a":1' },
        { type: 'tool_result', tool_use_id: 'i', content: 'c', is_error: true },
      ],
    };
    expect(Message.parse(m)).toEqual(m);
    expect(Message.parse({ role: 'user', content: 'hi' })).toEqual({ role: 'user', content: 'hi' });
  });

  test.each<[string, unknown]>([
    ['an unknown role', { role: 'system', content: 'x' }],
    ['an unknown block type', { role: 'user', content: [{ type: 'image', data: '' }] }],
    ['a result without its id', { role: 'user', content: [{ type: 'tool_result', content: 'c' }] }],
    ['a non-boolean error flag', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'i', content: 'c', is_error: 'yes' }] }],
    ['raw_input that is not text', { role: 'assistant', content: [{ type: 'tool_use', id: 'i', name: 'n', input: {}, raw_input: 1 }] }],
    ['content that is neither text nor blocks', { role: 'user', content: 3 }],
  ])('refuse %s', (_name, m) => {
    expect(Message.safeParse(m).success).toBe(false);
  });

  test('block types are told apart by their type', () => {
    expect(ContentBlock.safeParse({ type: 'text', thinking: 'x' }).success).toBe(false);
    expect(ContentBlock.safeParse({ type: 'thinking', text: 'x' }).success).toBe(false);
  });
});
