import { mapFinishReason, toChatMessages, toToolUseBlocks } from '../../src/activities/model/chat-format';
import { classifyModelError, retryAfterMs } from '../../src/activities/model/errors';
import { APIConnectionError, APIError } from 'openai';

describe('toChatMessages', () => {
  it('sends one role:tool message per tool_result, in order, after the assistant tool calls', () => {
    const out = toChatMessages('SYS', [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'reading' },
          { type: 'tool_use', id: 'a', name: 'Read', input: { file_path: '/x' } },
          { type: 'tool_use', id: 'b', name: 'Bash', input: {}, raw_input: '{oops' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: 'A' },
          { type: 'tool_result', tool_use_id: 'b', content: 'B', is_error: true },
        ],
      },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'SYS' },
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'reading',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/x"}' } },
          { id: 'b', type: 'function', function: { name: 'Bash', arguments: '{oops' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
    ]);
  });
});

describe('finish reasons and tool-call parsing', () => {
  it('maps finish_reason to stop_reason', () => {
    expect(mapFinishReason('stop', false)).toBe('end_turn');
    expect(mapFinishReason('tool_calls', true)).toBe('tool_use');
    expect(mapFinishReason('length', false)).toBe('max_tokens');
  });
  it('keeps malformed JSON raw', () => {
    expect(toToolUseBlocks([{ id: 'c', name: 'Read', arguments: '{"file_path": ' }])).toEqual([
      { type: 'tool_use', id: 'c', name: 'Read', input: {}, raw_input: '{"file_path": ' },
    ]);
    expect(toToolUseBlocks([{ id: 'c', name: 'Read', arguments: '' }])).toEqual([{ type: 'tool_use', id: 'c', name: 'Read', input: {} }]);
  });
});

describe('model error classification (ARCHITECTURE.md#temporal-owns-retries)', () => {
  const apiError = (status: number, headers: Record<string, string> = {}) =>
    APIError.generate(status, { error: { message: `status ${status}` } }, undefined, new Headers(headers));
  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '1500' }))).toBe(1500);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
  });
  it('retries 408/409/429/5xx/529 and connection errors with the provider delay', () => {
    for (const s of [408, 409, 429, 500, 502, 503, 529]) expect(classifyModelError(apiError(s)).retryable).toBe(true);
    const c = classifyModelError(apiError(429, { 'retry-after': '2' }));
    expect(c.failure.type).toBe('ModelRateLimited');
    expect(c.failure.nextRetryDelay).toBe(2000);
    expect(classifyModelError(new APIConnectionError({ message: 'reset' })).retryable).toBe(true);
    expect(classifyModelError(new Error('terminated')).failure.type).toBe('ModelStreamError');
  });
  it('does not retry 400/401/403/404/413/422, named by who is at fault', () => {
    const types = [400, 401, 403, 404, 413, 422].map((s) => classifyModelError(apiError(s)));
    expect(types.map((t) => t.retryable)).toEqual([false, false, false, false, false, false]);
    expect(types.map((t) => t.failure.type)).toEqual([
      'ModelBadRequest',
      'ModelAuth',
      'ModelPermission',
      'ModelNotFound',
      'ContextOverflow',
      'ModelUnprocessable',
    ]);
    expect(types.every((t) => t.failure.nonRetryable)).toBe(true);
  });
});
