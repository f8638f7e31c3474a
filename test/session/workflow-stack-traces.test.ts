/**
 * Sessions opt out of the SDK's per-promise stack capture (ARCHITECTURE.md#workflow-stack-traces):
 * a session parked on an approval has no pending-promise stacks for the stack-trace query (with
 * the SDK's default, every promise of the parked turn would be listed with its source-mapped
 * stack), while an error raised in workflow code still carries its frames by function name.
 */
import { tmpdir } from 'node:os';
import { WorkflowFailedError } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import { pendingPermissionsQuery, respondToPermissionUpdate } from '../../src/shared/approvals';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

interface EnhancedStackTrace {
  stacks: unknown[];
}

test('a session waiting for approval records no promise stacks; its state still says where it waits', async () => {
  const handle = await h.start(
    { name: 'stack-parked', turns: [turn.tool('Bash', { command: 'echo hi' }), turn.text('done')] },
    { cwd: h.workspace(), permissionMode: 'default' },
  );
  await waitFor('the approval request', async () => ((await handle.workflow.query(pendingPermissionsQuery)).length ? true : undefined));

  expect(await handle.workflow.query<string>('__stack_trace')).toBe('');
  expect((await handle.workflow.query<EnhancedStackTrace>('__enhanced_stack_trace')).stacks).toEqual([]);
  expect((await handle.state()).status).toBe('waiting_for_approval');

  await handle.workflow.executeUpdate(respondToPermissionUpdate, { args: [{ requestId: 'perm-1', behavior: 'allow' }] });
  expect((await handle.result()).subtype).toBe('success');
});

test('an error raised in workflow code keeps its stack: the functions it passed through, by name', async () => {
  // Past the client's own validation, so the workflow's validate() raises it.
  const bad = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: `stack-bad-config-${Date.now().toString(36)}`,
    args: [{ prompt: 'hello', cwd: tmpdir(), maxTurns: -1 }],
  });
  const failure = await bad.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const cause = (failure as WorkflowFailedError).cause!;
  expect(cause.message).toMatch(/^invalid session config: maxTurns/);
  expect(cause.stack).toMatch(/\n\s+at validate \(/);
  expect(cause.stack).toMatch(/\n\s+at agentSession \(/);
});
