/**
 * Durable human approval: an "ask" pauses only that tool call as a pending request in the
 * workflow, answered by a validated update from any client — allow (once, with a changed input, or
 * always), deny with a message the model sees, a timeout, an interrupt — and survives the worker
 * going away while it waits.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import {
  pendingPermissionsQuery,
  respondToPermissionUpdate,
  type PendingPermission,
  type PermissionAnswer,
} from '../../src/shared/approvals';
import type { SessionHandle } from '../../src/client/client';
import type { SessionEvent, UserMessage } from '../../src/shared/events';
import type { ToolResultBlock } from '../../src/shared/messages';
import { useHarness } from '../helpers/harness';
import { markers } from '../helpers/history';
import { waitFor } from '../helpers/wait';

const h = useHarness();

const pending = (handle: SessionHandle) => handle.workflow.query(pendingPermissionsQuery);
const respond = (handle: SessionHandle, answer: PermissionAnswer) =>
  handle.workflow.executeUpdate(respondToPermissionUpdate, { args: [answer] });
const waitForRequest = (handle: SessionHandle, n = 1) =>
  waitFor(`${n} pending request(s)`, async () => {
    const p = await pending(handle);
    return p.length === n ? p : undefined;
  });
const toolResults = (ms: SessionEvent[]) =>
  ms.flatMap((m) =>
    m.type === 'user' && Array.isArray((m as UserMessage).message.content) ? ((m as UserMessage).message.content as ToolResultBlock[]) : [],
  );
async function drain(handle: SessionHandle) {
  const messages: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  return { messages, result: await handle.result() };
}
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: Error & { cause?: Error }) => e.cause?.message ?? e.message,
  );

test('allow: the call waits as a pending request, runs once when approved, and the session finishes', async () => {
  const cwd = h.workspace();
  const handle = await h.start(
    { name: 'approve', turns: [turn.tool('Bash', { command: 'echo ran >> log.txt' }), turn.text('done')] },
    { cwd, permissionMode: 'default' },
  );
  const [req] = await waitForRequest(handle);
  expect(req).toMatchObject<Partial<PendingPermission>>({
    requestId: 'perm-1',
    toolName: 'Bash',
    input: { command: 'echo ran >> log.txt' },
    suggestions: ['Bash(echo ran >> log.txt)'],
  });
  expect((await handle.state()).status).toBe('waiting_for_approval');
  await waitFor('listed as waiting_for_approval', async () => {
    for await (const s of h.client.list({ status: 'waiting_for_approval' })) if (s.sessionId === handle.sessionId) return true;
    return false;
  });
  expect(existsSync(path.join(cwd, 'log.txt'))).toBe(false);

  expect(await respond(handle, { requestId: 'perm-1', behavior: 'allow' })).toEqual({ applied: true, rulesAdded: [] });
  // Answered once: a second answer is refused by name.
  expect(await rejection(respond(handle, { requestId: 'perm-1', behavior: 'deny' }))).toMatch(/no pending permission request perm-1/);
  const { messages, result } = await drain(handle);
  expect(result).toMatchObject({ subtype: 'success', result: 'done', permission_denials: [] });
  expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('ran\n');
  expect(
    messages
      .filter((m) => m.type === 'system' && (m.subtype === 'permission_request' || m.subtype === 'permission_resolved'))
      .map((m) => (m as { subtype: string }).subtype),
  ).toEqual(['permission_request', 'permission_resolved']);
});

test('deny with a message: the model receives it as the tool error result; the denial is reported', async () => {
  const cwd = h.workspace();
  const handle = await h.start(
    { name: 'deny', turns: [turn.tool('Bash', { command: 'git push --force' }), turn.text('ok, not pushing')] },
    { cwd, permissionMode: 'default' },
  );
  await waitForRequest(handle);
  expect(await rejection(respond(handle, { requestId: 'perm-9', behavior: 'deny' }))).toMatch(
    /no pending permission request perm-9 \(pending: perm-1\)/,
  );
  await respond(handle, { requestId: 'perm-1', behavior: 'deny', message: 'Never force-push; open a PR instead.' });
  const { messages, result } = await drain(handle);
  expect(toolResults(messages)[0]).toMatchObject({ is_error: true, content: 'Never force-push; open a PR instead.' });
  expect(result.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash', tool_input: { command: 'git push --force' } })]);
  const second = h.model.requests.filter((r) => r.scenario === 'deny')[1]!;
  expect(JSON.stringify(second.body.messages)).toContain('Never force-push; open a PR instead.');
});

test('always: the suggested rule is added, so the same command later runs without asking', async () => {
  const cwd = h.workspace();
  const echo = turn.tool('Bash', { command: 'echo again >> log.txt' });
  const handle = await h.start({ name: 'always', turns: [echo, echo, turn.text('done')] }, { cwd, permissionMode: 'default' });
  await waitForRequest(handle);
  expect(await respond(handle, { requestId: 'perm-1', behavior: 'allow', always: true })).toEqual({
    applied: true,
    rulesAdded: ['Bash(echo again >> log.txt)'],
  });
  const { result } = await drain(handle);
  expect(result.subtype).toBe('success');
  expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('again\nagain\n');
});

test('allow with updatedInput runs the changed input; an invalid one is refused to the model', async () => {
  const cwd = h.workspace();
  const handle = await h.start(
    {
      name: 'updated',
      turns: [turn.tool('Bash', { command: 'echo original > out.txt' }), turn.tool('Bash', { command: 'echo x' }), turn.text('done')],
    },
    { cwd, permissionMode: 'default' },
  );
  await waitForRequest(handle);
  await respond(handle, { requestId: 'perm-1', behavior: 'allow', updatedInput: { command: 'echo changed > out.txt' } });
  await waitFor('the second request', async () => (await pending(handle))[0]?.requestId === 'perm-2');
  await respond(handle, { requestId: 'perm-2', behavior: 'allow', updatedInput: { cmd: 'no such field' } });
  const { messages } = await drain(handle);
  expect(readFileSync(path.join(cwd, 'out.txt'), 'utf8')).toBe('changed\n');
  expect(toolResults(messages)[1]).toMatchObject({ is_error: true });
  expect(toolResults(messages)[1]!.content).toMatch(/^The input given with the approval is not valid: InputValidationError: Bash/);
});

test('permissionTimeoutMs: an unanswered request is denied with a message saying it timed out', async () => {
  const handle = await h.start(
    { name: 'timeout', turns: [turn.tool('Bash', { command: 'echo late' }), turn.text('gave up')] },
    { permissionMode: 'default', permissionTimeoutMs: 1_000 },
  );
  const { messages, result } = await drain(handle);
  expect(toolResults(messages)[0]!.content).toBe('No answer to permission request perm-1 within 1000 ms: Bash was not run.');
  expect(result.subtype).toBe('success');
  expect(await pending(handle)).toEqual([]);
});

test('the approval patch is decided with the Bash inspection, before its local activity, even when nothing asks', async () => {
  // On replay a local activity's result can arrive one workflow task before the commands recorded
  // after it, so a patch first asked after it would miss its marker (docs/REPLAY.md#local-activities-and-patches).
  const handle = await h.start(
    { name: 'patch-order', turns: [turn.tool('Bash', { command: 'echo fine' }), turn.text('done')] },
    { permissionMode: 'dontAsk', allowedTools: ['Bash(echo:*)'] },
  );
  expect((await handle.result()).subtype).toBe('success');
  const seen = (await markers(handle.workflow)).map((m) => m.marker);
  expect(seen).toContain('local-activity');
  expect(seen.indexOf('patch:durable-approval')).toBeGreaterThan(-1);
  expect(seen.indexOf('patch:durable-approval')).toBeLessThan(seen.indexOf('local-activity'));
});

test('interrupt while waiting cancels the wait and answers the call as interrupted', async () => {
  const handle = await h.start(
    { name: 'interrupt-wait', turns: [turn.tool('Bash', { command: 'echo never' })] },
    { permissionMode: 'default' },
  );
  await waitForRequest(handle);
  await handle.interrupt();
  const { messages, result } = await drain(handle);
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'interrupted' });
  expect(toolResults(messages)[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/^Interrupted by user/) });
  expect(messages.some((m) => m.type === 'system' && m.subtype === 'permission_resolved' && m.behavior === 'cancelled')).toBe(true);
});

test('a request survives the worker going away: answered while no worker runs, applied when one returns', async () => {
  const cwd = h.workspace();
  const handle = await h.start(
    { name: 'no-worker', turns: [turn.tool('Bash', { command: 'echo once >> log.txt' }), turn.text('done')] },
    { cwd, permissionMode: 'default' },
  );
  await waitForRequest(handle);
  await h.stopWorker();
  const answer = respond(handle, { requestId: 'perm-1', behavior: 'allow' });
  await h.startWorker();
  expect(await answer).toEqual({ applied: true, rulesAdded: [] });
  const { result } = await drain(handle);
  expect(result.subtype).toBe('success');
  expect(readFileSync(path.join(cwd, 'log.txt'), 'utf8')).toBe('once\n');
});
