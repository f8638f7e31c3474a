/**
 * Model calls on the workflow's own queue (ARCHITECTURE.md#model-calls-on-the-workflow-queue): a
 * worker with both roles gets each model call from the server with the completion of the workflow
 * task that scheduled it — the call never passes through the server's matching — and model workers
 * still serve the queue where sessions of earlier versions send theirs.
 */
import { temporal } from '@temporalio/proto';
import { taskQueuesFor } from '../../src/shared/api';
import { turn } from '../../src/testing/scripted-model';
import { diff, scrape } from '../../bench/server-metrics';
import { startHarness, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { devServer: { ui: false, dbFile: ':memory:', metricsPort: 0 } });
});
afterAll(() => h?.close());

const ACTIVITY = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;

test('a model call is scheduled on the workflow queue and handed to the worker eagerly: only tool-side tasks go through matching', async () => {
  const before = await scrape(h.metricsUrl!);
  const handle = await h.start(
    { name: 'eager', turns: [turn.tool('Glob', { pattern: '*' }), turn.tool('Glob', { pattern: '*.md' }), turn.text('done')] },
    { permissionMode: 'bypassPermissions' },
  );
  expect(await handle.result()).toMatchObject({ subtype: 'success', num_turns: 3 });
  const added = async () => diff(await scrape(h.metricsUrl!), before).get('service_requests|matching|AddActivityTask') ?? 0;

  const { events } = await handle.workflow.fetchHistory();
  const scheduled = (events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
  const models = scheduled.filter((a) => a.activityType?.name === 'callModel');
  expect(models).toHaveLength(3);
  for (const a of models) expect(a.taskQueue?.name).toBe(h.taskQueue);
  const elsewhere = scheduled.filter((a) => a.taskQueue?.name !== h.taskQueue);
  expect(elsewhere.length).toBeGreaterThanOrEqual(2); // the two Globs, at least (and the set-up on the tools queue)
  // A retried attempt is dispatched through matching whatever its queue: on a loaded machine an
  // attempt can time out (the full suite saw one extra task once). Counted, so the check stays exact.
  const retries = (events ?? []).filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1).length;
  // Matching saw the tools queue's tasks and none of the model calls. (The server publishes its
  // counters about once a second: wait for the tool tasks to show, then a little more for any other.)
  await waitFor('the tool tasks counted', async () => (await added()) >= elsewhere.length + retries, 15_000);
  await new Promise((r) => setTimeout(r, 2_000));
  expect({ added: await added(), retries }).toEqual({ added: elsewhere.length + retries, retries });
});

test('the model role also polls the former model queue, where sessions of earlier versions schedule their calls', async () => {
  const former = taskQueuesFor(h.taskQueue).formerModel;
  expect(former).toBe(`${h.taskQueue}-model`);
  const res = await h.client.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: former },
    taskQueueType: ACTIVITY,
  });
  expect(res.pollers?.length).toBeGreaterThan(0);
});
