import { promptPage, QUERY_PAGE_BYTES, byteBoundedPage } from '../../src/workflows/session/handlers';
import { jsonBytes } from '../../src/shared/payload';
import type { Message } from '../../src/shared/messages';
import type { ToolSpec } from '../../src/shared/tools';

const tools: ToolSpec[] = Array.from({ length: 10 }, (_, i) => ({
  name: `Tool${i}`,
  description: 'd'.repeat(2_000),
  inputSchema: { type: 'object' },
  readOnly: true,
}));
const messages: Message[] = Array.from({ length: 800 }, (_, i) => ({
  role: i % 2 ? 'assistant' : 'user',
  content: `${i} ${'é'.repeat(1_000)}`,
}));
const state = { systemPrompt: 's'.repeat(10_000), tools, messages };

test('a prompt page, system prompt and tools included, never exceeds the page budget', () => {
  const page = promptPage(state, { upTo: 800, start: 0, maxBytes: QUERY_PAGE_BYTES, withTools: true });
  expect(jsonBytes(page)).toBeLessThanOrEqual(QUERY_PAGE_BYTES);
  expect(page.messages.length).toBeGreaterThan(100);
});

test('paging covers every message exactly once, in order', () => {
  const seen: Message[] = [];
  while (seen.length < 800) {
    const page = promptPage(state, { upTo: 800, start: seen.length, maxBytes: 300_000, withTools: seen.length === 0 });
    expect(jsonBytes(page)).toBeLessThanOrEqual(300_000);
    seen.push(...page.messages);
  }
  expect(seen).toEqual(messages);
});

test('a page always holds at least one item, measured in UTF-8 bytes', () => {
  expect(byteBoundedPage(['x'.repeat(10)], 1)).toHaveLength(1);
  expect(byteBoundedPage(['é'.repeat(10), 'b'], 23)).toHaveLength(1); // 22 bytes of JSON, not 12 characters
});
