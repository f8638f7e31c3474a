/** Boundaries of the compaction planner: exact budgets, option combinations, odd transcripts. */
import type { Message } from '../../src/shared/messages';
import { applyCompaction, MAX_TASK_CHARS, planCompaction, transcriptProblem } from '../../src/workflows/session/context/compaction-plan';
import { CONTINUATION_PREFIX } from '../../src/shared/model-texts';

const task: Message = { role: 'user', content: 'Fix the failing test' };
const call = (id: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: `/${id}` } }],
});
const result = (id: string, content = 'x'.repeat(40)): Message => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content }],
});
const said = (text: string): Message => ({ role: 'assistant', content: text });
const asks = (text: string): Message => ({ role: 'user', content: text });

/** task, then n tool turns t0..t(n-1); each turn is 6 + 10 = 16 estimated tokens. */
function session(n: number): Message[] {
  const out: Message[] = [task];
  for (let i = 0; i < n; i++) out.push(call(`t${i}`), result(`t${i}`));
  return out;
}

describe('planCompaction', () => {
  test('keepRecentTurns 0 keeps nothing verbatim', () => {
    const messages = session(3);
    expect(planCompaction(messages, { keepRecentTurns: 0 })).toEqual({ summarizeUpTo: 7, keep: [] });
  });

  test('a token cap alone is not also capped at the default 4 turns', () => {
    const messages = session(10);
    const plan = planCompaction(messages, { keepRecentTokens: 6 * 16 })!;
    expect(plan.keep).toEqual(messages.slice(-12));
  });

  test('the kept part may hold exactly the token cap', () => {
    // 10 tokens each: the last two fit a cap of 20 exactly.
    const messages = [task, said('a'.repeat(40)), asks('b'.repeat(40)), said('c'.repeat(40)), asks('d'.repeat(40))];
    expect(planCompaction(messages, { keepRecentTokens: 20 })).toEqual({ summarizeUpTo: 3, keep: messages.slice(3) });
    expect(planCompaction(messages, { keepRecentTokens: 19 })).toEqual({ summarizeUpTo: 4, keep: messages.slice(4) });
  });

  test('the cut may fall right before the last message', () => {
    const messages = [...session(2), said('All done.')];
    expect(planCompaction(messages, { keepRecentTurns: 1 })).toEqual({ summarizeUpTo: 5, keep: [said('All done.')] });
  });

  test("only a user's message is pulled in with its turn", () => {
    // Two assistant messages in a row (not a valid transcript, but the planner must not merge them).
    const messages = [task, call('a'), result('a'), said('first'), said('second')];
    expect(planCompaction(messages, { keepRecentTurns: 1 })).toEqual({ summarizeUpTo: 4, keep: [said('second')] });
  });
});

describe('applyCompaction', () => {
  test('a task of exactly the limit is re-attached whole', () => {
    const messages = session(5);
    const plan = planCompaction(messages, { keepRecentTurns: 1 })!;
    const out = applyCompaction(messages, 'S', plan, { task: 'q'.repeat(MAX_TASK_CHARS) });
    expect(out[0]!.content).toBe(`${CONTINUATION_PREFIX}S\n\nThe user's original request, verbatim:\n${'q'.repeat(MAX_TASK_CHARS)}`);
  });

  test('a longer task is cut at the limit and says how much is missing', () => {
    const messages = session(5);
    const plan = planCompaction(messages, { keepRecentTurns: 1 })!;
    const out = applyCompaction(messages, 'S', plan, { task: 'q'.repeat(MAX_TASK_CHARS + 1) });
    expect(out[0]!.content).toBe(
      `${CONTINUATION_PREFIX}S\n\nThe user's original request, verbatim:\n${'q'.repeat(MAX_TASK_CHARS)}\n[… 1 more characters; see the summary]`,
    );
    expect(MAX_TASK_CHARS).toBe(20_000);
  });

  test('a kept user message made of blocks is merged block by block', () => {
    const notice: Message = {
      role: 'user',
      content: [
        { type: 'text', text: 'now b' },
        { type: 'text', text: 'Loop warning: …' },
      ],
    };
    const messages = [task, call('a'), result('a'), said('done'), notice, call('b'), result('b')];
    const out = applyCompaction(messages, 'S', { summarizeUpTo: 4 });
    expect(out[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: `${CONTINUATION_PREFIX}S` },
        { type: 'text', text: 'now b' },
        { type: 'text', text: 'Loop warning: …' },
      ],
    });
    expect(transcriptProblem(out)).toBeNull();
  });
});

describe('transcriptProblem', () => {
  test('tool results in the first message answer nothing', () => {
    expect(transcriptProblem([result('x')])).toBe('message 0 has a tool_result (x) with no tool_use in the message before it');
  });

  test('an unanswered call is found after text in the same message', () => {
    const m: Message = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading two files' },
        { type: 'tool_use', id: 'a', name: 'Read', input: {} },
        { type: 'tool_use', id: 'b', name: 'Read', input: {} },
      ],
    };
    expect(transcriptProblem([task, m, result('a')])).toBe('message 1 has a tool_use (b) with no tool_result in the next message');
  });

  test('a result for a call of an earlier turn is an orphan', () => {
    const both: Message = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'b', content: 'b' },
        { type: 'tool_result', tool_use_id: 'a', content: 'a again' },
      ],
    };
    expect(transcriptProblem([task, call('a'), result('a'), call('b'), both])).toBe(
      'message 4 has a tool_result (a) with no tool_use in the message before it',
    );
  });
});
