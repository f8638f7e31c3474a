/**
 * Subagents (ARCHITECTURE.md#subagents): `Task` starts a child workflow of the session; several
 * run at once; their events join the parent's stream with `parent_tool_use_id`; their cost is the
 * parent's; the budget is shared by the tree; interrupt reaches them; bad calls are error results.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { query } from '../../src/sdk/query';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import type { Message, ToolResultBlock } from '../../src/shared/messages';
import { collect, scenarioTag, useHarness } from '../helpers/harness';
import { startShape } from '../helpers/session-start';
import { waitFor } from '../helpers/wait';

const h = useHarness();

/** $0.04 on gpt-4.1-mini ($0.40 per million input tokens). */
const usage = { prompt_tokens: 100_000, completion_tokens: 0 };
const helper = { description: 'Does one part of the job', prompt: 'You are a helper. Do the part you are given.', tools: ['Bash'] };

const task = (id: string, scenario: string, subagentType = 'helper') => ({
  id,
  name: 'Task',
  arguments: { description: `part ${id}`, prompt: `${scenarioTag(scenario)} Do your part.`, subagent_type: subagentType },
});

function toolResult(transcript: Message[], id: string): ToolResultBlock | undefined {
  for (const m of transcript) {
    if (m.role !== 'user' || typeof m.content === 'string') continue;
    const r = m.content.find((b): b is ToolResultBlock => b.type === 'tool_result' && b.tool_use_id === id);
    if (r) return r;
  }
  return undefined;
}

/** Every tool_use is answered by a tool_result in the next message, and nothing else is. */
function expectValidTranscript(transcript: Message[]): void {
  transcript.forEach((m, i) => {
    if (m.role !== 'assistant' || typeof m.content === 'string') return;
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (ids.length === 0) return;
    const next = transcript[i + 1];
    expect(next?.role).toBe('user');
    const answered = (next!.content as ToolResultBlock[]).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    expect(answered).toEqual(ids);
  });
}

test('two Task calls in one turn run as concurrent child workflows; events, cost and usage join the parent', async () => {
  const cwd = h.workspace();
  const a = path.join(cwd, 'a-started');
  const b = path.join(cwd, 'b-started');
  // Each child waits for the other to start: run one after the other, neither would finish.
  const meet = (mine: string, other: string, word: string) =>
    turn.tool('Bash', { command: `touch ${mine}; while [ ! -e ${other} ]; do sleep 0.05; done; echo ${word}` }, { usage });
  h.model.addScenario({ name: 'pair-child-a', turns: [meet(a, b, 'a-met-b'), turn.text('A done', { usage })] });
  h.model.addScenario({ name: 'pair-child-b', turns: [meet(b, a, 'b-met-a'), turn.text('B done', { usage })] });
  const handle = await h.start(
    {
      name: 'pair-parent',
      turns: [turn.tools([task('task_a', 'pair-child-a'), task('task_b', 'pair-child-b')], { usage }), turn.text('both done', { usage })],
    },
    // A new run before every model call: what the parent learned of its children must cross it.
    { cwd, agents: { helper }, continueAsNewEveryTurns: 1 },
  );
  const messages = await collect(handle);
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', result: 'both done' });

  // Both are child workflows of this session, with ids from the session's and the call's.
  const temporal = h.client.client;
  for (const [id, text] of [
    ['task_a', 'A done'],
    ['task_b', 'B done'],
  ] as const) {
    const childId = `${handle.sessionId}/task/${id}`;
    const d = await temporal.workflow.getHandle(childId).describe();
    expect(d.parentExecution?.workflowId).toBe(handle.sessionId);
    expect(d.type).toBe('agentSession');
    expect(d.status.name).toBe('COMPLETED');
    expect(toolResult(await handle.transcript(), id)).toMatchObject({ content: text });
    // The child's events are in the parent's stream, marked with the call that started it.
    const mine = messages.filter((m) => (m as { parent_tool_use_id?: string | null }).parent_tool_use_id === id);
    expect(mine.filter((m) => m.type === 'assistant')).toHaveLength(2);
    expect(mine.some((m) => m.type === 'user' && JSON.stringify(m).includes(id === 'task_a' ? 'a-met-b' : 'b-met-a'))).toBe(true);
    // No child result in the parent's stream: the tool result stands for it.
    expect(mine.some((m) => m.type === 'result')).toBe(false);
  }
  // Parent: two replies; each child: two replies. Every reply costs $0.04.
  expect(result.total_cost_usd).toBeCloseTo(0.24, 9);
  expect(result.usage.input_tokens).toBe(600_000);
  expect(result.modelUsage['gpt-4.1-mini']!.costUSD).toBeCloseTo(0.24, 9);
  const view = await handle.state();
  expect(view.subagents?.map((s) => [s.toolUseId, s.agentType, s.status])).toEqual([
    ['task_a', 'helper', 'completed'],
    ['task_b', 'helper', 'completed'],
  ]);
  expect(view.subagents?.every((s) => Math.abs(s.costUsd - 0.08) < 1e-9)).toBe(true);
  // Task is listed to the model with each agent's description.
  const tools = h
    .requestsOf('pair-parent')[0]!
    .body.tools!.map((t) => (t as { function: { name: string; description?: string } }).function);
  expect(tools.find((t) => t.name === 'Task')?.description).toContain('- helper: Does one part of the job');
});

