/**
 * What reaches the provider, seen from the scripted model's side: an interrupted or cancelled
 * turn aborts its request there (not only the session's bookkeeping); `maxThinkingTokens` is
 * sent as `reasoning_effort`; a compaction summary that is retried is announced like a model
 * call (`api_retry`).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

const requestsOf = (scenario: string) => h.requestsOf(scenario);
const firstRequestOf = (scenario: string) => requestsOf(scenario)[0];

describe('cancellation reaches the provider', () => {
  test('interrupt while the model has not answered aborts the HTTP request', async () => {
    const handle = await h.start(
      { name: 'hung-interrupt', turns: [turn.text('too late', { delay_ms: 600_000 })] },
      { heartbeatTimeoutMs: 2_000 },
    );
    await waitFor('the model request', () => firstRequestOf('hung-interrupt'));
    expect(firstRequestOf('hung-interrupt')!.abortedAt).toBeUndefined();
    await handle.interrupt();
    expect(await handle.result()).toMatchObject({ exit_reason: 'interrupted' });
    // The turn ends at once (TRY_CANCEL); the activity hears the cancellation on its next
    // heartbeat and must then drop the request rather than wait for the reply.
    await waitFor('the provider to see the request aborted', () => firstRequestOf('hung-interrupt')!.abortedAt);
    expect(requestsOf('hung-interrupt')).toHaveLength(1);
  });

  test('cancelling the session mid-stream aborts the HTTP request (default heartbeat timeout)', async () => {
    const stalled = turn.text('one two three four', { faults: [{ after_chunks: 2, hang_ms: 600_000 }] });
    const handle = await h.start({ name: 'hung-cancel', turns: [stalled] }, {});
    // The first chunks have gone out: the activity is streaming when the cancel arrives.
    await waitFor('the first chunks', () => (firstRequestOf('hung-cancel')?.chunksSent ?? 0) >= 2);
    await handle.cancel();
    expect(await handle.result()).toMatchObject({ exit_reason: 'aborted' });
    await waitFor('the provider to see the request aborted', () => firstRequestOf('hung-cancel')!.abortedAt);
    expect(requestsOf('hung-cancel')).toHaveLength(1);
  });
});

describe('maxThinkingTokens', () => {
  test('is sent as reasoning_effort when set, and not at all when unset', async () => {
    await h.run({ name: 'thinking-set', turns: [turn.text('ok')] }, { maxThinkingTokens: 10_000 });
    await h.run({ name: 'thinking-unset', turns: [turn.text('ok')] }, {});
    expect(firstRequestOf('thinking-set')!.body).toMatchObject({ reasoning_effort: 'medium' });
    expect(firstRequestOf('thinking-unset')!.body).not.toHaveProperty('reasoning_effort');
  });

  test('setMaxThinkingTokens changes the next request; 0 sends none', async () => {
    const ws = h.workspace();
    const waitForGate = (name: string) => turn.tool('Bash', { command: `until [ -f ${name} ]; do sleep 0.05; done` });
    const handle = await h.start(
      { name: 'thinking-steered', turns: [waitForGate('go1'), waitForGate('go2'), turn.text('done')] },
      { cwd: ws, maxThinkingTokens: 1_000 },
    );
    const gate = async (name: string, tokens: number) => {
      await waitFor(`Bash waiting on ${name}`, async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash') || undefined);
      await handle.setMaxThinkingTokens(tokens);
      writeFileSync(path.join(ws, name), '');
    };
    await gate('go1', 50_000);
    await waitFor('the second request', () => requestsOf('thinking-steered')[1]);
    await gate('go2', 0);
    expect(await handle.result()).toMatchObject({ subtype: 'success', result: 'done' });
    const sent = requestsOf('thinking-steered').map((r) => r.body.reasoning_effort);
    expect(sent).toEqual(['low', 'high', undefined]);
  });
});

test('a compaction summary that fails and will be retried is announced as api_retry', async () => {
  const usage = (prompt_tokens: number) => ({ usage: { prompt_tokens, completion_tokens: 10 } });
  const limited = { status: 429, headers: { 'retry-after-ms': '50' } };
  h.model.addScenario([
    { name: 'summary-429', turns: [turn.text('[scenario:summary-429-after] Ran steps 0 and 1.', { faults: [limited] })] },
    { name: 'summary-429-after', turns: [turn.text('unused'), turn.text('unused'), turn.text('All four steps ran.')] },
  ]);
  const { messages, result } = await h.run(
    {
      name: 'summary-retried',
      turns: [0, 1, 2, 3].map((i) => turn.tool('Bash', { command: `echo step ${i}` }, usage([1000, 2000, 3000, 8500][i]!))),
    },
    {
      compaction: { contextWindow: 10_000, threshold: 0.8, keepRecentTurns: 2, summaryModel: 'scripted/summary-429' },
      retry: { maxAttempts: 4, initialIntervalMs: 1_000, maximumIntervalMs: 60_000 },
    },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'All four steps ran.' });
  expect(requestsOf('summary-429').map((r) => r.status)).toEqual([429, 200]);
  const retries = messages.filter(
    (m): m is Extract<SessionEvent, { subtype: 'api_retry' }> => m.type === 'system' && m.subtype === 'api_retry',
  );
  expect(retries).toEqual([
    expect.objectContaining({
      attempt: 1,
      max_retries: 3,
      retry_delay_ms: 50,
      error_status: 429,
      error_message: expect.stringContaining('429'),
    }),
  ]);
});
