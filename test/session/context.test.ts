/**
 * Keeping long sessions inside the model's window: proactive and reactive compaction, trimming
 * of old tool output, loop warnings. Asserted on what the scripted model was sent.
 *
 * After a compaction a request holds fewer assistant messages, so the scripted model's turn
 * index drops. The summary the model writes carries a `[scenario:…-after]` tag, which routes
 * the session's later requests to a scenario written for the compacted transcript.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { CONTINUATION_PREFIX } from '../../src/shared/model-texts';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';

const h = useHarness();

const usage = (prompt_tokens: number) => ({ usage: { prompt_tokens, completion_tokens: 10 } });
const toolCallCommands = (messages: unknown[]) =>
  (messages as { role: string; tool_calls?: { function: { arguments: string } }[] }[])
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => (m.tool_calls ?? []).map((c) => (JSON.parse(c.function.arguments) as { command: string }).command));

test('proactive compaction near the window: the summary replaces the old turns, recent turns stay intact', async () => {
  h.model.addScenario([
    { name: 'summaries', turns: [turn.text('[scenario:compact-after] Ran steps 0 and 1; both printed their step number.')] },
    { name: 'compact-after', turns: [turn.text('unused'), turn.text('unused'), turn.text('All four steps ran.')] },
  ]);
  const { messages, result } = await h.run(
    {
      name: 'compact',
      turns: [0, 1, 2, 3].map((i) => turn.tool('Bash', { command: `echo step ${i}` }, usage([1000, 2000, 3000, 8500][i]!))),
    },
    { compaction: { contextWindow: 10_000, threshold: 0.8, keepRecentTurns: 2, summaryModel: 'scripted/summaries' } },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'All four steps ran.', num_turns: 5 });
  const boundary = messages.find((m) => m.type === 'system' && m.subtype === 'compact_boundary') as Extract<
    SessionEvent,
    { subtype: 'compact_boundary' }
  >;
  expect(boundary.compact_metadata.trigger).toBe('auto');
  expect(boundary.compact_metadata.pre_tokens).toBeGreaterThanOrEqual(8_000);

  const summaryRequest = h.requestsOf('summaries')[0]!.body;
  expect(summaryRequest.tools).toBeUndefined();
  expect(JSON.stringify(summaryRequest.messages)).toContain('echo step 0');

  const after = h.requestsOf('compact-after')[0]!.body.messages;
  expect(after.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
  const summaryMessage = after[1]!.content as string;
  expect(summaryMessage.startsWith(CONTINUATION_PREFIX)).toBe(true);
  expect(summaryMessage).toContain('Ran steps 0 and 1');
  expect(toolCallCommands(after)).toEqual(['echo step 2', 'echo step 3']);
  expect(after.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['step 2', 'step 3']);
});

test('reactive compaction: a context-overflow error compacts and retries the call once', async () => {
  h.model.addScenario([
    { name: 'summaries-overflow', turns: [turn.text('[scenario:overflow-after] Listed the workspace twice.')] },
    { name: 'overflow-after', turns: [turn.text('unused'), turn.text('Recovered after compaction.')] },
  ]);
  const overflow = { status: 400, body: { error: { message: "This model's maximum context length is 1000 tokens." } } };
  const { messages, result } = await h.run(
    {
      name: 'overflow',
      turns: [
        turn.tool('Bash', { command: 'echo one' }),
        turn.tool('Bash', { command: 'echo two' }),
        turn.tool('Bash', { command: 'echo three' }),
        turn.text('never served', { faults: [overflow] }),
      ],
    },
    { compaction: { keepRecentTurns: 1, summaryModel: 'scripted/summaries-overflow' } },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'Recovered after compaction.' });
  expect(messages.filter((m) => m.type === 'system' && m.subtype === 'compact_boundary')).toHaveLength(1);
  const after = h.requestsOf('overflow-after')[0]!.body.messages;
  expect(toolCallCommands(after)).toEqual(['echo three']);
  h.model.reset(); // turn 3 of 'overflow' was answered only by its fault, as intended
});

test('old tool output beyond the budget is replaced by a placeholder that says what was trimmed', async () => {
  const big = (c: string) => `head -c 1500 /dev/zero | tr '\\0' '${c}'`;
  await h.run(
    {
      name: 'trim',
      turns: [
        turn.tool('Bash', { command: big('a') }),
        turn.tool('Bash', { command: big('b') }),
        turn.tool('Bash', { command: big('c') }),
        turn.text('done'),
      ],
    },
    { compaction: { toolResultBudgetChars: 4_000, keepRecentToolResultTurns: 1 } },
  );
  const last = h
    .requestsOf('trim')[3]!
    .body.messages.filter((m) => m.role === 'tool')
    .map((m) => m.content as string);
  expect(last[0]).toBe('[Old tool result trimmed to save context: 1,500 characters from Bash. Run the tool again if you need it.]');
  expect(last[1]).toBe('[Old tool result trimmed to save context: 1,500 characters from Bash. Run the tool again if you need it.]');
  expect(last[2]).toBe('c'.repeat(1500));
});

test('loop detection: the same call repeated injects a warning before the next model call', async () => {
  const same = turn.tool('Glob', { pattern: '**/*.md' });
  const { messages } = await h.run({ name: 'looping', turns: [same, same, same, turn.text('I will stop repeating myself.')] }, {});
  const warning = messages.find((m) => m.type === 'system' && m.subtype === 'loop_detected') as Extract<
    SessionEvent,
    { subtype: 'loop_detected' }
  >;
  expect(warning.count).toBe(3);
  const fourth = h.requestsOf('looping')[3]!.body.messages;
  const lastUser = fourth[fourth.length - 1]!;
  expect(lastUser).toEqual({ role: 'user', content: warning.message });
  expect(h.requestsOf('looping')[2]!.body.messages.some((m) => m.role === 'user' && m.content === warning.message)).toBe(false);
});

