/**
 * `query()` as a Claude Agent SDK user drives it, on a real dev server and worker: what breaking
 * out of `for await`, `close()` and `abortController` do to the durable session; `continue`;
 * options reaching the model; `stderr`; the Query methods we have and the ones we refuse.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AbortError, query, NotSupportedError } from '../../src/sdk/query';
import type { SDKUserMessage } from '../../src/sdk/types';
import { asDurableAgentEvent, isDurableAgentEvent, type QueryMessage, type SDKMessage } from '../../src/shared/events';
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, startHarness, type Harness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const bypass = { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true } as const;
/** A Bash call that holds the turn until the test creates `gate`. */
const gated = (gate: string) => turn.tool('Bash', { command: `while [ ! -f '${gate}' ]; do sleep 0.05; done; echo released` });
const CALC_STDIO = path.join(__dirname, '..', 'fixtures', 'mcp', 'calc-stdio.mjs');
const statusOf = async (id: string) => (await (await h.client.get(id)).workflow.describe()).status.name;

test('breaking out of for await detaches: the session runs on to its result', async () => {
  const cwd = h.workspace();
  const gate = path.join(cwd, 'gate');
  h.model.addScenario({ name: 'detach', turns: [gated(gate), turn.text('finished without a reader')] });
  const q = query({ prompt: `${scenarioTag('detach')} go`, options: { cwd, client: h.client, ...bypass } });
  for await (const m of q) if (m.type === 'assistant') break;
  const id = await q.sessionId;
  expect(await statusOf(id)).toBe('RUNNING');
  writeFileSync(gate, '');
  const result = await (await h.client.get(id)).result();
  expect(result).toMatchObject({ subtype: 'success', result: 'finished without a reader' });
});

test.each(['close()', 'abortController.abort()'])('%s cancels the session and ends the stream', async (how) => {
  const cwd = h.workspace();
  const name = how === 'close()' ? 'stop-close' : 'stop-abort';
  h.model.addScenario({ name, turns: [gated(path.join(cwd, 'never'))] });
  const abortController = new AbortController();
  const q = query({ prompt: `${scenarioTag(name)} go`, options: { cwd, client: h.client, abortController, ...bypass } });
  const seen: QueryMessage[] = [];
  const reading = (async () => {
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'tool_progress') {
        if (how === 'close()') q.close();
        else abortController.abort();
      }
    }
  })();
  // As the SDK's: an abort ends the stream with an AbortError; close() just ends it.
  if (how === 'close()') await reading;
  else await expect(reading).rejects.toThrow(new AbortError('Query aborted by its abortController: the session is cancelled'));
  // The stream ended at once: the session's final result came later, to nobody.
  expect(seen.some((m) => m.type === 'result')).toBe(false);
  const result = await (await h.client.get(await q.sessionId)).result();
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'aborted' });
});

test('an abortController aborted before the stream starts starts nothing', async () => {
  const abortController = new AbortController();
  abortController.abort();
  const q = query({ prompt: 'never sent', options: { cwd: h.workspace(), client: h.client, abortController } });
  const seen: unknown[] = [];
  const reading = (async () => {
    for await (const m of q) seen.push(m);
  })();
  await expect(reading).rejects.toBeInstanceOf(AbortError);
  await expect(reading).rejects.toThrow(/before the session started: nothing was started/);
  expect(seen).toEqual([]);
  expect(h.model.requests.some((r) => JSON.stringify(r.body).includes('never sent'))).toBe(false);
});

test('continue resumes the newest session started in the same cwd', async () => {
  const cwd = h.workspace();
  // The scripted model picks the scenario from the first user message: the continued one's too.
  h.model.addScenario({ name: 'cont', turns: [turn.text('the answer is 42'), turn.text('you asked for the answer')] });
  for await (const m of query({ prompt: `${scenarioTag('cont')} what is the answer?`, options: { cwd, client: h.client } })) void m;
  const q = query({ prompt: 'what did I ask?', options: { cwd, client: h.client, continue: true } });
  for await (const m of q) void m;
  const second = h.model.requests.filter((r) => r.scenario === 'cont')[1]!;
  const sent = JSON.stringify(second.body.messages);
  expect(sent).toContain('what did I ask?');
  expect(sent).toContain('what is the answer?');
  expect(sent).toContain('the answer is 42');
  const empty = mkdtempSync(path.join(cwd, 'empty-'));
  await expect(
    (async () => {
      for await (const m of query({ prompt: 'x', options: { cwd: empty, client: h.client, continue: true } })) void m;
    })(),
  ).rejects.toThrow(`continue: no earlier session was started in ${empty}`);
});

