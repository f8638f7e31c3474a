import type { Message } from '../../src/shared/messages';
import {
  applyCompaction,
  MAX_TASK_CHARS,
  planCompaction,
  transcriptProblem,
  type CompactionPlan,
} from '../../src/workflows/session/context/compaction-plan';
import { CONTINUATION_PREFIX } from '../../src/shared/model-texts';

const task: Message = { role: 'user', content: 'Fix the failing test in src/a.ts' };
const call = (id: string, text = ''): Message => ({
  role: 'assistant',
  content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use', id, name: 'Read', input: { file_path: `/${id}` } }],
});
const result = (id: string, content = `contents of ${id}`): Message => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content }],
});
const said = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const asks = (text: string): Message => ({ role: 'user', content: text });

/** task, then n tool turns t0..t(n-1). */
function session(n: number, size = 10): Message[] {
  const out: Message[] = [task];
  for (let i = 0; i < n; i++) out.push(call(`t${i}`), result(`t${i}`, 'x'.repeat(size)));
  return out;
}

/** Every split the planner may choose leaves pairs together: check all of them on a mixed transcript. */
function expectPairsTogether(messages: Message[], plan: CompactionPlan) {
  const before = new Set<string>();
  const after = new Set<string>();
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') return;
    for (const b of m.content) {
      const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : undefined;
      if (id) (i < plan.summarizeUpTo ? before : after).add(id);
    }
  });
  for (const id of after) expect(before.has(id)).toBe(false);
}

describe('planCompaction', () => {
  test('keeps the last N turns verbatim and summarizes everything before, task included', () => {
    const messages = session(10);
    const plan = planCompaction(messages, { keepRecentTurns: 3 })!;
    expect(plan.summarizeUpTo).toBe(messages.length - 6);
    expect(plan.keep).toEqual(messages.slice(-6));
    expect(plan.keep[0]).toEqual(call('t7'));
  });

  test('defaults to 4 turns', () => {
    const messages = session(10);
    expect(planCompaction(messages)!.keep).toHaveLength(8);
  });

  test('null when nothing but the task lies before the kept turns', () => {
    expect(planCompaction(session(3), { keepRecentTurns: 3 })).toBeNull();
    expect(planCompaction(session(3), { keepRecentTurns: 5 })).toBeNull();
    expect(planCompaction([task], { keepRecentTurns: 0 })).toBeNull();
  });

  test('a token cap keeps less than the turn count when the turns are large', () => {
    const messages = session(10, 4_000); // each result ≈ 1,000 tokens
    const plan = planCompaction(messages, { keepRecentTurns: 4, keepRecentTokens: 2_500 })!;
    // Two turns (≈ 2,014 tokens) fit; a third would not.
    expect(plan.keep).toEqual(messages.slice(-4));
  });

  test('the token cap never splits a pair: it moves the cut later, not earlier', () => {
    const messages = session(4, 4_000);
    // The last tool result alone (1,000 tokens) fits; with its tool_use (6 more) it would not.
    const plan = planCompaction(messages, { keepRecentTokens: 1_003 })!;
    expect(plan.keep).toEqual([]);
    expect(plan.summarizeUpTo).toBe(messages.length);
  });

  test('no split separates a tool_use from its tool_result, for any budget', () => {
    const messages: Message[] = [
      task,
      call('a', 'looking'),
      result('a', 'x'.repeat(300)),
      said('Done with a. What next?'),
      asks('Now do b and c'),
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'b', name: 'Bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 'c', name: 'Grep', input: { pattern: 'x' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'b', content: 'y'.repeat(500) },
          { type: 'tool_result', tool_use_id: 'c', content: 'z'.repeat(700) },
        ],
      },
      call('d'),
      result('d', 'w'.repeat(200)),
    ];
    for (let tokens = 1; tokens < 600; tokens += 7) {
      const plan = planCompaction(messages, { keepRecentTokens: tokens });
      if (!plan) continue;
      expectPairsTogether(messages, plan);
      expect(transcriptProblem(applyCompaction(messages, 'S', plan))).toBeNull();
    }
    for (let turns = 0; turns < 6; turns++) {
      const plan = planCompaction(messages, { keepRecentTurns: turns });
      if (!plan) continue;
      expectPairsTogether(messages, plan);
      expect(transcriptProblem(applyCompaction(messages, 'S', plan))).toBeNull();
    }
  });

  test("a kept turn takes the user's instruction that started it along", () => {
    const messages: Message[] = [task, call('a'), result('a'), said('done'), asks('now b'), call('b'), result('b')];
    const plan = planCompaction(messages, { keepRecentTurns: 1 })!;
    expect(plan.keep).toEqual([asks('now b'), call('b'), result('b')]);
  });

  test('a tool_result whose tool_use is missing goes to the summary, never kept as an orphan', () => {
    const messages: Message[] = [task, said('hi'), result('ghost'), call('a'), result('a')];
    const plan = planCompaction(messages, { keepRecentTurns: 2 })!;
    expect(plan.summarizeUpTo).toBe(3);
  });
});

