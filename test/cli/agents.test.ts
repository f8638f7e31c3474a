/**
 * `--agents JSON` (like `claude --agents`): a bad definition exits 2 naming the field; a good one
 * gives the session a Task tool, and `durable-agent show` lists the subagents it started.
 */
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, useHarness } from '../helpers/harness';
import { cli } from './helpers';

const RUN = Date.now().toString(36);
const h = useHarness();

test.each([
  ['{not json', /--agents: not valid JSON/],
  ['{"helper":{"description":"d"}}', /--agents: helper\.prompt: /],
  ['{"helper":{"description":"d","prompt":"p","maxTurns":3}}', /--agents: helper: .*'maxTurns'/],
  ['["helper"]', /--agents: \(root\): /],
])('--agents %s exits 2 naming the field', async (json, message) => {
  const r = await cli(['run', 'hi', '--cwd', h.workspace(), '--agents', json], { env: h.env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
});

test('show lists the subagents a session started', async () => {
  const id = `agents-cli-${RUN}`;
  h.model.addScenario({ name: 'cli-child', turns: [turn.text('child answer')] });
  h.model.addScenario({
    name: 'cli-parent',
    turns: [
      turn.tools([
        {
          id: 'delegate',
          name: 'Task',
          arguments: { description: 'look around', prompt: `${scenarioTag('cli-child')} Look.`, subagent_type: 'scout' },
        },
      ]),
      turn.text('parent done'),
    ],
  });
  const agents = JSON.stringify({ scout: { description: 'Looks around', prompt: 'You look around.', tools: ['Read'] } });
  const run = await cli(
    [
      'run',
      `${scenarioTag('cli-parent')} Go.`,
      '--cwd',
      h.workspace(),
      '--permission-mode',
      'bypassPermissions',
      '--id',
      id,
      '--agents',
      agents,
    ],
    { env: h.env },
  );
  expect(run.code).toBe(0);
  const show = await cli(['show', id], { env: h.env });
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(`subagent scout (completed, $0.`);
  expect(show.stdout).toContain(`for delegate "look around": ${id}/task/delegate`);
  expect(show.stdout).toContain('child answer');
});