test("a relative cwd is resolved against the caller's working directory: the tools run there", async () => {
  const ws = h.workspace();
  const relative = path.relative(process.cwd(), ws);
  expect(path.isAbsolute(relative)).toBe(false);
  h.model.addScenario({ name: 'sdk-rel-cwd', turns: [turn.tool('Bash', { command: 'pwd' }), turn.text('ok')] });
  const seen: QueryMessage[] = [];
  for await (const m of query({ prompt: `${scenarioTag('sdk-rel-cwd')} go`, options: { cwd: relative, client: h.client, ...bypass } }))
    seen.push(m);
  const output = seen.flatMap((m) =>
    m.type === 'user' && Array.isArray(m.message.content)
      ? m.message.content.flatMap((b) => (b.type === 'tool_result' ? [JSON.stringify(b.content)] : []))
      : [],
  );
  expect(output.join('\n')).toContain(ws);
});

test('systemPrompt blocks and effort reach the model as a system message and reasoning_effort', async () => {
  h.model.addScenario({ name: 'sdk-prompt', turns: [turn.text('ok')] });
  const systemPrompt = ['You are terse.', '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__', 'Today is a test.'];
  for await (const m of query({
    prompt: `${scenarioTag('sdk-prompt')} hi`,
    options: { cwd: h.workspace(), client: h.client, systemPrompt, effort: 'medium' },
  }))
    void m;
  const body = h.model.requests.find((r) => r.scenario === 'sdk-prompt')!.body;
  expect(body.messages[0]).toEqual({ role: 'system', content: 'You are terse.\n\nToday is a test.' });
  expect(body).toMatchObject({ reasoning_effort: 'medium' });
});

test("stderr receives the session's diagnostics; our own events are in the stream, typed as ours", async () => {
  h.model.addScenario({ name: 'sdk-stderr', turns: [turn.text('hi')] });
  const lines: string[] = [];
  const seen: QueryMessage[] = [];
  const q = query({
    prompt: `${scenarioTag('sdk-stderr')} hi`,
    options: { cwd: h.workspace(), client: h.client, model: 'unpriced-model', stderr: (l) => lines.push(l) },
  });
  for await (const m of q) seen.push(m);
  expect(lines).toContain(
    "[durable-agent] warning: No price is known for model unpriced-model: its cost is counted as $0 (costBasis 'unknown'). Add it to the worker's pricing file.\n",
  );
  expect(lines.every((l) => l.startsWith('[durable-agent] ') && l.endsWith('\n'))).toBe(true);
  expect(seen.map((m) => asDurableAgentEvent(m)?.subtype)).toContain('warning');
  const warning = seen.find((m) => m.type === 'system' && m.subtype === 'warning');
  expect(warning?.type === 'system' && warning.subtype === 'warning' && warning.message).toMatch(/^No price is known/);
  // What isDurableAgentEvent turns away is an SDK message.
  const sdk: SDKMessage[] = seen.filter((m) => !isDurableAgentEvent(m));
  expect(sdk.map((m) => m.type)).toEqual(['system', 'assistant', 'result']);
});

