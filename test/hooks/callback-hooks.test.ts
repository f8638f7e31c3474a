/**
 * The Agent SDK's callback hooks through `query()` on a real dev server and worker
 * (ARCHITECTURE.md#callback-hooks): the session asks this process, its callbacks answer, and their
 * decisions act as a command hook's do — PreToolUse deny, allow and updatedInput, PostToolUse
 * context reaching the model, UserPromptSubmit, a Stop hook keeping the turn going, SessionStart
 * and SessionEnd, a subagent's hooks answered on the subagent. A client that leaves while a hook
 * waits leaves it pending, and another process answers it; with nobody answering, the timeout
 * denies a PreToolUse call and lets other events go on. Unsupported events and detached starts
 * are refused by name.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DurableAgentClient } from '../../src/client/client';
import { query } from '../../src/sdk/query';
import type { Options } from '../../src/sdk/types';
import type { HookInput } from '../../src/shared/hook-callbacks';
import { asDurableAgentEvent, type HookResponseMessage, type SessionEvent } from '../../src/shared/events';
import { ConfigError } from '../../src/shared/config-error';
import { turn } from '../../src/testing/scripted-model';
import { toolResultsById } from '../helpers/chaos';
import { collect, scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

type Seen = { input: HookInput; toolUseID: string | undefined };

async function run(name: string, prompt: string, options: Options): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const m of query({ prompt: `${scenarioTag(name)} ${prompt}`, options: { client: h.client, ...options } }))
    out.push(m as SessionEvent);
  return out;
}

const hookResponses = (ms: SessionEvent[]) =>
  ms.filter((m): m is HookResponseMessage => m.type === 'system' && m.subtype === 'hook_response');
const sentToModel = (scenario: string, i: number) => JSON.stringify(h.requestsOf(scenario)[i]!.body.messages);

test('PreToolUse callbacks deny, allow and change the input; each gets the SDK input and the tool call id', async () => {
  const cwd = h.workspace();
  h.model.addScenario({
    name: 'cb-pre',
    turns: [
      turn.tool('Bash', { command: 'rm -rf src' }),
      turn.tool('Bash', { command: 'echo allowed > allowed.txt' }),
      turn.tool('Bash', { command: 'echo original > changed.txt' }),
      turn.text('done'),
    ],
  });
  const seen: Seen[] = [];
  const messages = await run('cb-pre', 'go', {
    cwd,
    // Nothing is allowed by rules here and nobody answers asks: what runs, a hook allowed.
    permissionMode: 'default',
    hooks: {
      PreToolUse: [
        {
          matcher: 'Bash',
          hooks: [
            async (input, toolUseID) => {
              seen.push({ input, toolUseID });
              const command = String((input as { tool_input: { command: string } }).tool_input.command);
              if (command.startsWith('rm')) {
                return {
                  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'No deleting.' },
                };
              }
              if (command.includes('original')) {
                return {
                  hookSpecificOutput: {
                    hookEventName: 'PreToolUse',
                    permissionDecision: 'allow',
                    updatedInput: { command: 'echo updated > changed.txt' },
                  },
                };
              }
              return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } };
            },
          ],
        },
      ],
    },
  });
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
  expect(seen).toHaveLength(3);
  expect(seen[0]!.input).toEqual({
    session_id: messages[0]!.session_id,
    transcript_path: '',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'rm -rf src' },
    tool_use_id: seen[0]!.toolUseID,
  });
  expect(seen[0]!.toolUseID).toEqual(expect.any(String));
  // The denial is the tool's error result, with the hook's reason; the other two ran, one with the new input.
  expect(sentToModel('cb-pre', 1)).toContain('No deleting.');
  expect(readFileSync(path.join(cwd, 'allowed.txt'), 'utf8')).toBe('allowed\n');
  expect(readFileSync(path.join(cwd, 'changed.txt'), 'utf8')).toBe('updated\n');
  const requests = messages.filter((m) => asDurableAgentEvent(m)?.subtype === 'hook_request');
  expect(requests).toHaveLength(3);
  expect(requests[0]).toMatchObject({ request_id: 'hook-1', hook_event: 'PreToolUse', matcher_index: 0, timeout_ms: 60_000 });
  expect(hookResponses(messages).map((r) => [r.hook_name, r.outcome])).toEqual([
    ['PreToolUse[Bash] callback 1/1 (client)', 'success'],
    ['PreToolUse[Bash] callback 1/1 (client)', 'success'],
    ['PreToolUse[Bash] callback 1/1 (client)', 'success'],
  ]);
});

test('PostToolUse and UserPromptSubmit context reaches the model; SessionStart and SessionEnd are called', async () => {
  h.model.addScenario({ name: 'cb-context', turns: [turn.tool('Bash', { command: 'echo hi' }), turn.text('done')] });
  const calls: string[] = [];
  const note = (event: string, text: string) => async (input: HookInput) => {
    calls.push(
      `${input.hook_event_name} ${JSON.stringify((input as { source?: string; reason?: string; prompt?: string }).source ?? (input as { reason?: string }).reason ?? '')}`,
    );
    return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
  };
  const messages = await run('cb-context', 'say hi', {
    cwd: h.workspace(),
    permissionMode: 'bypassPermissions',
    allowDangerouslySkipPermissions: true,
    hooks: {
      SessionStart: [{ hooks: [note('SessionStart', 'Session context from the client.')] }],
      UserPromptSubmit: [{ hooks: [note('UserPromptSubmit', 'Prompt context from the client.')] }],
      PostToolUse: [{ matcher: 'Bash', hooks: [note('PostToolUse', 'The echo printed a greeting.')] }],
      SessionEnd: [{ hooks: [async (input) => (calls.push(`SessionEnd ${JSON.stringify((input as { reason: string }).reason)}`), {})] }],
    },
  });
  expect(messages.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'done' });
  expect(calls).toEqual(['SessionStart "startup"', 'UserPromptSubmit ""', 'PostToolUse ""', 'SessionEnd "other"']);
  expect(sentToModel('cb-context', 0)).toContain('Session context from the client.');
  expect(sentToModel('cb-context', 0)).toContain('Prompt context from the client.');
  expect(sentToModel('cb-context', 1)).toContain('The echo printed a greeting.');
  // query() answered SessionEnd after the result, and the session then closed.
  const id = messages[0]!.session_id;
  expect(await (await h.client.get(id)).isOpen()).toBe(false);
});

test('a Stop callback keeps the turn going with its reason, then lets it end', async () => {
  h.model.addScenario({ name: 'cb-stop', turns: [turn.text('first answer'), turn.text('second answer')] });
  const active: boolean[] = [];
  const messages = await run('cb-stop', 'go', {
    cwd: h.workspace(),
    hooks: {
      Stop: [
        {
          hooks: [
            async (input) => {
              const again = (input as { stop_hook_active: boolean }).stop_hook_active;
              active.push(again);
              return again ? {} : { decision: 'block', reason: 'Also check the tests.' };
            },
          ],
        },
      ],
    },
  });
  expect(messages.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'second answer' });
  expect(active).toEqual([false, true]);
  expect(sentToModel('cb-stop', 1)).toContain('Also check the tests.');
});

test("a subagent's hooks are answered on the subagent; SubagentStart and SubagentStop in the parent", async () => {
  h.model.addScenario({ name: 'cb-child', turns: [turn.tool('Bash', { command: 'echo from-child' }), turn.text('child done')] });
  h.model.addScenario({
    name: 'cb-parent',
    turns: [
      turn.tools([
        {
          id: 'task_1',
          name: 'Task',
          arguments: { description: 'part', prompt: `${scenarioTag('cb-child')} Do it.`, subagent_type: 'helper' },
        },
      ]),
      turn.text('parent done'),
    ],
  });
  const seen: HookInput[] = [];
  const record = async (input: HookInput) => (seen.push(input), {});
  const messages = await run('cb-parent', 'go', {
    cwd: h.workspace(),
    permissionMode: 'bypassPermissions',
    allowDangerouslySkipPermissions: true,
    agents: { helper: { description: 'Helps', prompt: 'You help.', tools: ['Bash'] } },
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [record] }],
      SubagentStart: [{ hooks: [record] }],
      SubagentStop: [{ hooks: [record] }],
    },
  });
  expect(messages.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'parent done' });
  const parent = messages[0]!.session_id;
  const child = `${parent}/task/task_1`;
  expect(seen.map((i) => i.hook_event_name)).toEqual(['SubagentStart', 'PreToolUse', 'SubagentStop']);
  expect(seen[0]).toMatchObject({ session_id: parent, agent_id: child, agent_type: 'helper' });
  expect(seen[1]).toMatchObject({ session_id: child, agent_id: child, agent_type: 'helper', tool_name: 'Bash' });
  expect(seen[2]).toMatchObject({ session_id: parent, agent_id: child, agent_transcript_path: '', stop_hook_active: false });
  const childRequest = messages.find(
    (m) => asDurableAgentEvent(m)?.subtype === 'hook_request' && (m as { request_session_id: string }).request_session_id === child,
  );
  expect(childRequest).toMatchObject({ hook_event: 'PreToolUse', parent_tool_use_id: 'task_1' });
});

test('a client that leaves while a hook waits leaves it pending; another process answers it and the session completes', async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'cb-leave', turns: [turn.tool('Bash', { command: 'echo ran >> log.txt' }), turn.text('done')] });
  let firstSignal: AbortSignal | undefined;
  const q = query({
    prompt: `${scenarioTag('cb-leave')} go`,
    options: {
      cwd,
      client: h.client,
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            timeout: 600,
            hooks: [
              (_input, _id, { signal }) => {
                firstSignal = signal;
                return new Promise(() => undefined);
              },
            ],
          },
        ],
      },
    },
  });
  for await (const m of q) if (asDurableAgentEvent(m)?.subtype === 'hook_request') break;
  await waitFor('the first callback to be called', () => firstSignal !== undefined);
  await waitFor('its signal to abort once the loop was left', () => firstSignal!.aborted);
  const id = await q.sessionId;

  // Another process: its own connection, the same hooks.
  const other = await DurableAgentClient.connect({ address: h.address, taskQueue: h.taskQueue });
  try {
    const session = await other.get(id);
    const pending = await session.pendingHookRequests();
    expect(pending).toEqual([
      expect.objectContaining({ requestId: 'hook-1', event: 'PreToolUse', matcherIndex: 0, callbacks: 1, timeoutMs: 600_000 }),
    ]);
    expect(existsSync(path.join(cwd, 'log.txt'))).toBe(false);
    const inputs: HookInput[] = [];
    await session.answerHooks(
      { PreToolUse: [{ matcher: 'Bash', hooks: [async (input: HookInput) => (inputs.push(input), { continue: true })] }] },
      { pollMs: 100 },
    );
    expect(inputs.map((i) => i.hook_event_name)).toEqual(['PreToolUse']);
    expect(await session.result()).toMatchObject({ subtype: 'success', result: 'done' });
    expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('ran\n');
    // Answered: a second answer is refused by the validator, naming the request.
    await expect(session.respondToHook({ requestId: 'hook-1', results: [{ output: {} }] })).rejects.toThrow();
  } finally {
    await other.close();
  }
});

test('with nobody answering, the timeout denies a PreToolUse call naming the hook, and other events go on', async () => {
  const handle = await h.start(
    { name: 'cb-nobody', turns: [turn.tool('Bash', { command: 'echo never' }), turn.text('done anyway')] },
    { clientHooks: { UserPromptSubmit: [{ hooks: 1, timeout: 1 }], PreToolUse: [{ matcher: 'Bash', hooks: 1, timeout: 1 }] } },
  );
  const messages = await collect(handle);
  expect(messages.find((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'done anyway' });
  expect(hookResponses(messages).map((r) => [r.hook_event, r.hook_outcome, r.stderr])).toEqual([
    ['UserPromptSubmit', 'timeout', 'no client answered within 1 s'],
    [
      'PreToolUse',
      'timeout',
      'The PreToolUse callback hook PreToolUse[Bash] callbacks (client) got no answer (no client answered within 1 s), so the call was denied: a guard hook that cannot run never lets a call through.',
    ],
  ]);
  const result = [...toolResultsById(await handle.transcript()).values()][0]!;
  expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('PreToolUse[Bash] callbacks (client) got no answer') });
  expect(await handle.pendingHookRequests()).toEqual([]);
});

test('an event we do not fire and a detached start with callbacks are refused by name', async () => {
  const notification = run('never', 'x', { cwd: h.workspace(), hooks: { Notification: [{ hooks: [async () => ({})] }] } });
  await expect(notification).rejects.toThrow(ConfigError);
  await expect(notification).rejects.toThrow(
    /^option hooks.Notification is not supported by durable-agent: durable-agent does not fire Notification/,
  );
  const detached = h.client.start({
    prompt: 'x',
    cwd: h.workspace(),
    hooks: { PreToolUse: [{ hooks: [async () => ({})] }] } as never,
  });
  await expect(detached).rejects.toThrow(/^hooks.PreToolUse\[0\]: a callback hook is answered by the process that called query\(\)/);
});
