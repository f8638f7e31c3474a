/**
 * Workflow stack traces (ARCHITECTURE.md#workflow-stack-traces). By default sessions keep the
 * SDK's behaviour: the stack-trace query (`temporal workflow stack`, the UI's Stack Trace tab)
 * shows where a parked session's pending promises were made, in our source files, and an error
 * raised in workflow code is source-mapped. With the worker option `fastWorkflowStacks` (what
 * every session did before it became an option) the sandbox records no promise stacks and formats
 * errors by bundle position. One worker of each, side by side.
 */
import { tmpdir } from 'node:os';
import { WorkflowFailedError } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import { pendingPermissionsQuery, respondToPermissionUpdate } from '../../src/shared/approvals';
import { turn } from '../../src/testing/scripted-model';
import { bundleHasFastWorkflowStacks } from '../../src/worker/bundle';
import { useHarness, workflowBundle, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const byDefault = useHarness();
const fast = useHarness({ fastWorkflowStacks: true });

interface EnhancedStackTrace {
  stacks: { locations: { file_path?: string; function_name?: string; line?: number }[] }[];
}

/** A session parked on its Bash approval; `finish` allows it and waits for its result. */
async function parkedOnApproval(h: Harness, name: string) {
  const handle = await h.start(
    { name, turns: [turn.tool('Bash', { command: 'echo hi' }), turn.text('done')] },
    { cwd: h.workspace(), permissionMode: 'default' },
  );
  await waitFor('the approval request', async () => ((await handle.workflow.query(pendingPermissionsQuery)).length ? true : undefined));
  return {
    handle,
    async finish() {
      await handle.workflow.executeUpdate(respondToPermissionUpdate, { args: [{ requestId: 'perm-1', behavior: 'allow' }] });
      expect((await handle.result()).subtype).toBe('success');
    },
  };
}

/** A session whose workflow's validate() raises (past the client's own validation): its failure. */
async function failedValidation(h: Harness, name: string): Promise<Error> {
  const bad = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: `${name}-${Date.now().toString(36)}`,
    args: [{ prompt: 'hello', cwd: tmpdir(), maxTurns: -1 }],
  });
  const failure = await bad.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const cause = (failure as WorkflowFailedError).cause!;
  expect(cause.message).toMatch(/^invalid session config: maxTurns/);
  return cause;
}

test('by default a session waiting for approval shows its pending promises in the stack-trace query, in our source files', async () => {
  const { handle, finish } = await parkedOnApproval(byDefault, 'stack-parked-default');

  const stack = await handle.workflow.query<string>('__stack_trace');
  // Where it waits, source-mapped to our TypeScript (not bundle positions): the permission gate asking a person.
  expect(stack).toMatch(/\n\s+at askPerson \([^)]*src\/workflows\/session\/permission-gate\.ts:\d+:\d+\)/);
  expect(stack).toMatch(/src\/workflows\/session\/session\.ts:\d+:\d+/);
  expect(stack).not.toMatch(/workflow-bundle/);

  const enhanced = await handle.workflow.query<EnhancedStackTrace>('__enhanced_stack_trace');
  expect(enhanced.stacks.length).toBeGreaterThan(0);
  const locations = enhanced.stacks.flatMap((s) => s.locations);
  expect(locations).toContainEqual(
    expect.objectContaining({
      function_name: 'askPerson',
      file_path: expect.stringMatching(/src\/workflows\/session\/permission-gate\.ts$/),
    }),
  );
  expect((await handle.state()).status).toBe('waiting_for_approval');

  await finish();
});

test('with fastWorkflowStacks a session waiting for approval records no promise stacks; its state still says where it waits', async () => {
  const { handle, finish } = await parkedOnApproval(fast, 'stack-parked-fast');

  expect(await handle.workflow.query<string>('__stack_trace')).toBe('');
  expect((await handle.workflow.query<EnhancedStackTrace>('__enhanced_stack_trace')).stacks).toEqual([]);
  expect((await handle.state()).status).toBe('waiting_for_approval');

  await finish();
});

test('by default an error raised in workflow code is source-mapped: its frames name our source files', async () => {
  const cause = await failedValidation(byDefault, 'stack-bad-config-default');
  // The SDK's formatter names each frame by the source map's name at its position (the call's
  // callee): the frame in validate() is the `nonRetryable(` it calls, at session.ts.
  expect(cause.stack).toMatch(/\n\s+at nonRetryable \([^)]*src\/workflows\/session\/session\.ts:\d+:\d+\)/);
  expect(cause.stack).toMatch(/\n\s+at validate \([^)]*src\/workflows\/session\/session\.ts:\d+:\d+\)/);
  expect(cause.stack).not.toMatch(/workflow-bundle/);
});

test('with fastWorkflowStacks an error raised in workflow code keeps its frames by function name, at bundle positions', async () => {
  const cause = await failedValidation(fast, 'stack-bad-config-fast');
  expect(cause.stack).toMatch(/\n\s+at validate \([^)]*workflow-bundle[^)]*\)/);
  expect(cause.stack).toMatch(/\n\s+at agentSession \(/);
  expect(cause.stack).not.toMatch(/src\/workflows\/session\/session\.ts/);
});

test("each harness's bundle says which setting it was built with (what a worker checks a prebuilt bundle by)", async () => {
  expect(bundleHasFastWorkflowStacks((await workflowBundle()).code)).toBe(false);
  expect(bundleHasFastWorkflowStacks((await workflowBundle({ fastWorkflowStacks: true })).code)).toBe(true);
});