test('a transcript larger than one payload (2 MiB) is read by the model activity in pages', async () => {
  const ws = h.workspace();
  const file = path.join(ws, 'big.txt');
  writeFileSync(file, Array.from({ length: 1_000 }, (_, i) => `${String(i).padStart(4, '0')} ${'z'.repeat(90)}`).join('\n'));
  const reads = Array.from({ length: 24 }, () => turn.tool('Read', { file_path: file }, usage(1_000)));
  const { handle, result } = await h.run(
    { name: 'big-transcript', turns: [...reads, turn.text('read it all', usage(1_000))] },
    { cwd: ws, compaction: { enabled: false, toolResultBudgetChars: 0 }, loopDetection: { enabled: false } },
  );
  expect(result).toMatchObject({ subtype: 'success', num_turns: 25 });
  expect(JSON.stringify(await handle.transcript()).length).toBeGreaterThan(2.2 * 1024 * 1024);
  expect(h.requestsOf('big-transcript')[24]!.body.messages.filter((m) => m.role === 'tool')).toHaveLength(24);
});

test('max_tokens with a nearly full context compacts and carries on instead of ending the session', async () => {
  h.model.addScenario([
    { name: 'summaries-cutoff', turns: [turn.text('[scenario:cutoff-after] Ran steps one and two.')] },
    { name: 'cutoff-after', turns: [turn.text('unused'), turn.text('Finished after the cut-off.')] },
  ]);
  const { messages, result } = await h.run(
    {
      name: 'cutoff',
      turns: [
        turn.tool('Bash', { command: 'echo one' }, usage(1_000)),
        turn.tool('Bash', { command: 'echo two' }, usage(2_000)),
        turn.text('A very long answer that got cut', { finish_reason: 'length', usage: { prompt_tokens: 8_500, completion_tokens: 500 } }),
      ],
    },
    { compaction: { contextWindow: 10_000, threshold: 0.8, keepRecentTurns: 1, summaryModel: 'scripted/summaries-cutoff' } },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'Finished after the cut-off.' });
  expect(messages.filter((m) => m.type === 'system' && m.subtype === 'compact_boundary')).toHaveLength(1);
  const after = h.requestsOf('cutoff-after')[0]!.body.messages;
  expect(after[after.length - 1]).toEqual({
    role: 'user',
    content: 'Your previous response was cut off at the output token limit. Continue from where it stopped, in smaller steps.',
  });
});
