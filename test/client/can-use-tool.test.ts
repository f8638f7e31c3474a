/**
 * `query({ options: { canUseTool } })` as in the Claude Agent SDK, on durable approval: the client
 * answers each request it sees; a client that breaks off before answering leaves the request
 * pending, and another client (another connection) answers it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DurableAgentClient } from '../../src/client/client';
import type { CanUseTool, PermissionResult } from '../../src/client/permissions';
import { query } from '../../src/sdk/query';
import { turn } from '../../src/testing/scripted-model';
import { asDurableAgentEvent, type QueryMessage } from '../../src/shared/events';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

type Call = { toolName: string; input: Record<string, unknown>; suggestions: unknown; toolUseID: string; decisionReason?: string };

test('canUseTool answers each request: allow with updatedPermissions (always), allow with updatedInput, deny with a message the model sees', async () => {
  const cwd = h.workspace();
  const echo = turn.tool('Bash', { command: 'echo one >> log.txt' });
  h.model.addScenario({
    name: 'can-use-tool',
    turns: [
      echo,
      echo,
      turn.tool('Bash', { command: 'echo original > out.txt' }),
      turn.tool('Bash', { command: 'rm -rf src' }),
      turn.text('done'),
    ],
  });
  const calls: Call[] = [];
  const canUseTool: CanUseTool = async (toolName, input, { suggestions, toolUseID, decisionReason }) => {
    calls.push({ toolName, input, suggestions, toolUseID, decisionReason });
    const command = String(input.command);
    if (command.startsWith('echo one')) return { behavior: 'allow', updatedInput: input, updatedPermissions: suggestions };
    if (command.startsWith('echo original')) return { behavior: 'allow', updatedInput: { command: 'echo changed > out.txt' } };
    return { behavior: 'deny', message: 'Deleting src is not allowed.' };
  };
  const messages: QueryMessage[] = [];
  for await (const m of query({
    prompt: `${scenarioTag('can-use-tool')} go`,
    options: { cwd, permissionMode: 'default', client: h.client, canUseTool },
  }))
    messages.push(m);

  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
  // The second identical echo ran under the rule the first answer added: asked once.
  expect(calls.map((c) => c.input.command)).toEqual(['echo one >> log.txt', 'echo original > out.txt', 'rm -rf src']);
  expect(calls[0]).toMatchObject({
    toolName: 'Bash',
    suggestions: [
      { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'echo one >> log.txt' }], behavior: 'allow', destination: 'session' },
    ],
    toolUseID: expect.any(String),
    decisionReason: expect.any(String),
  });
  expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('one\none\n');
  expect(readFileSync(path.join(cwd, 'out.txt'), 'utf8')).toBe('changed\n');
  const resolved = messages.filter((m) => m.type === 'system' && m.subtype === 'permission_resolved');
  expect(resolved.map((m) => (m as { behavior: string; rules_added: string[] }).behavior)).toEqual(['allow', 'allow', 'deny']);
  expect((resolved[0] as { rules_added: string[] }).rules_added).toEqual(['Bash(echo one >> log.txt)']);
  const last = h.model.requests.filter((r) => r.scenario === 'can-use-tool').at(-1)!;
  expect(JSON.stringify(last.body.messages)).toContain('Deleting src is not allowed.');
});

test('a request the first client abandoned stays pending, and a second client answers it', async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'abandoned', turns: [turn.tool('Bash', { command: 'echo once >> log.txt' }), turn.text('done')] });
  let firstSignal: AbortSignal | undefined;
  const undecided: CanUseTool = (_tool, _input, { signal }) => {
    firstSignal = signal;
    return new Promise<PermissionResult>(() => undefined);
  };
  const q = query({
    prompt: `${scenarioTag('abandoned')} go`,
    options: { cwd, permissionMode: 'default', client: h.client, canUseTool: undecided },
  });
  for await (const m of q) {
    if (asDurableAgentEvent(m)?.subtype === 'permission_request') break;
  }
  await waitFor('the first callback to be called', () => firstSignal !== undefined);
  expect(firstSignal!.aborted).toBe(true);
  const sessionId = await q.sessionId;

  // Another process: its own connection.
  const other = await DurableAgentClient.connect({ address: h.address, taskQueue: h.taskQueue });
  try {
    const session = await other.get(sessionId);
    expect((await session.pendingPermissions()).map((p) => p.requestId)).toEqual(['perm-1']);
    expect(existsSync(path.join(cwd, 'log.txt'))).toBe(false);
    const seen: string[] = [];
    const allow: CanUseTool = async (toolName, input) => {
      seen.push(`${toolName} ${String(input.command)}`);
      return { behavior: 'allow' };
    };
    // Two answerers at once: one answer is applied, the other is refused, and neither fails.
    const third = await DurableAgentClient.connect({ address: h.address, taskQueue: h.taskQueue });
    try {
      await Promise.all([
        session.answerPermissions(allow, { pollMs: 100 }),
        (await third.get(sessionId)).answerPermissions(allow, { pollMs: 100 }),
      ]);
    } finally {
      await third.close();
    }
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(new Set(seen)).toEqual(new Set(['Bash echo once >> log.txt']));
    expect(await session.result()).toMatchObject({ subtype: 'success', result: 'done' });
    expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('once\n');
  } finally {
    await other.close();
  }
});

test('a callback that throws or answers nonsense denies the call, saying why, instead of leaving the session waiting', async () => {
  h.model.addScenario({
    name: 'bad-callback',
    turns: [turn.tool('Bash', { command: 'echo a' }), turn.tool('Bash', { command: 'echo b' }), turn.text('done')],
  });
  let n = 0;
  const canUseTool: CanUseTool = async () => {
    if (n++ === 0) throw new Error('approval service down');
    return { behavior: 'maybe' } as unknown as PermissionResult;
  };
  const messages: QueryMessage[] = [];
  for await (const m of query({
    prompt: `${scenarioTag('bad-callback')} go`,
    options: { cwd: h.workspace(), permissionMode: 'default', client: h.client, canUseTool },
  }))
    messages.push(m);
  const denials = messages
    .filter((m) => m.type === 'system' && m.subtype === 'permission_denied')
    .map((m) => (m as { message: string }).message);
  expect(denials).toEqual([
    'The permission callback failed (approval service down); Bash was not run.',
    "canUseTool returned neither {behavior: 'allow'} nor {behavior: 'deny', message}; Bash was not run.",
  ]);
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
});