test('agent: the main thread runs as the named agent — its prompt, its tools, its model', async () => {
  h.model.addScenario({ name: 'main-as-agent', turns: [turn.tool('Bash', { command: 'echo ran-as-agent' }), turn.text('agent done')] });
  const reviewer = {
    description: 'Reviews',
    prompt: 'You are the reviewer agent. Only review.',
    tools: ['Bash', 'Read'],
    model: 'gpt-4.1',
  };
  const messages = [];
  for await (const m of query({
    prompt: `${scenarioTag('main-as-agent')} review this`,
    options: {
      cwd: h.workspace(),
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      client: h.client,
      agents: { helper, reviewer },
      agent: 'reviewer',
    },
  }))
    messages.push(m);
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'agent done' });
  const reqs = h.requestsOf('main-as-agent');
  expect(reqs).toHaveLength(2);
  for (const r of reqs) {
    expect(r.body.model).toBe('gpt-4.1');
    const system = r.body.messages.find((m) => m.role === 'system');
    expect(system?.content).toBe(reviewer.prompt);
    // Its tools only; no Task, since its tools leave it out.
    const names = r.body.tools!.map((t) => (t as { function: { name: string } }).function.name);
    expect(names.sort()).toEqual(['Bash', 'Read']);
  }
  expect(JSON.stringify(reqs[1]!.body.messages)).toContain('ran-as-agent');
});

test('agent: a name not in agents, or with systemPrompt, is an error naming agent', async () => {
  const run = (options: Parameters<typeof query>[0]['options']) => async () => {
    for await (const _ of query({ prompt: 'x', options: { cwd: h.workspace(), client: h.client, ...options } }));
  };
  await expect(run({ agents: { helper }, agent: 'nobody' })()).rejects.toThrow(
    /agent: no agent named 'nobody' in agents \(defined: helper\)/,
  );
  await expect(run({ agents: { helper }, agent: 'helper', systemPrompt: 'other' })()).rejects.toThrow(/agent and systemPrompt/);
});

test('a session without agents has no Task tool', async () => {
  await h.run({ name: 'no-agents', turns: [turn.text('ok')] }, {});
  const names = h.requestsOf('no-agents')[0]!.body.tools!.map((t) => (t as { function: { name: string } }).function.name);
  expect(names).not.toContain('Task');
});