test('Query methods: models from the endpoint through a worker, empty lists, and refusals that say why', async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'sdk-methods', model: 'listed-model', turns: [gated(path.join(cwd, 'never'))] });
  const q = query({ prompt: `${scenarioTag('sdk-methods')} hi`, options: { cwd, client: h.client, ...bypass } });
  // Before the stream is read: the methods that need no session answer already.
  const models = await q.supportedModels();
  expect(models).toContainEqual({ value: 'listed-model', displayName: 'listed-model', description: 'owned by scripted' });
  expect(models).toContainEqual({ value: 'scripted/sdk-methods', displayName: 'scripted/sdk-methods', description: 'owned by scripted' });
  const init = await q.initializationResult();
  expect(init).toMatchObject({ commands: [], agents: [], output_style: 'default', account: {} });
  expect(init.models).toEqual(models);
  expect(await q.mcpServerStatus()).toEqual([]);
  // With servers configured, a query not yet iterated reports them pending (and does not wait for a session).
  const withServers = query({ prompt: 'x', options: { cwd, client: h.client, mcpServers: { calc: { command: 'calc-server' } } } });
  expect(await withServers.mcpServerStatus()).toEqual([{ name: 'calc', status: 'pending' }]);
  expect(await q.accountInfo()).toEqual({});
  await expect(q.rewindFiles('x')).rejects.toThrow(
    new NotSupportedError(
      'rewindFiles',
      'a session’s files are checkpointed per turn: fork at a turn instead (`resumeSessionAt` with `forkSession: true`)',
    ),
  );
  // A string prompt runs a one-shot session: there is nothing to stream into.
  await expect(q.streamInput((async function* () {})())).rejects.toThrow(
    /^Query.streamInput\(\): this query was started with a string prompt, which runs a one-shot session; start it in streaming input mode/,
  );
  await expect(q.setPermissionMode('auto')).rejects.toThrow(/^option permissionMode 'auto' is not supported by durable-agent/);
  // Never iterated, so never started: the refusal does not wait for a session.
  const unconfirmed = query({ prompt: 'x', options: { cwd, client: h.client } });
  await expect(unconfirmed.setPermissionMode('bypassPermissions')).rejects.toThrow(
    /start the query with allowDangerouslySkipPermissions: true/,
  );
  const seen: QueryMessage[] = [];
  for await (const m of q) {
    seen.push(m);
    if (m.type === 'tool_progress') expect(await q.interrupt()).toBeUndefined();
  }
  expect(seen.at(-1)).toMatchObject({ type: 'result', exit_reason: 'interrupted' });
  await waitFor('the session to close', async () => (await statusOf(await q.sessionId)) === 'COMPLETED');
  expect(await q.interrupt()).toBeUndefined();
});

test("supportedAgents() is the session's agents; mcpServerStatus() after the session ended is its last status, on the query's own connection", async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'sdk-agents', turns: [turn.text('done')] });
  const agents = {
    reviewer: { description: 'Reviews a change', prompt: 'You review.', model: 'inherit' },
    fixer: { description: 'Fixes a test', prompt: 'You fix.' },
  };
  const q = query({
    prompt: `${scenarioTag('sdk-agents')} go`,
    options: {
      cwd,
      // Not `client`: the query connects, and closes its connection when the stream ends.
      connection: { address: h.address, taskQueue: h.taskQueue, payloadCodecs: [] },
      agents,
      mcpServers: { calc: { command: 'node', args: [CALC_STDIO] }, broken: { command: 'node', args: [path.join(cwd, 'missing.mjs')] } },
    },
  });
  const listed = [
    { name: 'reviewer', description: 'Reviews a change', model: 'inherit' },
    { name: 'fixer', description: 'Fixes a test' },
  ];
  expect(await q.supportedAgents()).toEqual(listed);
  expect(await q.mcpServerStatus()).toEqual([
    { name: 'calc', status: 'pending' },
    { name: 'broken', status: 'pending' },
  ]);
  for await (const m of q) void m;
  await waitFor('the session to close', async () => (await statusOf(await q.sessionId)) === 'COMPLETED');
  const status = await q.mcpServerStatus();
  expect(status.map((s) => [s.name, s.status])).toEqual([
    ['calc', 'connected'],
    ['broken', 'failed'],
  ]);
  expect(status[1]!.error).toEqual(expect.any(String));
  expect((await q.initializationResult()).agents).toEqual(listed);
  expect(await q.reloadPlugins()).toEqual({ commands: [], agents: listed, plugins: [], mcpServers: status, error_count: 0 });
  await expect(q.reloadPlugins({ addPlugins: [{ type: 'local', path: '/p' }] })).rejects.toThrow(NotSupportedError);
  expect(await q.reloadSkills()).toEqual({ skills: [] });
  expect(await q.reloadOutputStyles()).toEqual({ available_output_styles: ['default'] });
  // Task disallowed: no agent can be started.
  const noTask = query({ prompt: 'x', options: { cwd, client: h.client, agents, disallowedTools: ['Task'] } });
  expect(await noTask.supportedAgents()).toEqual([]);
});

/** A prompt stream the test feeds: `push` a message, `end` the stream. */
function pushable() {
  const queue: SDKUserMessage[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  async function* stream(): AsyncGenerator<SDKUserMessage> {
    for (;;) {
      if (queue.length) yield queue.shift()!;
      else if (ended) return;
      else await new Promise<void>((r) => (wake = r));
    }
  }
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    stream: stream(),
    push(text: string) {
      queue.push(userMessage(text));
      poke();
    },
    end() {
      ended = true;
      poke();
    },
  };
}
const userMessage = (text: string, priority?: SDKUserMessage['priority']): SDKUserMessage => ({
  type: 'user',
  message: { role: 'user', content: text },
  parent_tool_use_id: null,
  ...(priority ? { priority } : {}),
});
async function* once(m: SDKUserMessage): AsyncGenerator<SDKUserMessage> {
  yield m;
}
const resultsOf = (seen: QueryMessage[]) => seen.filter((m) => m.type === 'result');

