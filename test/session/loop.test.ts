/**
 * The agent loop on a real dev server with the scripted model over HTTP: the loop's
 * checklist: stop reasons, tool order, errors as data, permissions, usage and cost.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { AssistantMessage, SessionEvent, UserMessage } from '../../src/shared/events';
import type { ToolResultBlock } from '../../src/shared/messages';
import { kinds, useHarness } from '../helpers/harness';

const h = useHarness();

const toolResults = (ms: SessionEvent[]) =>
  ms
    .filter((m): m is UserMessage => m.type === 'user')
    .flatMap((m) => (Array.isArray(m.message.content) ? m.message.content : []))
    .filter((b): b is ToolResultBlock => b.type === 'tool_result');

test('simple text response: init, assistant, result; success with the final text', async () => {
  const { messages, result } = await h.run({ name: 'simple', turns: [turn.text('Hello there.')] }, {});
  expect(kinds(messages)).toEqual(['system/init', 'assistant', 'result']);
  expect(result).toMatchObject({
    subtype: 'success',
    is_error: false,
    num_turns: 1,
    result: 'Hello there.',
    exit_reason: 'end_turn',
    stop_reason: 'end_turn',
  });
  h.model.assertConsumed('simple');
});

test('single tool call: the tool runs and its result goes back to the model as a role:tool message', async () => {
  const ws = h.workspace();
  writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
  const { messages, result } = await h.run(
    { name: 'single-tool', turns: [turn.tool('Read', { file_path: path.join(ws, 'a.txt') }), turn.text('It says alpha.')] },
    { cwd: ws },
  );
  expect(result.subtype).toBe('success');
  expect(result.num_turns).toBe(2);
  const second = h.requestsOf('single-tool')[1]!.body.messages;
  const toolMsg = second.find((m) => m.role === 'tool') as { tool_call_id: string; content: string };
  expect(toolMsg.content).toBe('     1\talpha');
  expect(kinds(messages)).toEqual(['system/init', 'assistant', 'tool_progress', 'tool_progress', 'user', 'assistant', 'result']);
  h.model.assertConsumed('single-tool');
});

test('multiple tool calls in one turn: all run, results in call order, one tool message each', async () => {
  const ws = h.workspace();
  for (const f of ['1', '2', '3']) writeFileSync(path.join(ws, `${f}.txt`), `file ${f}\n`);
  const { messages, result } = await h.run(
    {
      name: 'multi-tool',
      turns: [
        turn.tools([
          { id: 'c3', name: 'Read', arguments: { file_path: path.join(ws, '3.txt') } },
          { id: 'c1', name: 'Read', arguments: { file_path: path.join(ws, '1.txt') } },
          { id: 'c2', name: 'Bash', arguments: { command: 'cat 2.txt' } },
        ]),
        turn.text('done'),
      ],
    },
    { cwd: ws },
  );
  expect(result.subtype).toBe('success');
  expect(toolResults(messages).map((r) => r.tool_use_id)).toEqual(['c3', 'c1', 'c2']);
  const sent = h.requestsOf('multi-tool')[1]!.body.messages.filter((m) => m.role === 'tool') as { tool_call_id: string; content: string }[];
  expect(sent.map((m) => [m.tool_call_id, m.content])).toEqual([
    ['c3', '     1\tfile 3'],
    ['c1', '     1\tfile 1'],
    ['c2', 'file 2\n'.trimEnd()],
  ]);
});

test('tool error: a failing tool becomes an is_error result the model sees, and the loop goes on', async () => {
  const ws = h.workspace();
  const { messages, result } = await h.run(
    { name: 'tool-error', turns: [turn.tool('Read', { file_path: path.join(ws, 'missing.txt') }), turn.text('The file is missing.')] },
    { cwd: ws },
  );
  expect(toolResults(messages)[0]).toMatchObject({ is_error: true });
  expect(toolResults(messages)[0]!.content).toMatch(/does not exist/);
  expect(result.subtype).toBe('success');
});

test('max turns: exactly maxTurns model calls, then error_max_turns', async () => {
  const loop = Array.from({ length: 5 }, () => turn.tool('Glob', { pattern: '*' }));
  const { result } = await h.run({ name: 'max-turns', turns: loop }, { maxTurns: 3 });
  expect(h.requestsOf('max-turns')).toHaveLength(3);
  expect(result).toMatchObject({ subtype: 'error_max_turns', is_error: true, num_turns: 3 });
  expect(result.errors).toEqual(['Reached the maximum number of turns (3).']);
});

test.each([
  ['above', 0.3],
  ['exactly at', 0.4],
])("max budget: a cost %s the budget stops the session before running that turn's tools", async (where, maxBudgetUsd) => {
  const ws = h.workspace();
  const usage = { prompt_tokens: 1_000_000, completion_tokens: 0 }; // $0.40 for gpt-4.1-mini
  const name = `budget-${where.replace(' ', '-')}`;
  const { messages, result } = await h.run(
    { name, turns: [turn.tool('Bash', { command: 'touch ran' }, { usage }), turn.text('unreachable')] },
    { cwd: ws, maxBudgetUsd },
  );
  expect(result).toMatchObject({ subtype: 'error_max_budget_usd', num_turns: 1 });
  expect(result.total_cost_usd).toBe(0.4);
  expect(toolResults(messages)[0]).toMatchObject({ is_error: true, content: 'Not run: the session reached its maximum budget.' });
  expect(existsSync(path.join(ws, 'ran'))).toBe(false);
  expect(h.requestsOf(name)).toHaveLength(1);
});

test('cost tracking: cost and usage accumulate across turns, per model', async () => {
  const { result, handle } = await h.run(
    {
      name: 'cost',
      turns: [
        turn.tool('Glob', { pattern: '*' }, { usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 } }),
        turn.text('ok', { usage: { prompt_tokens: 2000, completion_tokens: 200 } }),
      ],
    },
    {},
  );
  // gpt-4.1-mini: input 0.4, output 1.6, cache read 0.1 per million.
  const expected = (600 * 0.4 + 100 * 1.6 + 400 * 0.1 + 2000 * 0.4 + 200 * 1.6) / 1e6;
  expect(result.total_cost_usd).toBeCloseTo(expected, 12);
  expect(result.usage).toMatchObject({
    input_tokens: 2600,
    output_tokens: 300,
    cache_read_input_tokens: 400,
    cache_creation_input_tokens: 0,
  });
  expect(result.modelUsage['gpt-4.1-mini']).toMatchObject({ inputTokens: 2600, outputTokens: 300, costBasis: 'list' });
  const usage = await handle.usage();
  expect(usage.costUsd).toBeCloseTo(expected, 12);
  expect(await handle.turnCount()).toBe(2);
});

test('unknown model costs 0 with costBasis unknown and a warning event', async () => {
  const { messages, result } = await h.run(
    { name: 'unpriced', turns: [turn.text('hi', { usage: { prompt_tokens: 10, completion_tokens: 5 } })] },
    { model: 'my-local-model' },
  );
  expect(result.total_cost_usd).toBe(0);
  expect(result.modelUsage['my-local-model']!.costBasis).toBe('unknown');
  expect(
    messages.some((m) => m.type === 'system' && m.subtype === 'warning' && /No price is known for model my-local-model/.test(m.message)),
  ).toBe(true);
});

test('permission denied: the model gets an error result and the denial is reported', async () => {
  const ws = h.workspace();
  const { messages, result } = await h.run(
    { name: 'denied', turns: [turn.tool('Bash', { command: 'touch should-not-exist' }), turn.text('I was not allowed.')] },
    { cwd: ws, permissionMode: 'dontAsk' },
  );
  expect(toolResults(messages)[0]).toMatchObject({ is_error: true });
  expect(toolResults(messages)[0]!.content).toMatch(/Permission to use Bash has not been granted/);
  expect(result.permission_denials).toEqual([
    { tool_name: 'Bash', tool_use_id: expect.any(String), tool_input: { command: 'touch should-not-exist' } },
  ]);
  expect(kinds(messages)).toContain('system/permission_denied');
  expect(existsSync(path.join(ws, 'should-not-exist'))).toBe(false);
});

test('empty tool_use: finish_reason tool_calls with no calls counts as end_turn', async () => {
  const { result } = await h.run({ name: 'empty-tool-use', turns: [turn.text('nothing to do', { finish_reason: 'tool_calls' })] }, {});
  expect(result).toMatchObject({ subtype: 'success', exit_reason: 'end_turn', result: 'nothing to do' });
});

test('unknown tool and bad arguments: error results naming the tools / the field; malformed JSON kept raw', async () => {
  const { messages, result } = await h.run(
    {
      name: 'bad-calls',
      turns: [
        turn.tools([
          { id: 'u', name: 'Teleport', arguments: {} },
          { id: 'b', name: 'Read', arguments: { file_path: 42 } },
          { id: 'j', name: 'Read', arguments: '{"file_path": "/x' },
        ]),
        turn.text('ok'),
      ],
    },
    {},
  );
  const [u, b, j] = toolResults(messages);
  expect(u!.content).toMatch(/^Error: No such tool available: Teleport\. Available tools: .*Bash.*Read/);
  expect(b!.content).toBe('InputValidationError: Read failed due to the following issue: `file_path`: expected string, received integer');
  expect(j!.content).toMatch(/not valid JSON/);
  expect([u, b, j].every((r) => r!.is_error)).toBe(true);
  // The raw arguments go back to the model unchanged with the assistant message.
  const sent = h.requestsOf('bad-calls')[1]!.body.messages.find((m) => m.role === 'assistant') as {
    tool_calls: { function: { arguments: string } }[];
  };
  expect(sent.tool_calls[2]!.function.arguments).toBe('{"file_path": "/x');
  expect(result.subtype).toBe('success');
});

test('stop reasons: length → max_tokens error, content_filter → stop_sequence error; cut tool calls are dropped', async () => {
  const a = await h.run(
    { name: 'max-tokens', turns: [turn.tools([{ name: 'Read', arguments: '{"file_pa' }], { text: 'partial', finish_reason: 'length' })] },
    {},
  );
  expect(a.result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'max_tokens', stop_reason: 'max_tokens' });
  const assistant = a.messages.find((m): m is AssistantMessage => m.type === 'assistant')!;
  expect(assistant.message.content).toEqual([{ type: 'text', text: 'partial', citations: null }]);
  const b = await h.run({ name: 'stop-seq', turns: [turn.text('filtered', { finish_reason: 'content_filter' })] }, {});
  expect(b.result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'stop_sequence' });
});

test('message ordering: init → (assistant → tool_progress… → user)* → result, seq increasing', async () => {
  const { messages } = await h.run(
    {
      name: 'ordering',
      turns: [
        turn.tools([
          { name: 'Glob', arguments: { pattern: '*' } },
          { name: 'Glob', arguments: { pattern: '*.x' } },
        ]),
        turn.text('done'),
      ],
    },
    {},
  );
  expect(kinds(messages)).toEqual([
    'system/init',
    'assistant',
    'tool_progress',
    'tool_progress',
    'tool_progress',
    'tool_progress',
    'user',
    'assistant',
    'result',
  ]);
  expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i));
  expect(new Set(messages.map((m) => m.uuid)).size).toBe(messages.length);
});

test('session persistence: the transcript stays readable after the session ends', async () => {
  const { handle } = await h.run({ name: 'persist', turns: [turn.tool('Glob', { pattern: '*' }), turn.text('bye')] }, { prompt: 'list' });
  const transcript = await handle.transcript();
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  expect(transcript[0]!.content).toMatch(/list$/);
  expect((await handle.state()).status).toBe('completed');
});

test('the system prompt and tool specs reach the model; systemPrompt string replaces ours', async () => {
  await h.run({ name: 'sysprompt', turns: [turn.text('ok')] }, {});
  const body = h.requestsOf('sysprompt')[0]!.body;
  expect(body.messages[0]).toMatchObject({ role: 'system' });
  expect((body.messages[0] as { content: string }).content).toMatch(/Working directory: \//);
  expect((body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name).sort()).toEqual(
    ['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'TodoWrite', 'Write'].sort(),
  );
  expect(body.stream).toBe(true);
  await h.run({ name: 'sysprompt-own', turns: [turn.text('ok')] }, { systemPrompt: 'Be terse.', tools: ['Read'] });
  const own = h.requestsOf('sysprompt-own')[0]!.body;
  expect(own.messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
  expect((own.tools ?? []).map((t) => (t as { function: { name: string } }).function.name)).toEqual(['Read']);
});

test('TodoWrite runs in the workflow and its list is in the state query', async () => {
  const todos = [{ content: 'Fix bug', status: 'in_progress', activeForm: 'Fixing bug' }];
  const { handle, messages } = await h.run({ name: 'todo', turns: [turn.tool('TodoWrite', { todos }), turn.text('ok')] }, {});
  expect(toolResults(messages)[0]!.content).toMatch(/^Todos have been modified successfully/);
  expect((await handle.state()).todos).toEqual(todos);
});

test('invalid options are rejected by the client before anything starts, naming the field', async () => {
  await expect(h.client.start({ prompt: 'x', cwd: '/tmp', maxTurns: 'three' as never })).rejects.toThrow(/maxTurns/);
  await expect(h.client.start({ prompt: 'x', cwd: '/tmp', colour: 'red' } as never)).rejects.toThrow(
    "invalid session config: colour: unknown option 'colour'",
  );
});
