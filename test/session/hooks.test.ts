/**
 * Hooks in the turn, with real command hooks on the tools worker: PreToolUse runs before the
 * permission check and can block, PostToolUse after the tool, a Stop hook keeps the turn going
 * once with its reason as the model's next input; the order is PreToolUse → run → PostToolUse.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent, UserMessage } from '../../src/shared/events';
import type { ToolResultBlock } from '../../src/shared/messages';
import { useHarness } from '../helpers/harness';

const h = useHarness();

/**
 * A hook script: node reads the hook's JSON from stdin, appends a line to the log, then `body`.
 * The log is in the script's own directory, outside the session's cwd: hooks run in the session's
 * sandbox, so each session names that directory in `additionalDirectories` to make it writable.
 */
function hookScript(dir: string, name: string, body: string): string {
  const file = path.join(dir, `${name}.js`);
  writeFileSync(
    file,
    `let raw = '';
process.stdin.on('data', (c) => (raw += c)).on('end', () => {
  const input = JSON.parse(raw);
  const fs = require('fs');
  const line = [input.hook_event_name, input.tool_name ?? '', input.tool_input?.command ?? '', input.stop_hook_active ?? ''].join(' | ');
  fs.appendFileSync(${JSON.stringify(path.join(dir, 'hooks.log'))}, line + '\\n');
  ${body}
});
`,
  );
  return `node ${file}`;
}

const toolResults = (ms: SessionEvent[]) =>
  ms.flatMap((m) =>
    m.type === 'user' && Array.isArray((m as UserMessage).message.content) ? ((m as UserMessage).message.content as ToolResultBlock[]) : [],
  );

test('PreToolUse blocks git push, PostToolUse logs, a Stop hook blocks once: in that order', async () => {
  const cwd = h.workspace();
  const hooksDir = h.workspace();
  const pre = hookScript(
    hooksDir,
    'pre',
    `if (/git push/.test(input.tool_input.command)) { process.stderr.write('pushing is not allowed'); process.exit(2); }`,
  );
  const post = hookScript(hooksDir, 'post', ``);
  const stop = hookScript(
    hooksDir,
    'stop',
    `if (!input.stop_hook_active) process.stdout.write(JSON.stringify({ decision: 'block', reason: 'Run the tests before you stop.' }));`,
  );
  const { messages, result } = await h.run(
    {
      name: 'hooks-order',
      turns: [
        turn.tools([
          { name: 'Bash', arguments: { command: 'echo hi' } },
          { name: 'Bash', arguments: { command: 'git push origin main' } },
        ]),
        turn.text('done'),
        turn.text('really done'),
      ],
    },
    {
      cwd,
      additionalDirectories: [hooksDir],
      permissionMode: 'bypassPermissions',
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: pre }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: post }] }],
        Stop: [{ hooks: [{ type: 'command', command: stop }] }],
      },
    },
  );
  const log = readFileSync(path.join(hooksDir, 'hooks.log'), 'utf8').split('\n').slice(0, -1);
  expect(log).toEqual([
    'PreToolUse | Bash | echo hi | ',
    'PostToolUse | Bash | echo hi | ',
    'PreToolUse | Bash | git push origin main | ',
    'Stop |  |  | false',
    'Stop |  |  | true',
  ]);
  const [echo, push] = toolResults(messages);
  expect(echo).toMatchObject({ content: 'hi' });
  expect(push).toMatchObject({ is_error: true, content: 'Blocked by a PreToolUse hook: pushing is not allowed' });
  // The Stop hook's reason is the model's next input.
  const requests = h.model.requests.filter((r) => r.scenario === 'hooks-order');
  expect(requests).toHaveLength(3);
  const last = requests[2]!.body.messages as { role: string; content: unknown }[];
  expect(JSON.stringify(last[last.length - 1])).toContain('Run the tests before you stop.');
  expect(result).toMatchObject({ subtype: 'success', result: 'really done' });
  const responses = messages.filter((m) => m.type === 'system' && m.subtype === 'hook_response');
  expect(responses.map((m) => (m as { hook_event: string }).hook_event)).toEqual([
    'PreToolUse',
    'PostToolUse',
    'PreToolUse',
    'Stop',
    'Stop',
  ]);
});

test('a PreToolUse hook can ask: the call waits for approval even in bypassPermissions', async () => {
  const hooksDir = h.workspace();
  const ask = hookScript(
    hooksDir,
    'ask',
    `process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'deploys need a person' } }));`,
  );
  const handle = await h.start(
    { name: 'hook-ask', turns: [turn.tool('Bash', { command: 'echo deploy' }), turn.text('ok')] },
    {
      permissionMode: 'bypassPermissions',
      additionalDirectories: [hooksDir],
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: ask }] }] },
    },
  );
  const { waitFor } = await import('../helpers/wait');
  const view = await waitFor('a pending request', async () => {
    const s = await handle.state();
    return s.pendingPermissions.length === 1 ? s : undefined;
  });
  expect(view.pendingPermissions[0]!.message).toBe('A PreToolUse hook asks for approval: deploys need a person');
  await handle.interrupt();
  expect((await handle.result()).exit_reason).toBe('interrupted');
});

test('UserPromptSubmit can block the prompt: the turn ends with the reason and the model is never called', async () => {
  const hooksDir = h.workspace();
  const block = hookScript(
    hooksDir,
    'prompt',
    `process.stdout.write(JSON.stringify({ decision: 'block', reason: 'no secrets in prompts' }));`,
  );
  const { result } = await h.run(
    { name: 'prompt-blocked', turns: [] },
    { additionalDirectories: [hooksDir], hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: block }] }] } },
  );
  expect(result).toMatchObject({
    subtype: 'error_during_execution',
    exit_reason: 'stopped_by_hook',
    errors: ['The prompt was blocked by a UserPromptSubmit hook: no secrets in prompts'],
  });
  expect(h.model.requests.filter((r) => r.scenario === 'prompt-blocked')).toHaveLength(0);
});

test('disableBypassPermissionsMode in a settings file: a bypassPermissions session does not start, and cannot switch to it', async () => {
  const dir = h.workspace();
  const settings = path.join(dir, 'settings.json');
  writeFileSync(settings, JSON.stringify({ permissions: { disableBypassPermissionsMode: 'disable' } }));
  const { result } = await h.run({ name: 'bypass-disabled', turns: [] }, { permissionMode: 'bypassPermissions', settingsFile: settings });
  expect(result).toMatchObject({ exit_reason: 'setup_error' });
  expect(result.errors![0]).toMatch(/bypassPermissions is disabled by a settings file/);

  const handle = await h.start(
    { name: 'bypass-switch', turns: [turn.text('ok', { delay_ms: 300 })] },
    { permissionMode: 'default', settingsFile: settings },
  );
  const { waitFor } = await import('../helpers/wait');
  await waitFor('the model call', async () => h.model.requests.some((r) => r.scenario === 'bypass-switch'));
  await handle.setPermissionMode('bypassPermissions');
  const messages: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  expect(
    messages.some(
      (m) => m.type === 'system' && m.subtype === 'warning' && /setPermissionMode ignored: bypassPermissions is disabled/.test(m.message),
    ),
  ).toBe(true);
  expect((await handle.state()).permissionMode).toBe('default');
});