test('streaming input: a message sent while a turn runs steers it; priority later waits; one after a result is the next turn; end of input closes', async () => {
  const cwd = h.workspace();
  const gate = path.join(cwd, 'gate');
  h.model.addScenario({
    name: 'stream-in',
    turns: [gated(gate), turn.text('answer with the steer'), turn.text('answer to the later one'), turn.text('answer to the third')],
  });
  const input = pushable();
  input.push(`${scenarioTag('stream-in')} first`);
  const q = query({ prompt: input.stream, options: { cwd, client: h.client, ...bypass } });
  const seen: QueryMessage[] = [];
  for await (const m of q) {
    seen.push(m);
    if (m.type === 'assistant' && seen.filter((x) => x.type === 'assistant').length === 1) {
      // The gated Bash call holds turn 1: both are accepted while it runs (streamInput resolves
      // once the session has taken every message of its stream).
      await q.streamInput(once(userMessage('Also mention the weather.')));
      await q.streamInput(once(userMessage('A question for later.', 'later')));
      writeFileSync(gate, '');
    }
    if (m.type === 'result' && resultsOf(seen).length === 2) input.push('A third question.');
    if (m.type === 'result' && resultsOf(seen).length === 3) input.end();
  }
  const results = resultsOf(seen);
  // num_turns counts the session's model calls: turn 1 made two (the tool call, then the steer's answer).
  expect(results.map((r) => [r.subtype, r.num_turns])).toEqual([
    ['success', 2],
    ['success', 3],
    ['success', 4],
  ]);
  expect(results.map((r) => (r.subtype === 'success' ? r.result : ''))).toEqual([
    'answer with the steer',
    'answer to the later one',
    'answer to the third',
  ]);
  const requests = h.model.requests.filter((r) => r.scenario === 'stream-in').map((r) => JSON.stringify(r.body.messages));
  expect(requests).toHaveLength(4);
  // The steer reached turn 1's second call, after the tool result; the later one did not.
  expect(requests[1]).toContain('released');
  expect(requests[1]).toContain('Also mention the weather.');
  expect(requests[1]).not.toContain('A question for later.');
  expect(requests[2]).toContain('A question for later.');
  expect(requests[3]).toContain('A third question.');
  // The end of input closed the session once the third turn had its result.
  await waitFor('the session to close', async () => (await statusOf(await q.sessionId)) === 'COMPLETED');
  await expect(q.streamInput(once(userMessage('too late')))).rejects.toThrow(/^Query.streamInput\(\): the session has been closed/);
});

test("streaming input: priority 'now' interrupts the running turn, and the message is the next turn", async () => {
  const cwd = h.workspace();
  h.model.addScenario({ name: 'stream-now', turns: [gated(path.join(cwd, 'never')), turn.text('answer to the urgent one')] });
  const input = pushable();
  input.push(`${scenarioTag('stream-now')} first`);
  const q = query({ prompt: input.stream, options: { cwd, client: h.client, ...bypass } });
  const seen: QueryMessage[] = [];
  for await (const m of q) {
    seen.push(m);
    if (m.type === 'tool_progress' && !seen.slice(0, -1).some((x) => x.type === 'tool_progress')) {
      await q.streamInput(once(userMessage('Stop, do this instead.', 'now')));
      input.end();
    }
  }
  const results = resultsOf(seen);
  expect(results.map((r) => [r.subtype, (r as { exit_reason?: string }).exit_reason])).toEqual([
    ['error_during_execution', 'interrupted'],
    ['success', 'end_turn'],
  ]);
  expect(JSON.stringify(h.model.requests.filter((r) => r.scenario === 'stream-now')[1]!.body.messages)).toContain('Stop, do this instead.');
});

test('streaming input: a message that is not plain user text is refused, naming what is wrong', async () => {
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } };
  const q = query({
    prompt: once({ type: 'user', message: { role: 'user', content: [image] }, parent_tool_use_id: null } as unknown as SDKUserMessage),
    options: { cwd: h.workspace(), client: h.client },
  });
  await expect(q.next()).rejects.toThrow("query: a prompt message has a content block of type 'image'; only text blocks can be sent");
});
