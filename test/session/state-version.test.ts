/**
 * The carried state's schemaVersion: a state written by an older worker (fixture of the v1 shape)
 * still runs on this one; a version this worker does not know fails its workflow task loudly and
 * waits for a worker that knows it, instead of being misread.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { ResultMessage } from '../../src/shared/events';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

const fixture = () => JSON.parse(readFileSync(path.join(__dirname, '../fixtures/carried-state-v1.json'), 'utf8'));

function startCarried(name: string, edit: (state: Record<string, unknown>) => void) {
  const carried = fixture();
  const workflowId = `state-version-${name}-${process.pid}-${Date.now()}`;
  Object.assign(carried.state, { sessionId: workflowId, messages: [{ role: 'user', content: `${scenarioTag(name)} Do the task.` }] });
  carried.state.config.cwd = h.workspace();
  edit(carried.state);
  return h.client.client.workflow.start('agentSession', { args: [carried.state.config, carried], taskQueue: h.taskQueue, workflowId });
}

test('a carried state of schema version 1 (no turn record) still runs to its result', async () => {
  h.model.addScenario({ name: 'v1-state', turns: [turn.text('carried on')] });
  const handle = await startCarried('v1-state', () => undefined);
  const result = (await handle.result()) as ResultMessage;
  expect(result).toMatchObject({ subtype: 'success', result: 'carried on', num_turns: 1 });
});

test('an unknown schema version fails the workflow task with a message naming it, and runs nothing', async () => {
  h.model.addScenario({ name: 'v99-state', turns: [turn.text('must not run')] });
  const handle = await startCarried('v99-state', (s) => (s.schemaVersion = 99));
  const failure = await waitFor('a failed workflow task', async () => {
    const history = await handle.fetchHistory();
    const failed = history.events?.find((e) => e.workflowTaskFailedEventAttributes);
    return failed?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
  });
  expect(failure).toMatch(/schemaVersion 99, which this worker does not know \(it reads 1\.\.3\)/);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect(h.model.requests.filter((r) => r.scenario === 'v99-state')).toHaveLength(0);
  await handle.terminate('test done');
});
