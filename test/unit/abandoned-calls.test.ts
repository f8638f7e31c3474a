/**
 * Counting abandoned model call attempts in the session (src/workflows/session/abandoned-calls.ts): once
 * per attempt, apart from the model's own figures, in the total cost, in the result's
 * `modelUsage`, and into a parent's from a subagent's result.
 */
import type { AbandonedCallNotice } from '../../src/shared/api';
import { parseSessionConfig } from '../../src/shared/config';
import { accountAbandonedCall } from '../../src/workflows/session/abandoned-calls';
import { accountReply, buildResult, EventLog, initialState, usageView } from '../../src/workflows/session/state';
import { accountChild } from '../../src/workflows/session/subagents';

function session() {
  const state = initialState(parseSessionConfig({ prompt: 'hi', cwd: '/tmp' }), 's1', 0);
  let n = 0;
  const log = new EventLog(state, () => `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`);
  return { state, log };
}

const notice = (over: Partial<AbandonedCallNotice> = {}): AbandonedCallNotice => ({
  runId: 'r1',
  activityId: '3',
  attempt: 1,
  model: 'gpt-4.1-mini',
  usage: { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 200, cache_creation_input_tokens: 0 },
  costUsd: 0.01,
  costBasis: 'table',
  contextWindow: 1_000_000,
  outcome: 'completed',
  estimated: false,
  ...over,
});

test('an abandoned attempt is counted once, apart from the replies, and in the total', () => {
  const { state, log } = session();
  accountReply(state, {
    id: 'm1',
    model: 'gpt-4.1-mini',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 200, cache_creation_input_tokens: 0 },
    durationMs: 10,
    costUsd: 0.01,
    costBasis: 'table',
    contextWindow: 1_000_000,
  });
  accountAbandonedCall(state, log, notice());
  accountAbandonedCall(state, log, notice()); // the same attempt reported twice
  accountAbandonedCall(state, log, notice({ activityId: '5', outcome: 'cancelled', estimated: true, costUsd: 0.002 }));

  const result = buildResult(state, { exit: 'end_turn', nowMs: 1 });
  expect(result.modelUsage['gpt-4.1-mini']).toMatchObject({
    inputTokens: 1000,
    outputTokens: 50,
    costUSD: 0.01,
    abandonedCalls: { count: 2, inputTokens: 2000, outputTokens: 100, cacheReadInputTokens: 400, costUSD: 0.012, estimated: 1 },
  });
  expect(result.total_cost_usd).toBeCloseTo(0.022, 12);
  expect(result.usage.input_tokens).toBe(1000);
  expect(usageView(state).perModel['gpt-4.1-mini']!.abandonedCalls).toMatchObject({ count: 2 });
  expect(log.events.filter((e) => e.type === 'system' && e.subtype === 'warning')).toHaveLength(2);
});

test('a model with no reply yet gets an entry of its own; a session with none abandoned reports none', () => {
  const { state, log } = session();
  expect(buildResult(state, { exit: 'end_turn', nowMs: 1 }).modelUsage).toEqual({});
  accountAbandonedCall(state, log, notice({ model: 'gpt-5' }));
  expect(buildResult(state, { exit: 'end_turn', nowMs: 1 }).modelUsage['gpt-5']).toMatchObject({
    inputTokens: 0,
    costUSD: 0,
    abandonedCalls: { count: 1, costUSD: 0.01 },
  });
});

test("a subagent's abandoned attempts add to its parent's", () => {
  const child = session();
  accountAbandonedCall(child.state, child.log, notice());
  const childResult = { ...buildResult(child.state, { exit: 'end_turn', nowMs: 1 }), uuid: 'u', session_id: 'c', seq: 0 };
  const parent = session();
  accountAbandonedCall(parent.state, parent.log, notice({ runId: 'parent-run' }));
  const record = { toolUseId: 't', agentType: 'general', description: 'd', workflowId: 'c', status: 'completed' as const, costUsd: 0 };
  accountChild(parent.state, record, childResult as Parameters<typeof accountChild>[2]);
  expect(parent.state.spend.perModel['gpt-4.1-mini']!.abandonedCalls).toMatchObject({ count: 2, costUSD: 0.02 });
  expect(parent.state.spend.costUsd).toBeCloseTo(0.02, 12);
});
