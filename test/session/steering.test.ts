/**
 * Steering a running session (interrupt, setModel, cancel) and the transcript-by-reference promise that model
 * activity inputs stay small however long the transcript grows.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { Message, ToolResultBlock, ToolUseBlock } from '../../src/shared/messages';
import { collect, useHarness } from '../helpers/harness';
import { scheduledActivities } from '../helpers/history';
import { waitFor } from '../helpers/wait';
import { processesNamed } from '../helpers/processes';

const h = useHarness();

function everyToolUseAnswered(transcript: Message[]): void {
  const uses = transcript
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b): b is ToolUseBlock => b.type === 'tool_use');
  const results = transcript
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b): b is ToolResultBlock => b.type === 'tool_result');
  expect(results.map((r) => r.tool_use_id).sort()).toEqual(uses.map((u) => u.id).sort());
}

test('interrupt during a slow model response ends the session without waiting for the reply', async () => {
  const handle = await h.start({ name: 'slow-model', turns: [turn.text('too late', { delay_ms: 600_000 })] }, {});
  await waitFor('the model request', () => h.requestsOf('slow-model').length > 0);
  await handle.interrupt();
  // The reply is ten minutes away: a result at all means the turn did not wait for it.
  const result = await Promise.race([
    handle.result(),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('the interrupted session waited for the model reply')), 60_000).unref(),
    ),
  ]);
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'interrupted', num_turns: 0 });
  expect(result.errors).toEqual(['The session was interrupted.']);
});

test('interrupt during a long Bash command kills it, and every tool_use still gets a tool_result', async () => {
  const ws = h.workspace();
  // Found by name: inside the Bash sandbox's PID namespace `$$` is not the host's pid.
  const sleeper = `da-steer-${process.pid}-${Date.now()}`;
  const handle = await h.start(
    {
      name: 'long-bash',
      turns: [
        turn.tools([
          { id: 'r', name: 'Glob', arguments: { pattern: '*' } },
          { id: 'b', name: 'Bash', arguments: { command: `exec -a ${sleeper} sleep 60` } },
          { id: 'w', name: 'Write', arguments: { file_path: path.join(ws, 'never.txt'), content: 'x' } },
        ]),
      ],
    },
    { cwd: ws },
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  await waitFor('the long command', () => processesNamed(sleeper).length === 1);
  await handle.interrupt();
  const messages = await collect(handle);
  const result = messages[messages.length - 1]!;
  expect(result).toMatchObject({ type: 'result', exit_reason: 'interrupted' });
  await waitFor('the long command to be killed', () => processesNamed(sleeper).length === 0 || undefined);
  const transcript = await handle.transcript();
  everyToolUseAnswered(transcript);
  const results = (transcript[2]!.content as ToolResultBlock[]).map((r) => [r.tool_use_id, r.is_error ?? false]);
  expect(results).toEqual([
    ['r', false],
    ['b', true],
    ['w', true],
  ]);
  expect((transcript[2]!.content as ToolResultBlock[])[2]!.content).toBe(
    'Interrupted by user: the tool call was cancelled before it finished.',
  );
});

test('setModel between turns: the next request carries the new model and usage has both', async () => {
  const g = h.gate();
  const handle = await h.start(
    {
      name: 'set-model',
      turns: [
        turn.tool('Bash', { command: g.command }, { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
        turn.text('done', { usage: { prompt_tokens: 200, completion_tokens: 20 } }),
      ],
    },
    {},
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  await handle.setModel('gpt-4.1-nano');
  await waitFor('the new model in the session state', async () => (await handle.state()).model === 'gpt-4.1-nano');
  g.release();
  const messages = await collect(handle);
  const models = h.requestsOf('set-model').map((r) => r.body.model);
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
  const g = h.gate();
  const handle = await h.start(
    {
      name: 'set-mode',
      turns: [turn.tool('Bash', { command: g.command }), turn.tool('Bash', { command: 'touch made' }), turn.text('ok')],
    },
    { cwd: ws, permissionMode: 'bypassPermissions' },
  );
  await waitFor('Bash to start', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  await handle.setPermissionMode('plan');
  await waitFor('the new mode in the session state', async () => (await handle.state()).permissionMode === 'plan');
  g.release();
  const messages = await collect(handle);
  expect(messages.filter((m) => m.type === 'system' && m.subtype === 'permission_denied')).toHaveLength(1);
  expect(existsSync(path.join(ws, 'made'))).toBe(false);
  expect((await handle.state()).permissionMode).toBe('plan');
});

test('cancelling the workflow ends the session as aborted with a result', async () => {
  const handle = await h.start({ name: 'cancel-me', turns: [turn.text('never', { delay_ms: 60_000 })] }, {});
  await waitFor('the model request', () => h.requestsOf('cancel-me').length > 0);
  await handle.cancel();
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'aborted', is_error: true });
});

test('a 40-turn session with a >200 KB transcript keeps every callModel input under 8 KB', async () => {
  const turns = Array.from({ length: 39 }, (_, i) =>
    turn.tool('Bash', { command: `head -c 6000 /dev/zero | tr '\\0' '${'abcdefghij'[i % 10]}'` }),
  );
  const { handle, result } = await h.run({ name: 'long-40', turns: [...turns, turn.text('done')] }, {});
  expect(result).toMatchObject({ subtype: 'success', num_turns: 40 });
  const transcriptBytes = JSON.stringify(await handle.transcript()).length;
  expect(transcriptBytes).toBeGreaterThan(200_000);
  const inputs = (await scheduledActivities(handle.workflow, 'callModel')).map((a) =>
    (a.input!.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0),
  );
  expect(inputs).toHaveLength(40);
  expect(Math.max(...inputs)).toBeLessThan(8 * 1024);
});
