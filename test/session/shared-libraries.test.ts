/**
 * The workers' bundle evaluates zod once per worker thread and shares it, frozen, with every
 * workflow (ARCHITECTURE.md#shared-libraries): checked on the bundle (which modules a new workflow
 * evaluates, against a bundle built without the preload), and on sessions, whose workflows
 * validate their config with the shared zod — its error messages included, which it installs
 * into its global config on first use.
 */
import { tmpdir } from 'node:os';
import { WorkflowFailedError } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import { turn } from '../../src/testing/scripted-model';
import { bundleWithoutPreload, loadBundle } from '../../src/testing/workflow-modules';
import { useHarness, workflowBundle } from '../helpers/harness';

const h = useHarness();
const isZod = (id: string) => id.includes('/node_modules/zod/');

test('a new workflow evaluates none of zod, only our own modules; without the preload it evaluates zod every time', async () => {
  const ours = loadBundle((await workflowBundle()).code); // bundleSessionWorkflows, as the workers use
  expect(ours.shared.filter(isZod).length).toBeGreaterThan(20);
  for (let i = 0; i < 2; i++) {
    const modules = Object.keys(ours.startWorkflow());
    expect(modules.filter(isZod)).toEqual([]);
    // Our schemas stay per workflow: zod caches on them, which a frozen schema would refuse.
    expect(modules).toEqual(expect.arrayContaining(['./src/workflows/session.ts', './src/shared/config.ts']));
  }

  const plain = loadBundle((await bundleWithoutPreload()).code);
  expect(plain.shared.filter(isZod)).toEqual([]);
  for (let i = 0; i < 2; i++) expect(Object.keys(plain.startWorkflow()).filter(isZod).length).toBeGreaterThan(5);
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
});
