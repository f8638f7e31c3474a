/**
 * A session tree through a SIGKILL (ARCHITECTURE.md#subagents): the only worker dies while a
 * subagent's Bash command runs; a new worker finishes the whole tree, and each child workflow was
 * started exactly once (its id comes from the parent's and the Task call's).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { resultThroughRestarts, useCluster } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';

jest.setTimeout(180_000);

const c = useCluster({ slots: 1 });

afterAll(() => c.endOrphans());

test('SIGKILL of the worker while a child runs: the tree finishes, no child started twice', async () => {
  const ws = path.join(c.dir, 'ws-tree');
  mkdirSync(ws);
  const task = (id: string, scenario: string) => ({
    id,
    name: 'Task',
    arguments: { description: id, prompt: `${scenarioTag(scenario)} Do it.`, subagent_type: 'helper' },
  });
  c.addScenario([
    // Journals its start, then outlives the test: only the kill ends it.
    {
      name: 'tree-child-a',
      turns: [turn.tool('Bash', { command: 'echo a >> ran.log && touch started-a && sleep 30 && touch finished-a' }), turn.text('A done')],
    },
    { name: 'tree-child-b', turns: [turn.text('B done')] },
    { name: 'tree-parent', turns: [turn.tools([task('task_a', 'tree-child-a'), task('task_b', 'tree-child-b')]), turn.text('tree done')] },
  ]);
  await c.spawn(0);
  const handle = await c.client.start({
    sessionId: 'tree',
    prompt: `${scenarioTag('tree-parent')} Split the work.`,
    cwd: ws,
    permissionMode: 'bypassPermissions',
    heartbeatTimeoutMs: 3_000,
    agents: { helper: { description: 'Does a part', prompt: 'Do the part you are given.' } },
  });
  await c.killAtMarkers(0, [path.join(ws, 'started-a')], 'mid-bash', 120_000);
  c.endOrphans();
  await c.spawn(0);

  expect(await resultThroughRestarts(handle, 120_000)).toMatchObject({ subtype: 'success', result: 'tree done' });
  expect(readFileSync(path.join(ws, 'ran.log'), 'utf8')).toBe('a\n');
  expect(existsSync(path.join(ws, 'finished-a'))).toBe(false);

  // The parent's history: two children initiated and started, once each.
  const temporal = c.client.client;
  const history = await temporal.workflow.getHandle('tree').fetchHistory();
  const initiated = history.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
  const started = history.events!.filter((e) => e.childWorkflowExecutionStartedEventAttributes);
  const ids = initiated.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId);
  expect(ids).toEqual(['tree/task/task_a', 'tree/task/task_b']);
  expect(started).toHaveLength(2);
  for (const id of ids) {
    const d = await temporal.workflow.getHandle(id!).describe();
    expect(d.status.name).toBe('COMPLETED');
    expect(d.parentExecution?.workflowId).toBe('tree');
  }
  expect(c.kills.map((k) => k.point)).toEqual(['mid-bash']);
  expect(c.crashes).toEqual([]);
});