test('a budget reached inside a child stops the whole tree', async () => {
  const echo = turn.tool('Bash', { command: 'echo step' }, { usage });
  h.model.addScenario({ name: 'budget-child', turns: [echo, echo, echo, turn.text('never')] });
  const { result, handle } = await h.run(
    { name: 'budget-parent', turns: [turn.tools([task('spend', 'budget-child')], { usage }), turn.text('never')] },
    { agents: { helper }, maxBudgetUsd: 0.1 },
  );
  // The parent spent $0.04, so its child had $0.06: it stopped after its second reply ($0.08).
  expect(h.requestsOf('budget-child')).toHaveLength(2);
  const child = await h.client.get(`${handle.sessionId}/task/spend`);
  expect(await child.result()).toMatchObject({ subtype: 'error_max_budget_usd' });
  expect(toolResult(await handle.transcript(), 'spend')).toMatchObject({ is_error: true });
  // The tree's cost is past the budget: the parent makes no further model call.
  expect(h.requestsOf('budget-parent')).toHaveLength(1);
  expect(result.subtype).toBe('error_max_budget_usd');
  expect(result.total_cost_usd).toBeCloseTo(0.12, 9);
});

test('siblings share the budget: once the tree reaches it, running children are stopped', async () => {
  const gate = h.gate();
  // Each child's first reply costs $0.04; the parent's $0.02: together they reach the $0.10 budget.
  h.model.addScenario({ name: 'share-spender', turns: [turn.tool('Bash', { command: 'echo spent' }, { usage }), turn.text('spent')] });
  h.model.addScenario({ name: 'share-waiter', turns: [turn.tool('Bash', { command: gate.command }, { usage }), turn.text('never')] });
  const { result, handle } = await h.run(
    {
      name: 'share-parent',
      turns: [
        turn.tools([task('spender', 'share-spender'), task('waiter', 'share-waiter')], {
          usage: { prompt_tokens: 50_000, completion_tokens: 0 },
        }),
        turn.text('never'),
      ],
    },
    { agents: { helper }, maxBudgetUsd: 0.1 },
  );
  gate.release();
  // Each child alone had $0.08 left: only the tree's total could stop the waiter, stuck in its gate.
  expect(await (await h.client.get(`${handle.sessionId}/task/waiter`)).result()).toMatchObject({ exit_reason: 'aborted' });
  expect(h.requestsOf('share-waiter')).toHaveLength(1);
  const transcript = await handle.transcript();
  expectValidTranscript(transcript);
  expect(toolResult(transcript, 'waiter')).toMatchObject({ is_error: true });
  expect(toolResult(transcript, 'waiter')!.content).toContain('reached the maximum budget');
  expect(result.subtype).toBe('error_max_budget_usd');
  expect(h.requestsOf('share-parent')).toHaveLength(1);
  expect(result.total_cost_usd).toBeGreaterThanOrEqual(0.1);
});

test('interrupting the parent cancels its running child; the transcript stays valid', async () => {
  const gate = h.gate();
  h.model.addScenario({ name: 'stuck-child', turns: [turn.tool('Bash', { command: gate.command }), turn.text('never')] });
  const handle = await h.start(
    { name: 'interrupted-parent', turns: [turn.tools([task('stuck', 'stuck-child')]), turn.text('never')] },
    { agents: { helper }, interactive: true },
  );
  const childId = `${handle.sessionId}/task/stuck`;
  await waitFor(
    "the child's Bash call",
    async () => (await (await h.client.get(childId)).state()).pendingTools.some((p) => p.name === 'Bash'),
    { ignoreErrors: true },
  );
  await handle.interrupt();
  const messages: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) {
    messages.push(m);
    if (m.type === 'result') break;
  }
  const result = messages.find((m) => m.type === 'result')!;
  expect(result).toMatchObject({ exit_reason: 'interrupted' });
  gate.release();
  // The child was cancelled, not left running.
  const child = h.client.client.workflow.getHandle(childId);
  await waitFor('the child to close', async () => (await child.describe()).status.name !== 'RUNNING');
  expect(h.requestsOf('stuck-child')).toHaveLength(1);
  const transcript = await handle.transcript();
  expectValidTranscript(transcript);
  expect(toolResult(transcript, 'stuck')).toMatchObject({ is_error: true });
  expect((await handle.state()).subagents?.[0]).toMatchObject({ toolUseId: 'stuck', status: 'cancelled' });
  await handle.close();
});

