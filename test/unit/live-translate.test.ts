/** OpenAI chunks → the Anthropic stream events of the SDK's `stream_event` (ARCHITECTURE.md#live-tokens). */
import { StreamTranslator } from '../../src/activities/live/translate';
import { renderReply, streamChunks } from '../../src/testing/openai-wire';
import { ScriptedTurn } from '../../src/testing/scenario';
import type { StreamEvent } from '../../src/shared/stream-events';

function translate(turnInput: unknown, id = 'chatcmpl-1') {
  const reply = renderReply(ScriptedTurn.parse(turnInput), { scenario: 's', turnIndex: 0, model: 'm', promptChars: 40, now: 0 });
  const t = new StreamTranslator('gpt-x', 'msg_fallback');
  const events: StreamEvent[] = [];
  for (const c of streamChunks(reply, { includeUsage: true })) events.push(...t.onChunk({ ...c, id }));
  events.push(...t.finish('tool_use', { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 }));
  return events;
}

test('text then two tool calls: one block each, in order, deltas joining to the text and the arguments', () => {
  const events = translate({
    text: 'Let me look.',
    tool_calls: [
      { name: 'Glob', arguments: { pattern: '*.ts' } },
      { name: 'Read', arguments: { file_path: '/a' } },
    ],
  });
  expect(events.map((e) => `${e.type}${'index' in e ? `#${e.index}` : ''}`)).toEqual([
    'message_start',
    'content_block_start#0',
    'content_block_delta#0',
    'content_block_delta#0',
    'content_block_delta#0',
    'content_block_stop#0',
    'content_block_start#1',
    'content_block_delta#1',
    'content_block_delta#1',
    'content_block_delta#1',
    'content_block_stop#1',
    'content_block_start#2',
    'content_block_delta#2',
    'content_block_delta#2',
    'content_block_delta#2',
    'content_block_stop#2',
    'message_delta',
    'message_stop',
  ]);
  expect(events[0]).toMatchObject({
    type: 'message_start',
    message: { id: 'chatcmpl-1', model: 'gpt-x', role: 'assistant', content: [], stop_reason: null },
  });
  const joined = (i: number) =>
    events
      .map((e) => (e.type === 'content_block_delta' && e.index === i ? ('text' in e.delta ? e.delta.text : e.delta.partial_json) : ''))
      .join('');
  expect(joined(0)).toBe('Let me look.');
  expect(JSON.parse(joined(1))).toEqual({ pattern: '*.ts' });
  expect(JSON.parse(joined(2))).toEqual({ file_path: '/a' });
  expect(events[6]).toMatchObject({ content_block: { type: 'tool_use', id: 'call_0_0', name: 'Glob', input: {} } });
  expect(events.at(-2)).toMatchObject({
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 },
  });
});

test('a provider that sends no completion id gets the id callModel gives the reply', () => {
  expect(translate({ text: 'hi' }, '')[0]).toMatchObject({ message: { id: 'msg_fallback' } });
});
