/**
 * Steering a running session (interrupt, setModel, cancel) and the D1 promise that model
 * activity inputs stay small however long the transcript grows.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SDKMessage } from '../../src/shared/events';
import type { Message, ToolResultBlock, ToolUseBlock } from '../../src/shared/messages';
import { startHarness, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});


async function collect(handle: { messages(o?: { pollMs?: number }): AsyncIterable<SDKMessage> }): Promise<SDKMessage[]> {
  const out: SDKMessage[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) out.push(m);
  return out;
}

function everyToolUseAnswered(transcript: Message[]): void {
  const uses = transcript.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b): b is ToolUseBlock => b.type === 'tool_use');
  const results = transcript.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b): b is ToolResultBlock => b.type === 'tool_result');
  expect(results.map((r) => r.tool_use_id).sort()).toEqual(uses.map((u) => u.id).sort());
}

test('interrupt during a slow model response ends the session within two heartbeat intervals', async () => {
  const heartbeatTimeoutMs = 2_000;
  const handle = await h.start({ name: 'slow-model', turns: [turn.text('too late', { delay_ms: 60_000 })] }, { heartbeatTimeoutMs });
  await waitFor('the model request', () => h.model.requests.some((r) => r.scenario === 'slow-model') || undefined);
  const t0 = Date.now();
  await handle.interrupt();
  const result = await handle.result();
  expect(Date.now() - t0).toBeLessThan(2 * heartbeatTimeoutMs);
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'interrupted', num_turns: 0 });
  expect(result.errors).toEqual(['The session was interrupted.']);
});

test('interrupt during a long Bash command kills it, and every tool_use still gets a tool_result', async () => {
  const ws = h.workspace();
  const handle = await h.start(
    {
      name: 'long-bash',
      turns: [
        turn.tools([
          { id: 'r', name: 'Glob', arguments: { pattern: '*' } },
          { id: 'b', name: 'Bash', arguments: { command: 'echo $$ > pid; sleep 60; touch finished' } },
          { id: 'w', name: 'Write', arguments: { file_path: path.join(ws, 'never.txt'), content: 'x' } },
        ]),
      ],
    },
    { cwd: ws },
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash') || undefined);
  const pid = Number(await waitFor('the pid file', () => {
    try {
      return readFileSync(path.join(ws, 'pid'), 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  }));
  await handle.interrupt();
  const messages = await collect(handle);
  const result = messages[messages.length - 1]!;
  expect(result).toMatchObject({ type: 'result', exit_reason: 'interrupted' });
  expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  const transcript = await handle.transcript();
  everyToolUseAnswered(transcript);
  const results = (transcript[2]!.content as ToolResultBlock[]).map((r) => [r.tool_use_id, r.is_error ?? false]);
  expect(results).toEqual([
    ['r', false],
    ['b', true],
    ['w', true],
  ]);
  expect((transcript[2]!.content as ToolResultBlock[])[2]!.content).toBe('Interrupted by user: the tool call was cancelled before it finished.');
});

test('setModel between turns: the next request carries the new model and usage has both', async () => {
  const handle = await h.start(
    {
      name: 'set-model',
      turns: [turn.tool('Bash', { command: 'sleep 1' }, { usage: { prompt_tokens: 100, completion_tokens: 10 } }), turn.text('done', { usage: { prompt_tokens: 200, completion_tokens: 20 } })],
    },
    {},
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash') || undefined);
  await handle.setModel('gpt-4.1-nano');
  const messages = await collect(handle);
  const models = h.model.requests.filter((r) => r.scenario === 'set-model').map((r) => r.body.model);
  expect(models).toEqual(['gpt-4.1-mini', 'gpt-4.1-nano']);
  expect(messages.find((m) => m.type === 'system' && m.subtype === 'model_changed')).toMatchObject({
    model: 'gpt-4.1-nano',
    previous_model: 'gpt-4.1-mini',
    reason: 'set_model',
  });
  const usage = await handle.usage();
  expect(Object.keys(usage.perModel).sort()).toEqual(['gpt-4.1-mini', 'gpt-4.1-nano']);
  expect(usage.perModel['gpt-4.1-nano']!.inputTokens).toBe(200);
  expect((await handle.state()).model).toBe('gpt-4.1-nano');
});

test('setPermissionMode takes effect for the next tool call', async () => {
  const ws = h.workspace();
  const handle = await h.start(
    {
      name: 'set-mode',
      turns: [turn.tool('Bash', { command: 'sleep 1' }), turn.tool('Bash', { command: 'touch made' }), turn.text('ok')],
    },
    { cwd: ws, permissionMode: 'bypassPermissions' },
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash') || undefined);
  await handle.setPermissionMode('plan');
  const messages = await collect(handle);
  expect(messages.filter((m) => m.type === 'system' && m.subtype === 'permission_denied')).toHaveLength(1);
  expect((await handle.state()).permissionMode).toBe('plan');
});

test('cancelling the workflow ends the session as aborted with a result', async () => {
  const handle = await h.start({ name: 'cancel-me', turns: [turn.text('never', { delay_ms: 60_000 })] }, {});
  await waitFor('the model request', () => h.model.requests.some((r) => r.scenario === 'cancel-me') || undefined);
  await handle.cancel();
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'aborted', is_error: true });
});

test('a 40-turn session with a >200 KB transcript keeps every callModel input under 8 KB', async () => {
  const turns = Array.from({ length: 39 }, (_, i) => turn.tool('Bash', { command: `head -c 6000 /dev/zero | tr '\\0' '${'abcdefghij'[i % 10]}'` }));
  const { handle, result } = await h.run({ name: 'long-40', turns: [...turns, turn.text('done')] }, {});
  expect(result).toMatchObject({ subtype: 'success', num_turns: 40 });
  const transcriptBytes = JSON.stringify(await handle.transcript()).length;
  expect(transcriptBytes).toBeGreaterThan(200_000);
  const history = await handle.workflow.fetchHistory();
  const inputs = (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((e) => (e.activityTaskScheduledEventAttributes!.input!.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0));
  expect(inputs).toHaveLength(40);
  expect(Math.max(...inputs)).toBeLessThan(8 * 1024);
});