test('cancelling the parent cancels its running child; the parent ends aborted', async () => {
  const gate = h.gate();
  h.model.addScenario({ name: 'cancelled-child', turns: [turn.tool('Bash', { command: gate.command }), turn.text('never')] });
  const handle = await h.start(
    { name: 'cancelled-parent', turns: [turn.tools([task('doomed', 'cancelled-child')]), turn.text('never')] },
    { agents: { helper } },
  );
  const childId = `${handle.sessionId}/task/doomed`;
  await waitFor(
    "the child's Bash call",
    async () => (await (await h.client.get(childId)).state()).pendingTools.some((p) => p.name === 'Bash'),
    { ignoreErrors: true },
  );
  await handle.cancel();
  expect(await handle.result()).toMatchObject({ exit_reason: 'aborted' });
  gate.release();
  expect(await (await h.client.get(childId)).result()).toMatchObject({ exit_reason: 'aborted' });
  expect(h.requestsOf('cancelled-child')).toHaveLength(1);
  expectValidTranscript(await handle.transcript());
});

test('an unknown agent and a subagent past the depth limit are error results; SubagentStart/Stop hooks fire', async () => {
  const cwd = h.workspace();
  const hooksDir = h.workspace();
  const log = path.join(hooksDir, 'hooks.log');
  const hook = path.join(hooksDir, 'hook.js');
  writeFileSync(
    hook,
    `let raw = ''; process.stdin.on('data', (c) => (raw += c)).on('end', () => { const i = JSON.parse(raw);
require('fs').appendFileSync(${JSON.stringify(log)}, [i.hook_event_name, i.agent_type, i.agent_id].join(' ') + '\\n'); });`,
  );
  const looper = { description: 'Delegates again', prompt: 'Delegate.' };
  h.model.addScenario({
    name: 'loop-child',
    turns: [turn.tools([task('again', 'loop-grandchild', 'looper')]), turn.text('gave up')],
  });
  h.model.addScenario({ name: 'loop-grandchild', turns: [turn.text('never')] });
  const { handle, messages } = await h.run(
    {
      name: 'bad-tasks',
      turns: [turn.tools([task('nope', 'x', 'no-such-agent'), task('loop', 'loop-child', 'looper')]), turn.text('done')],
    },
    {
      cwd,
      additionalDirectories: [hooksDir],
      agents: { looper },
      maxSubagentDepth: 1,
      hooks: {
        SubagentStart: [{ hooks: [{ type: 'command', command: `node ${hook}` }] }],
        SubagentStop: [{ hooks: [{ type: 'command', command: `node ${hook}` }] }],
      },
    },
  );
  const transcript = await handle.transcript();
  const unknown = toolResult(transcript, 'nope')!;
  expect(unknown.is_error).toBe(true);
  expect(unknown.content).toContain("Agent type 'no-such-agent' not found. Available agents: looper");
  expect(toolResult(transcript, 'loop')).toMatchObject({ content: 'gave up' });
  // The child (depth 1) may not start another: its Task call got an error result, seen in the parent's stream.
  const deep = messages.find(
    (m) => m.type === 'user' && (m as { parent_tool_use_id?: string }).parent_tool_use_id === 'loop' && JSON.stringify(m).includes('again'),
  );
  expect(JSON.stringify(deep)).toContain('subagents may nest at most 1 deep');
  expect(h.requestsOf('loop-grandchild')).toHaveLength(0);
  expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([
    `SubagentStart looper ${handle.sessionId}/task/loop`,
    `SubagentStop looper ${handle.sessionId}/task/loop`,
  ]);
  // The child started, like its parent, in one step, one activity (ARCHITECTURE.md#session-start-in-one-step).
  const child = h.client.client.workflow.getHandle(`${handle.sessionId}/task/loop`);
  expect(await startShape(child)).toEqual({ setup: ['prepareSession'], setupTasks: 1, markers: 0, changeVersions: 0 });
});
