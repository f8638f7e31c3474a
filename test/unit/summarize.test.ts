import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ChatStreamClient } from '../../src/activities/model/chat-stream';
import { buildSummaryRequest, renderConversation, summarize, SUMMARY_SYSTEM_PROMPT } from '../../src/activities/model/summarize';
import type { SummarizeInput } from '../../src/shared/activities';
import type { Message } from '../../src/shared/messages';
import { DEFAULT_PRICING } from '../../src/shared/pricing';
import { startScriptedModel, turn, type ScriptedModel } from '../../src/testing/scripted-model';

const messages: Message[] = [
  { role: 'user', content: 'Fix the failing test in src/a.ts' },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'private reasoning' },
      { type: 'text', text: 'Running the tests.' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'npm test' } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'FAIL src/a.test.ts', is_error: true }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'call_2', name: 'Read', input: {}, raw_input: '{"file_' }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_2', content: 'bad arguments' }] },
];

test('the request is our system prompt and the conversation as one user message, tool calls and results rendered', () => {
  const req = buildSummaryRequest(messages);
  expect(req).toHaveLength(2);
  expect(req[0]).toEqual({ role: 'system', content: SUMMARY_SYSTEM_PROMPT });
  expect(req[1]).toEqual({
    role: 'user',
    content: [
      'The conversation so far:',
      '',
      '<conversation>',
      '[user]',
      'Fix the failing test in src/a.ts',
      '',
      '[assistant]',
      'Running the tests.',
      '[tool call Bash call_1] {"command":"npm test"}',
      '',
      '[user]',
      '[tool result Bash call_1 (error)]',
      'FAIL src/a.test.ts',
      '',
      '[assistant]',
      '[tool call Read call_2] {"file_',
      '',
      '[user]',
      '[tool result Read call_2]',
      'bad arguments',
      '</conversation>',
      '',
      'Write the summary now.',
    ].join('\n'),
  });
});

test('the system prompt asks for what a continuation needs', () => {
  for (const part of ['verbatim', 'Decisions', 'Files', 'Errors and fixes', 'Remaining work', 'do not call tools']) {
    expect(SUMMARY_SYSTEM_PROMPT).toContain(part);
  }
});

test('long tool results and inputs keep their head and tail', () => {
  const long: Message[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'w', name: 'Write', input: { content: 'i'.repeat(50) } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'w', content: `HEAD${'m'.repeat(100)}TAIL` }] },
  ];
  const text = renderConversation(long, { maxBlockChars: 20 });
  expect(text).toContain('[tool result Write w]\nHEADmmmmmm\n[… 88 characters omitted …]\nmmmmmmTAIL');
  expect(text).toContain('[tool call Write w] {"content"\n[… 44 characters omitted …]\niiiiiiii"}');
});

test('over the input budget, the first message and the latest ones are kept, and the gap is named', () => {
  const many: Message[] = [{ role: 'user', content: 'the task' }];
  for (let i = 0; i < 20; i++) many.push({ role: 'assistant', content: `step ${i}` }, { role: 'user', content: `ok ${i}` });
  const text = renderConversation(many, { maxInputChars: 120 });
  expect(text.startsWith('[user]\nthe task\n\n[… ')).toBe(true);
  expect(text).toMatch(/\[… \d+ messages omitted to fit the summarizer's context …\]/);
  expect(text.endsWith('[user]\nok 19')).toBe(true);
  expect(text.length).toBeLessThanOrEqual(120 + 80);
  expect(renderConversation(many)).not.toContain('omitted');
});

/**
 * The activity itself, against the scripted model over real HTTP. Its prompt source — the
 * workflow's `prompt` query — is stubbed here; the lead's session test reads it from a real run.
 */
describe('summarize activity', () => {
  let model: ScriptedModel;
  beforeAll(async () => {
    model = await startScriptedModel({
      scenarios: [
        {
          name: 'summary',
          turns: [turn.text('  The task was X.  ', { usage: { prompt_tokens: 1_000, completion_tokens: 50, cached_tokens: 200 } })],
        },
        { name: 'cut-off', turns: [turn.text('partial', { finish_reason: 'length' })] },
        { name: 'bad', turns: [turn.text('never', { faults: [{ status: 400, body: { error: { message: 'nope' } } }] })] },
        { name: 'limited', turns: [turn.text('later', { faults: [{ status: 429, headers: { 'retry-after': '3' } }] })] },
        { name: 'empty', turns: [turn.text('   ')] },
      ],
    });
  });
  afterAll(async () => {
    await model?.close();
  });

  const queries: { start: number; upTo: number; withTools: boolean }[] = [];
  // Pages of two messages, so paging from `from` is exercised.
  const client = {
    withAbortSignal: <R>(_signal: AbortSignal, fn: () => Promise<R>) => fn(),
    workflow: {
      getHandle: () => ({
        query: async (_q: unknown, a: { start: number; upTo: number; withTools: boolean }) => {
          queries.push(a);
          const page = messages.slice(a.start, Math.min(a.upTo, a.start + 2));
          return { system: 'session prompt', tools: [], messages: page, start: a.start, total: a.upTo };
        },
      }),
    },
  } as unknown as Client;
  const run = (name: string, extra: Partial<SummarizeInput> = {}) => {
    const chat = new ChatStreamClient({ baseURL: model.url, apiKey: 'test' });
    const input: SummarizeInput = {
      ...{ sessionId: 's', runId: 'r', upTo: 5, model: `scripted/${name}`, maxOutputTokens: 1_000 },
      ...extra,
    };
    return new MockActivityEnvironment({}, { client }).run(summarize, chat, { pricing: DEFAULT_PRICING }, input);
  };

  test('reads [from, upTo) page by page, sends our request without tools, returns the trimmed summary', async () => {
    queries.length = 0;
    const r = await run('summary', { from: 1 });
    expect(queries.map((q) => [q.start, q.upTo, q.withTools])).toEqual([
      [1, 5, false],
      [3, 5, false],
    ]);
    const sent = model.requests.filter((q) => q.scenario === 'summary');
    expect(sent).toHaveLength(1);
    const maxInputChars = (128_000 - 1_000 - 2_000) * 3; // the default window, less the reply and a margin
    expect(sent[0]!.body.messages).toEqual(buildSummaryRequest(messages.slice(1, 5), { maxInputChars }));
    expect(sent[0]!.body.tools).toBeUndefined();
    expect(sent[0]!.body.max_completion_tokens).toBe(1_000);
    expect(r).toMatchObject({
      summary: 'The task was X.',
      truncated: false,
      usage: { input_tokens: 800, output_tokens: 50, cache_read_input_tokens: 200, cache_creation_input_tokens: 0 },
      costUsd: 0,
      costBasis: 'unknown',
      model: 'scripted/summary',
    });
  });

  test('a summary cut off at the output limit is returned and flagged', async () => {
    expect(await run('cut-off')).toMatchObject({ summary: 'partial', truncated: true });
  });

  test.each([
    ['bad', 'ModelBadRequest', true],
    ['limited', 'ModelRateLimited', false],
    ['empty', 'ModelEmptySummary', false],
  ])('failures are classified like callModel: %s → %s', async (name, type, nonRetryable) => {
    const err = await run(name).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type, nonRetryable });
  });
});