describe('applyCompaction', () => {
  test('summary message, then the kept turns', () => {
    const messages = session(6);
    const plan = planCompaction(messages, { keepRecentTurns: 2 })!;
    const out = applyCompaction(messages, '  The summary.  ', plan);
    expect(out[0]).toEqual({
      role: 'user',
      content:
        'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nThe summary.',
    });
    expect(out.slice(1)).toEqual(messages.slice(-4));
    expect(transcriptProblem(out)).toBeNull();
  });

  test('a kept part that starts with a user message is merged into the summary message', () => {
    const messages: Message[] = [task, call('a'), result('a'), said('done'), asks('now b'), call('b'), result('b')];
    const out = applyCompaction(messages, 'S', { summarizeUpTo: 4 });
    expect(out[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: `${CONTINUATION_PREFIX}S` },
        { type: 'text', text: 'now b' },
      ],
    });
    expect(out.slice(1)).toEqual([call('b'), result('b')]);
    expect(transcriptProblem(out)).toBeNull();
  });

  test('keeping nothing leaves the summary alone, a valid transcript for the next call', () => {
    const messages = session(3);
    const out = applyCompaction(messages, 'S', { summarizeUpTo: messages.length });
    expect(out).toEqual([{ role: 'user', content: `${CONTINUATION_PREFIX}S` }]);
    expect(transcriptProblem(out)).toBeNull();
  });

  test('messages appended after planning are kept too', () => {
    const messages = session(5);
    const plan = planCompaction(messages, { keepRecentTurns: 1 })!;
    const later = [...messages, said('finished')];
    expect(applyCompaction(later, 'S', plan).slice(-3)).toEqual([...messages.slice(-2), said('finished')]);
  });

  test('the original task can be re-attached verbatim; a very long one is cut', () => {
    const messages = session(5);
    const plan = planCompaction(messages, { keepRecentTurns: 1 })!;
    const out = applyCompaction(messages, 'S', plan, { task: 'Fix the test' });
    expect(out[0]!.content).toBe(`${CONTINUATION_PREFIX}S\n\nThe user's original request, verbatim:\nFix the test`);
    const long = applyCompaction(messages, 'S', plan, { task: 'q'.repeat(MAX_TASK_CHARS + 5) });
    expect(long[0]!.content).toContain(`${'q'.repeat(MAX_TASK_CHARS)}\n[… 5 more characters; see the summary]`);
  });

  test('compacting a compacted transcript summarizes the old summary with the rest', () => {
    const first = applyCompaction(session(8), 'S1', planCompaction(session(8), { keepRecentTurns: 2 })!);
    const grown = [...first, call('n1'), result('n1'), call('n2'), result('n2'), call('n3'), result('n3')];
    const plan = planCompaction(grown, { keepRecentTurns: 2 })!;
    expect(plan.summarizeUpTo).toBe(grown.length - 4);
    const second = applyCompaction(grown, 'S2', plan);
    expect(second[0]!.content).toBe(`${CONTINUATION_PREFIX}S2`);
    expect(transcriptProblem(second)).toBeNull();
  });
});

describe('transcriptProblem', () => {
  test('accepts a valid transcript, pending tool calls at the end included', () => {
    expect(transcriptProblem(session(3))).toBeNull();
    expect(transcriptProblem([...session(1), call('x')])).toBeNull();
  });
  test.each<[string, Message[], string]>([
    ['empty', [], 'the transcript is empty'],
    ['assistant first', [said('hi')], 'the first message is not a user message'],
    ['two user messages', [task, asks('more')], 'messages 0 and 1 are both user messages'],
    ['orphan result', [task, said('hi'), result('x')], 'message 2 has a tool_result (x) with no tool_use in the message before it'],
    ['unanswered call', [task, call('x'), asks('hm')], 'message 1 has a tool_use (x) with no tool_result in the next message'],
  ])('rejects %s', (_name, messages, problem) => {
    expect(transcriptProblem(messages)).toBe(problem);
  });
});
