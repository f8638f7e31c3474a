import type { Message } from '../../src/shared/messages';
import { isTrimmedPlaceholder, trimmedPlaceholder, trimOldToolResults } from '../../src/shared/trim-tool-results';

const turn = (id: string, name: string, content: string): Message[] => [
  { role: 'assistant', content: [{ type: 'tool_use', id, name, input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] },
];
const resultOf = (messages: Message[], i: number) => {
  const c = messages[i]!.content;
  if (typeof c === 'string' || c[0]!.type !== 'tool_result') throw new Error(`message ${i} is not a tool result`);
  return c[0];
};

test('the placeholder says how much, from which tool, and how to get it back', () => {
  expect(trimmedPlaceholder(12_345, 'Read')).toBe(
    '[Old tool result trimmed to save context: 12,345 characters from Read. Run the tool again if you need it.]',
  );
  expect(trimmedPlaceholder(1_234_567, 'Bash')).toContain('1,234,567 characters from Bash');
  expect(trimmedPlaceholder(999, 'Grep')).toContain(' 999 characters');
  expect(isTrimmedPlaceholder(trimmedPlaceholder(5, 'X'))).toBe(true);
});

describe('trimOldToolResults', () => {
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    ...turn('a', 'Read', 'a'.repeat(12_345)),
    ...turn('b', 'Bash', 'b'.repeat(3_000)),
    ...turn('c', 'Grep', 'c'.repeat(3_000)),
    ...turn('d', 'Read', 'd'.repeat(3_000)),
  ];
  const frozen = JSON.stringify(messages);

  test('under budget: nothing changes, the same array comes back', () => {
    const r = trimOldToolResults(messages, { budgetChars: 30_000, keepRecent: 1 });
    expect(r).toEqual({ messages, trimmed: 0, savedChars: 0 });
    expect(r.messages).toBe(messages);
  });

  test('over budget: the oldest results go first, down to half the budget, with the exact placeholder', () => {
    // 21,345 chars held; budget 20,000 → trim to ≤ 10,000: dropping "a" (12,345) is enough.
    const r = trimOldToolResults(messages, { budgetChars: 20_000, keepRecent: 1 });
    expect(r.trimmed).toBe(1);
    const placeholder = '[Old tool result trimmed to save context: 12,345 characters from Read. Run the tool again if you need it.]';
    expect(resultOf(r.messages, 2)).toEqual({ type: 'tool_result', tool_use_id: 'a', content: placeholder });
    expect(r.savedChars).toBe(12_345 - placeholder.length);
    expect(r.messages.slice(3)).toEqual(messages.slice(3));
    expect(JSON.stringify(messages)).toBe(frozen); // input untouched
  });

  test('the most recent turns are never trimmed, even when that leaves the transcript over budget', () => {
    const r = trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 2 });
    expect(r.trimmed).toBe(2);
    expect(resultOf(r.messages, 2).content).toContain('from Read');
    expect(resultOf(r.messages, 4).content).toContain('3,000 characters from Bash');
    expect(resultOf(r.messages, 6).content).toBe('c'.repeat(3_000));
    expect(resultOf(r.messages, 8).content).toBe('d'.repeat(3_000));
  });

  test('keepRecent 0 lets every result be trimmed', () => {
    const r = trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 0 });
    expect(r.trimmed).toBe(4);
  });

  test('already trimmed results are neither counted nor trimmed again', () => {
    const once = trimOldToolResults(messages, { budgetChars: 20_000, keepRecent: 1 });
    const twice = trimOldToolResults(once.messages, { budgetChars: 20_000, keepRecent: 1 });
    expect(twice.trimmed).toBe(0);
    expect(twice.messages).toBe(once.messages);
  });

  test('results no longer than their placeholder are left alone; the error flag is kept', () => {
    const small: Message[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 's', name: 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 's', content: 'short', is_error: true }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'e', name: 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'e', content: 'e'.repeat(500), is_error: true }] },
      ...turn('z', 'Read', 'z'),
    ];
    const r = trimOldToolResults(small, { budgetChars: 100, keepRecent: 1 });
    expect(r.trimmed).toBe(1);
    expect(resultOf(r.messages, 2).content).toBe('short');
    expect(resultOf(r.messages, 4)).toEqual({
      type: 'tool_result',
      tool_use_id: 'e',
      is_error: true,
      content: trimmedPlaceholder(500, 'Bash'),
    });
  });

  test('a result whose tool_use is unknown is attributed to "a tool"', () => {
    const orphan: Message[] = [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'gone', content: 'g'.repeat(1_000) }] },
      ...turn('z', 'Read', 'z'),
    ];
    const r = trimOldToolResults(orphan, { budgetChars: 10, keepRecent: 1 });
    expect(resultOf(r.messages, 0).content).toBe(trimmedPlaceholder(1_000, 'a tool'));
  });

  test('a budget of 0 disables trimming', () => {
    expect(trimOldToolResults(messages, { budgetChars: 0, keepRecent: 0 }).trimmed).toBe(0);
  });
});
