/** Boundaries of tool-result trimming: exact budgets, several results per message, mixed messages. */
import type { ContentBlock, Message } from '../../src/shared/messages';
import { trimmedPlaceholder, trimOldToolResults } from '../../src/shared/trim-tool-results';

const use = (id: string, name = 'Bash'): ContentBlock => ({ type: 'tool_use', id, name, input: {} });
const res = (id: string, size: number): ContentBlock => ({ type: 'tool_result', tool_use_id: id, content: 'r'.repeat(size) });
const turn = (id: string, size: number): Message[] => [
  { role: 'assistant', content: [use(id)] },
  { role: 'user', content: [res(id, size)] },
];
const contents = (messages: Message[]) =>
  messages.flatMap((m) =>
    typeof m.content === 'string' ? [] : m.content.map((b) => (b.type === 'tool_result' ? b.content.length : b.type)),
  );

test('exactly at the budget nothing is trimmed', () => {
  const messages: Message[] = [{ role: 'user', content: 'task' }, ...turn('a', 1_500), ...turn('b', 500)];
  expect(trimOldToolResults(messages, { budgetChars: 2_000, keepRecent: 1 }).trimmed).toBe(0);
  expect(trimOldToolResults(messages, { budgetChars: 1_999, keepRecent: 1 }).trimmed).toBe(1);
});

describe('several results in one message', () => {
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: [use('a'), use('b')] },
    { role: 'user', content: [res('a', 1_500), res('b', 600)] },
    ...turn('c', 400),
  ];

  test('trimming stops inside a message once the total is down to the target', () => {
    // 2,500 held, budget 2,000 → target 1,000: trimming "a" leaves exactly 1,000, so "b" stays.
    const r = trimOldToolResults(messages, { budgetChars: 2_000, keepRecent: 1 });
    expect(r.trimmed).toBe(1);
    expect(contents(r.messages)).toEqual(['tool_use', 'tool_use', trimmedPlaceholder(1_500, 'Bash').length, 600, 'tool_use', 400]);
  });

  test('and goes on to the next result while above it', () => {
    const r = trimOldToolResults(messages, { budgetChars: 1_998, keepRecent: 1 });
    expect(r.trimmed).toBe(2);
    expect(r.savedChars).toBe(1_500 + 600 - trimmedPlaceholder(1_500, 'Bash').length - trimmedPlaceholder(600, 'Bash').length);
  });
});

test('a lower water mark trims further', () => {
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    ...turn('a', 1_000),
    ...turn('b', 1_000),
    ...turn('c', 1_000),
    ...turn('d', 100),
  ];
  expect(trimOldToolResults(messages, { budgetChars: 3_000, keepRecent: 1 }).trimmed).toBe(2);
  expect(trimOldToolResults(messages, { budgetChars: 3_000, keepRecent: 1, lowWater: 0.01 }).trimmed).toBe(3);
});

test('placeholders already in the transcript do not count against the budget', () => {
  const placeholder = trimmedPlaceholder(5_000, 'Read');
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: [use('p', 'Read')] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'p', content: placeholder }] },
    ...turn('a', 300),
    ...turn('b', 10),
  ];
  // 310 characters of live output: under a budget of 350 even though the placeholder adds ~100.
  expect(trimOldToolResults(messages, { budgetChars: 350, keepRecent: 1 })).toEqual({ messages, trimmed: 0, savedChars: 0 });
});

test('a result exactly as long as its placeholder is left alone', () => {
  let size = 50;
  while (trimmedPlaceholder(size, 'Bash').length !== size) size++;
  const messages: Message[] = [{ role: 'user', content: 'task' }, ...turn('a', size), ...turn('b', 10)];
  expect(trimOldToolResults(messages, { budgetChars: 1, keepRecent: 1 }).trimmed).toBe(0);
  expect(trimOldToolResults(messages, { budgetChars: 1, keepRecent: 0 }).trimmed).toBe(0);
});

test('keepRecent beyond the number of results protects them all', () => {
  const messages: Message[] = [{ role: 'user', content: 'task' }, ...turn('a', 5_000), ...turn('b', 5_000)];
  expect(trimOldToolResults(messages, { budgetChars: 100, keepRecent: 3 })).toEqual({ messages, trimmed: 0, savedChars: 0 });
});

describe('transcripts with text among the results (notices, follow-up messages)', () => {
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: [use('a')] },
    // A loop warning delivered after the results goes into the same user message.
    { role: 'user', content: [res('a', 2_000), { type: 'text', text: 'Loop warning: …' }] },
    { role: 'assistant', content: [use('b')] },
    { role: 'user', content: [res('b', 2_000), { type: 'text', text: 'Loop warning: …' }] },
    { role: 'assistant', content: 'Done. Anything else?' },
    { role: 'user', content: 'Yes: also fix the docs.' },
    { role: 'assistant', content: [use('c')] },
    { role: 'user', content: [res('c', 2_000)] },
  ];

  test('a message holding results and text counts as a result message; its text is kept', () => {
    const r = trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 2 });
    expect(r.trimmed).toBe(1);
    expect(r.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: trimmedPlaceholder(2_000, 'Bash') },
        { type: 'text', text: 'Loop warning: …' },
      ],
    });
    expect(r.messages.slice(3)).toEqual(messages.slice(3));
  });

  test('with keepRecent 1, every older result is trimmed, plain text messages untouched', () => {
    const r = trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 1 });
    expect(r.trimmed).toBe(2);
    expect(r.messages[5]).toBe(messages[5]);
    expect(r.messages[6]).toBe(messages[6]);
    expect(contents(r.messages).slice(-1)).toEqual([2_000]);
  });
});

test("an assistant's text reply between turns is not a result message", () => {
  const messages: Message[] = [
    { role: 'user', content: 'task' },
    ...turn('a', 2_000),
    { role: 'assistant', content: [{ type: 'text', text: 'Done. Anything else?' }] },
    { role: 'user', content: 'Also fix the docs.' },
    ...turn('b', 2_000),
  ];
  // The two most recent result messages are "a" and "b": both protected.
  expect(trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 2 }).trimmed).toBe(0);
  expect(trimOldToolResults(messages, { budgetChars: 1_000, keepRecent: 1 }).trimmed).toBe(1);
});
