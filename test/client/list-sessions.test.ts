/**
 * The SDK's `listSessions()` over a real server: sessions found through visibility, one entry per
 * session whatever its runs (continued as new, resumed under its id), its subagents left out,
 * filtered by `dir`, paged by `offset`/`limit`, newest first.
 */
import path from 'node:path';
import { listSessions, type SDKSessionInfo } from '../../src/client/list-sessions';
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();
const RUN = Date.now().toString(36);
const helper = { description: 'Does one part of the job', prompt: 'You are a helper.', tools: ['Bash'] };

test('listSessions(): one entry per session with its first prompt and folder, subagents left out; dir, offset and limit', async () => {
  const dir = h.workspace();
  // A session whose model starts a subagent, continued as new after every turn: three runs and a child.
  h.model.addScenario({ name: `ls-child-${RUN}`, turns: [turn.text('child done')] });
  const task = {
    id: 'task_1',
    name: 'Task',
    arguments: { description: 'part', prompt: `${scenarioTag(`ls-child-${RUN}`)} Do it.`, subagent_type: 'helper' },
  };
  const first = await h.start(
    { name: `ls-first-${RUN}`, turns: [turn.tools([task]), turn.text('first done')] },
    { cwd: dir, sessionId: `ls-first-${RUN}`, agents: { helper }, continueAsNewEveryTurns: 1, prompt: 'First\n   line of the task' },
  );
  expect(await first.result()).toMatchObject({ result: 'first done' });
  // A session resumed under its own id: two runs.
  const second = await h.start(
    { name: `ls-second-${RUN}`, turns: [turn.text('a'), turn.text('b')] },
    { cwd: dir, sessionId: `ls-second-${RUN}`, prompt: 'Second' },
  );
  await second.result();
  const resumed = await h.client.start({ resume: second.sessionId, prompt: 'Again.', cwd: dir, permissionMode: 'bypassPermissions' });
  expect(await resumed.result()).toMatchObject({ result: 'b' });
  // One elsewhere.
  const other = await h.start({ name: `ls-other-${RUN}`, turns: [turn.text('x')] }, { sessionId: `ls-other-${RUN}` });
  await other.result();

  // Visibility is updated a moment after a run closes.
  const stillOpen = async () => {
    let n = 0;
    const ids = [first, second, other].map((x) => `'${x.sessionId}'`).join(', ');
    for await (const s of h.client.list({ query: `ExecutionStatus = 'Running' AND WorkflowId IN (${ids})` })) n += s ? 1 : 0;
    return n;
  };
  await waitFor('visibility to show the sessions closed', async () => (await stillOpen()) === 0);
  let listed: SDKSessionInfo[] = [];
  await waitFor('the sessions in dir listed', async () => {
    listed = await listSessions({ dir, client: h.client });
    return listed.length === 2;
  });
  expect(listed.map((s) => s.sessionId)).toEqual([`ls-second-${RUN}`, `ls-first-${RUN}`]);
  const [s2, s1] = listed as [SDKSessionInfo, SDKSessionInfo];
  expect(s1).toEqual({
    sessionId: `ls-first-${RUN}`,
    summary: `${scenarioTag(`ls-first-${RUN}`)} First line of the task`,
    firstPrompt: `${scenarioTag(`ls-first-${RUN}`)} First line of the task`,
    cwd: dir,
    createdAt: expect.any(Number),
    lastModified: expect.any(Number),
  });
  // The resumed session: its first run's prompt and start, its last run's close.
  expect(s2.firstPrompt).toBe(`${scenarioTag(`ls-second-${RUN}`)} Second`);
  const runs = await Promise.all(
    [second.workflow.firstExecutionRunId, resumed.workflow.firstExecutionRunId].map(async (runId) =>
      h.client.client.workflow.getHandle(second.sessionId, runId).describe(),
    ),
  );
  expect(s2.createdAt).toBe(runs[0]!.startTime.getTime());
  expect(s2.lastModified).toBe(runs[1]!.closeTime!.getTime());
  expect(s1.createdAt!).toBeLessThan(s2.createdAt!);

  // Paging, and a relative dir.
  expect((await listSessions({ dir, offset: 1, limit: 1, client: h.client })).map((s) => s.sessionId)).toEqual([`ls-first-${RUN}`]);
  expect(await listSessions({ dir, limit: 0, client: h.client })).toEqual([]);
  expect((await listSessions({ dir: path.relative(process.cwd(), dir), client: h.client })).length).toBe(2);

  // Without dir, on its own connection: every session, no subagent's.
  const all = await listSessions({ connection: { address: h.address, taskQueue: h.taskQueue, payloadCodecs: [] } });
  const ids = all.map((s) => s.sessionId);
  expect(ids).toEqual(expect.arrayContaining([`ls-first-${RUN}`, `ls-second-${RUN}`, `ls-other-${RUN}`]));
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.filter((id) => id.includes('/task/'))).toEqual([]);
  const times = all.map((s) => s.lastModified);
  expect(times).toEqual([...times].sort((a, b) => b - a));

  await expect(listSessions({ sessionStore: {}, client: h.client })).rejects.toThrow(/sessionStore is not supported by durable-agent/);
});
