/**
 * The workers' bundle evaluates zod once per worker thread and shares it, frozen, with every
 * workflow, and builds our own schemas once per thread too (src/shared/shared-schema.ts;
 * ARCHITECTURE.md#shared-libraries): checked on the bundle (which modules a new workflow
 * evaluates and which schemas it gets, against a bundle built without the preload), and on
 * sessions, whose workflows validate their config with the shared schemas — zod's error messages
 * included, which it installs into its global config on first use.
 */
import { tmpdir } from 'node:os';
import { WorkflowFailedError } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import { turn } from '../../src/testing/scripted-model';
import { bundleWithoutPreload, loadBundle } from '../../src/testing/workflow-modules';
import { useHarness, workflowBundle } from '../helpers/harness';

const h = useHarness();
const isZod = (id: string) => id.includes('/node_modules/zod/');
/** A schema as one workflow's evaluation of its module exports it. */
const schemaOf = (modules: Record<string, unknown>, module: string, name: string) =>
  (modules[module] as { exports: Record<string, unknown> }).exports[name];
const SCHEMAS = [
  ['./src/shared/config.ts', 'SessionConfig'],
  ['./src/shared/permissions/settings.ts', 'HooksSettings'],
  ['./src/shared/todo.ts', 'TodoWriteInput'],
  ['./src/shared/batch.ts', 'BatchSettings'],
] as const;

test('a new workflow evaluates none of zod and gets the schemas the first workflow built; without the preload it evaluates zod and builds its own every time', async () => {
  const ours = loadBundle((await workflowBundle()).code); // bundleSessionWorkflows, as the workers use
  expect(ours.shared.filter(isZod).length).toBeGreaterThan(20);
  expect(ours.shared).toContain('./src/shared/shared-schema.ts');
  const workflows = [ours.startWorkflow(), ours.startWorkflow()];
  for (const modules of workflows) {
    expect(Object.keys(modules).filter(isZod)).toEqual([]);
    // Our schema modules are evaluated per workflow (they are not frozen: zod caches on a schema on first use)…
    expect(Object.keys(modules)).toEqual(expect.arrayContaining(['./src/workflows/session/session.ts', './src/shared/config.ts']));
  }
  // …but the schemas they export are the ones the first workflow built.
  for (const [module, name] of SCHEMAS) expect(schemaOf(workflows[1]!, module, name)).toBe(schemaOf(workflows[0]!, module, name));
  const todoSpec = (m: Record<string, unknown>) => schemaOf(m, './src/shared/todo.ts', 'todoWriteSpec') as { inputSchema: object };
  expect(todoSpec(workflows[1]!).inputSchema).toBe(todoSpec(workflows[0]!).inputSchema);
  expect(Object.isFrozen(todoSpec(workflows[0]!).inputSchema)).toBe(true);

  const plain = loadBundle((await bundleWithoutPreload()).code);
  expect(plain.shared.filter(isZod)).toEqual([]);
  const plainWorkflows = [plain.startWorkflow(), plain.startWorkflow()];
  for (const modules of plainWorkflows) expect(Object.keys(modules).filter(isZod).length).toBeGreaterThan(5);
  // Without the preload every workflow builds its own.
  for (const [module, name] of SCHEMAS)
    expect(schemaOf(plainWorkflows[1]!, module, name)).not.toBe(schemaOf(plainWorkflows[0]!, module, name));
}, 180_000);

test('the shared zod validates inside workflows: a config it rejects fails that session with the message, the next sessions run', async () => {
  // Past the client's own validation, as another SDK or a hand-made start would be.
  const bad = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: `shared-zod-bad-${Date.now().toString(36)}`,
    args: [{ prompt: 'hello', cwd: tmpdir(), maxTurns: 'ten' }],
  });
  const failure = await bad.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause?.message).toBe(
    'invalid session config: maxTurns: Invalid input: expected number, received string',
  );

  // Sessions on the same worker thread after it, each validating its config with the same zod.
  const results = await Promise.all(
    [1, 2, 3].map(async (i) => (await h.start({ name: `shared-zod-${i}`, turns: [turn.text(`ok ${i}`)] }, { maxTurns: 3 })).result()),
  );
  expect(results.map((r) => [r.subtype, r.result])).toEqual([
    ['success', 'ok 1'],
    ['success', 'ok 2'],
    ['success', 'ok 3'],
  ]);

  // And a schema another session's workflow built, and others used since, still reports the field.
  const late = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: `shared-zod-late-${Date.now().toString(36)}`,
    args: [{ prompt: 'hello', cwd: tmpdir(), hooks: { Stop: [{ hooks: [{ type: 'prompt', command: 'x' }] }] } }],
  });
  const lateFailure = await late.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect((lateFailure as WorkflowFailedError).cause?.message).toBe(
    "invalid session config: hooks.Stop.0.hooks.0.type: only 'command' hooks are supported",
  );
});
