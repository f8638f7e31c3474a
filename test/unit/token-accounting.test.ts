import { CompactionConfig } from '../../src/shared/compaction-config';
import type { Message } from '../../src/shared/messages';
import {
  contextUsage,
  contextWindowFor,
  estimateBlockTokens,
  estimateMessageTokens,
  estimateMessagesTokens,
  estimateTokens,
  promptTokensOf,
  resolveCompaction,
  shouldCompact,
} from '../../src/workflows/session/context/token-accounting';

test('estimateTokens: one token per 4 characters, rounded up', () => {
  expect(estimateTokens('')).toBe(0);
  expect(estimateTokens('abc')).toBe(1);
  expect(estimateTokens('abcd')).toBe(1);
  expect(estimateTokens('abcde')).toBe(2);
});

test('blocks are estimated one by one; tool_use counts its name and JSON input', () => {
  expect(estimateBlockTokens({ type: 'text', text: 'x'.repeat(40) })).toBe(10);
  expect(estimateBlockTokens({ type: 'thinking', thinking: 'x'.repeat(8) })).toBe(2);
  // "Read" → 1, '{"file_path":"/a.ts"}' (21 chars) → 6
  expect(estimateBlockTokens({ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a.ts' } })).toBe(7);
  expect(estimateBlockTokens({ type: 'tool_use', id: 't1', name: 'Bash', input: {}, raw_input: '{"command": ' })).toBe(1 + 3);
  expect(estimateBlockTokens({ type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(400) })).toBe(100);
});

test('messages: string content is one block; arrays are summed per block', () => {
  expect(estimateMessageTokens({ role: 'user', content: 'x'.repeat(9) })).toBe(3);
  const m: Message = {
    role: 'assistant',
    content: [
      { type: 'text', text: 'x' },
      { type: 'text', text: 'y' },
    ],
  };
  expect(estimateMessageTokens(m)).toBe(2); // per block, so not ceil(2/4) = 1
  expect(estimateMessagesTokens([m, { role: 'user', content: 'abcd' }])).toBe(3);
});

test('promptTokensOf adds the cached tokens back', () => {
  expect(promptTokensOf({ input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 10 })).toBe(
    1010,
  );
});

describe('contextUsage', () => {
  const messages: Message[] = [
    { role: 'user', content: 'x'.repeat(400) },
    { role: 'assistant', content: 'y'.repeat(40) },
    { role: 'user', content: 'z'.repeat(80) },
  ];

  test('last measured prompt plus the estimate of what was appended since; the fixed part is not estimated', () => {
    const fixedTokens = jest.fn(() => 1_000);
    expect(contextUsage({ lastPromptTokens: 5_000, lastPromptMessageCount: 1, messages, fixedTokens })).toBe(5_000 + 10 + 20);
    expect(contextUsage({ lastPromptTokens: 5_000, lastPromptMessageCount: 3, messages, fixedTokens })).toBe(5_000);
    // Serializing the tool specs every turn was its cost; a measured prompt already counts them.
    expect(fixedTokens).not.toHaveBeenCalled();
  });

  test('unmeasured: the whole transcript plus the fixed part (system prompt, tools)', () => {
    expect(contextUsage({ lastPromptTokens: 0, lastPromptMessageCount: 0, messages, fixedTokens: () => 1_000 })).toBe(1_130);
  });

  test('a count beyond the transcript (it was compacted since) is treated as unmeasured', () => {
    expect(contextUsage({ lastPromptTokens: 90_000, lastPromptMessageCount: 40, messages })).toBe(130);
  });
});

test('shouldCompact at the threshold share of the window', () => {
  expect(shouldCompact(79_999, 100_000)).toBe(false);
  expect(shouldCompact(80_000, 100_000)).toBe(true);
  expect(shouldCompact(50_000, 100_000, 0.5)).toBe(true);
});

describe('contextWindowFor', () => {
  test('the override wins', () => {
    expect(contextWindowFor({ model: 'gpt-4o', override: 32_000 })).toBe(32_000);
  });
  test("then the worker's answer for the same model", () => {
    expect(contextWindowFor({ model: 'my-model', lastReply: { model: 'my-model', contextWindow: 64_000 } })).toBe(64_000);
    expect(contextWindowFor({ model: 'gpt-4o', lastReply: { model: 'other', contextWindow: 64_000 } })).toBe(128_000);
  });
  test('then the pricing table (dated snapshots and provider prefixes), then the default', () => {
    expect(contextWindowFor({ model: 'anthropic/claude-sonnet-4-5-20250929' })).toBe(200_000);
    expect(contextWindowFor({ model: 'gpt-4.1-mini' })).toBe(1_047_576);
    expect(contextWindowFor({ model: 'no-such-model' })).toBe(128_000);
  });
});

describe('compaction config', () => {
  test('defaults', () => {
    expect(CompactionConfig.parse({})).toEqual({
      enabled: true,
      threshold: 0.8,
      keepRecentTurns: 4,
      keepRecentToolResultTurns: 3,
      summaryMaxTokens: 8_192,
    });
  });

  test('is strict and bounded', () => {
    expect(CompactionConfig.safeParse({ treshold: 0.5 }).success).toBe(false);
    expect(CompactionConfig.safeParse({ threshold: 1 }).success).toBe(false);
    expect(CompactionConfig.safeParse({ threshold: 0 }).success).toBe(false);
    expect(CompactionConfig.safeParse({ toolResultBudgetChars: 0 }).success).toBe(true);
  });

  test('resolveCompaction fills in the window-derived defaults', () => {
    expect(resolveCompaction(CompactionConfig.parse({}), { model: 'gpt-4o' })).toEqual({
      enabled: true,
      contextWindow: 128_000,
      threshold: 0.8,
      keepRecentTurns: 4,
      keepRecentTokens: 32_000,
      toolResultBudgetChars: 204_800,
      keepRecentToolResultTurns: 3,
    });
    const custom = CompactionConfig.parse({ contextWindow: 10_000, keepRecentTokens: 500, toolResultBudgetChars: 0 });
    expect(resolveCompaction(custom, { model: 'gpt-4o' })).toMatchObject({
      contextWindow: 10_000,
      keepRecentTokens: 500,
      toolResultBudgetChars: 0,
    });
  });
});
