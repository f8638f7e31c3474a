/**
 * The scripted model seen through the real `openai` client: what a model activity will see.
 * One server for the file; each test adds a scenario with a unique name and picks it by header.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startScriptedModel, turn, type ScenarioInput, type ScriptedModel } from '../../src/testing/scripted-model';

let model: ScriptedModel;
let seq = 0;

beforeAll(async () => {
  model = await startScriptedModel({ scenarios: { name: 'default', turns: [turn.text('default scenario')] } });
});
afterAll(() => model.close());

/** Add a scenario under a unique name; return it and a client bound to it. */
function script(turns: ScenarioInput['turns'], extra: Partial<ScenarioInput> = {}) {
  const name = `s${++seq}`;
  model.addScenario({ name, turns, ...extra });
  const client = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-scenario': name } });
  return { name, client };
}

const user = (content: string): ChatCompletionMessageParam => ({ role: 'user', content });
const assistant = (content: string): ChatCompletionMessageParam => ({ role: 'assistant', content });

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

test('streams text as chat.completion.chunk deltas', async () => {
  const { name, client } = script([turn.text('Hello there, world.')]);
  const stream = await client.chat.completions.create({ model: 'm1', messages: [user('hi')], stream: true });
  const chunks = await collect(stream);

  expect(chunks.map((c) => c.object)).toEqual(chunks.map(() => 'chat.completion.chunk'));
  expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
  expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there, world.');
  expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(3);
  expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  expect(chunks.every((c) => c.model === 'm1')).toBe(true);
  model.assertConsumed(name);
});

test('streams tool calls that the SDK assembles from split arguments', async () => {
  const args = { file_path: '/tmp/ws/greet.js', limit: 20 };
  const { name, client } = script([
    turn.tools(
      [
        { name: 'Read', arguments: args },
        { name: 'Bash', arguments: { command: 'ls' }, id: 'call_ls' },
      ],
      {
        text: 'Reading.',
      },
    ),
  ]);
  const stream = client.chat.completions.stream({ model: 'm', messages: [user('read it')] });
  const argDeltas: string[] = [];
  stream.on('tool_calls.function.arguments.delta', (e) => {
    if (e.arguments_delta) argDeltas.push(e.arguments_delta);
  });
  const done = await stream.finalChatCompletion();

  const choice = done.choices[0]!;
  expect(choice.finish_reason).toBe('tool_calls');
  expect(choice.message.content).toBe('Reading.');
  expect(choice.message.tool_calls).toEqual([
    { id: 'call_0_0', type: 'function', function: { name: 'Read', arguments: JSON.stringify(args) } },
    { id: 'call_ls', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
  ]);
  expect(argDeltas).toHaveLength(6); // three pieces per call
  expect(argDeltas.slice(0, 3).join('')).toBe(JSON.stringify(args));
  model.assertConsumed(name);
});

test('sends a usage chunk with no choices when include_usage is set', async () => {
  const { client } = script([turn.text('ok', { usage: { prompt_tokens: 120, completion_tokens: 7, cached_tokens: 100 } })]);
  const chunks = await collect(
    await client.chat.completions.create({
      model: 'm',
      messages: [user('hi')],
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const last = chunks.at(-1)!;
  expect(last.choices).toEqual([]);
  expect(last.usage).toMatchObject({
    prompt_tokens: 120,
    completion_tokens: 7,
    total_tokens: 127,
    prompt_tokens_details: { cached_tokens: 100 },
  });
  expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);

  const without = await collect(await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true }));
  expect(without.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
});

test('derives usage from lengths when the turn gives none', async () => {
  const { client } = script([turn.text('12345678')]);
  const res = await client.chat.completions.create({ model: 'm', messages: [user('x'.repeat(400))] });
  expect(res.usage!.completion_tokens).toBe(2);
  expect(res.usage!.prompt_tokens).toBeGreaterThanOrEqual(100);
});

test('answers non-streaming requests with a chat.completion', async () => {
  const { name, client } = script([turn.tool('Bash', { command: 'node greet.js' }, { text: 'Running.' })], { model: 'gpt-scripted' });
  const res = await client.chat.completions.create({ model: 'whatever', messages: [user('run')] });
  expect(res).toMatchObject({
    object: 'chat.completion',
    model: 'gpt-scripted',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: 'Running.',
          tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'Bash', arguments: '{"command":"node greet.js"}' } }],
        },
      },
    ],
  });
  model.assertConsumed(name);
});

test('chooses the turn by the number of assistant messages, so a repeated request gets the same answer', async () => {
  const { name, client } = script([turn.text('first'), turn.text('second')]);
  const ask = async (messages: ChatCompletionMessageParam[]) =>
    (await client.chat.completions.create({ model: 'm', messages })).choices[0]!.message.content;

  const history = [user('a'), assistant('first'), user('b')];
  expect(await ask(history)).toBe('second');
  expect(await ask(history)).toBe('second');
  expect(await ask([user('a')])).toBe('first');
  expect(model.requests.filter((r) => r.scenario === name).map((r) => [r.turnIndex, r.attempt])).toEqual([
    [1, 1],
    [1, 2],
    [0, 1],
  ]);
  model.assertConsumed(name);
});

test('records each request with its parsed body and headers', async () => {
  const { name, client } = script([turn.text('ok')]);
  const before = Date.now();
  await client.chat.completions.create(
    { model: 'm', messages: [{ role: 'system', content: 'be brief' }, user('hi')], max_completion_tokens: 50 },
    { headers: { 'x-trace': 't1' } },
  );
  const [rec] = model.requests.filter((r) => r.scenario === name);
  expect(rec).toMatchObject({ scenario: name, turnIndex: 0, attempt: 1, status: 200 });
  expect(rec!.at).toBeGreaterThanOrEqual(before);
  expect(rec!.body.messages).toEqual([{ role: 'system', content: 'be brief' }, user('hi')]);
  expect(rec!.body.max_completion_tokens).toBe(50);
  expect(rec!.headers['x-trace']).toBe('t1');
  expect(rec!.headers['x-scenario']).toBe(name);
});

test('picks the scenario by header, else a known model "scripted/NAME", else a [scenario:NAME] tag, else the default', async () => {
  const { name } = script([turn.text('by name')]);
  const { name: tagged } = script([turn.text('by tag'), turn.text('by tag, turn 1')]);
  const plain = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0 });
  const ask = async (messages: ChatCompletionMessageParam[], headers?: Record<string, string>) =>
    (await plain.chat.completions.create({ model: 'gpt-4.1-mini', messages }, { headers })).choices[0]!.message.content;

  expect(await ask([user(`[scenario:${tagged}] Do the task.`)])).toBe('by tag');
  const parts: ChatCompletionMessageParam = {
    role: 'user',
    content: [
      { type: 'text', text: 'Context.' },
      { type: 'text', text: `[scenario:${tagged}] Do it.` },
    ],
  };
  expect(await ask([{ role: 'system', content: '[scenario:ignored]' }, parts, assistant('by tag'), user('more')])).toBe('by tag, turn 1');
  expect(await ask([user(`[scenario:${tagged}]`)], { 'x-scenario': name })).toBe('by name');

  const byModel = await plain.chat.completions.create({ model: `scripted/${name}`, messages: [user(`[scenario:${tagged}] hi`)] });
  expect(byModel.choices[0]!.message.content).toBe('by name');
  const unknownModel = await plain.chat.completions.create({ model: 'scripted/nope', messages: [user(`[scenario:${tagged}] hi`)] });
  expect(unknownModel.choices[0]!.message.content).toBe('by tag');
  const byDefault = await plain.chat.completions.create({ model: 'gpt-4.1-mini', messages: [user('hi')] });
  expect(byDefault.choices[0]!.message.content).toBe('default scenario');

  const models = await plain.models.list();
  expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(['scripted/default', `scripted/${name}`]));
});

test('an unknown scenario header is a 404 and a script error', async () => {
  const local = await startScriptedModel({ scenarios: { name: 'only', turns: [] } });
  try {
    const client = new OpenAI({ baseURL: local.url, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-scenario': 'nope' } });
    const err = await client.chat.completions.create({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(404);
    expect(local.errors).toEqual(["unknown scenario 'nope' (known: only)"]);
    expect(() => local.assertConsumed()).toThrow(/unknown scenario 'nope'/);
  } finally {
    await local.close();
  }
});

describe('faults', () => {
  test('a 429 with retry-after reaches the client; the next attempt is served', async () => {
    const { name, client } = script([
      turn.text('after the storm', {
        faults: [
          { status: 429, headers: { 'retry-after': '7' } },
          { status: 503, body: { error: { message: 'overloaded', type: 'overloaded' } } },
        ],
      }),
    ]);
    const call = () => client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true });

    const first = await call().catch((e: unknown) => e);
    expect(first).toBeInstanceOf(APIError);
    expect((first as APIError).status).toBe(429);
    expect((first as APIError).headers?.get('retry-after')).toBe('7');

    const second = await call().catch((e: unknown) => e);
    expect((second as APIError).status).toBe(503);
    expect((second as APIError).message).toMatch(/overloaded/);

    const chunks = await collect(await call());
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('after the storm');
    expect(model.requests.filter((r) => r.scenario === name).map((r) => [r.attempt, r.status])).toEqual([
      [1, 429],
      [2, 503],
      [3, 200],
    ]);
    model.assertConsumed(name);
  });

  test('a raw string body is sent as is', async () => {
    const { client } = script([turn.text('x', { faults: [{ status: 502, body: '<html>bad gateway</html>' }] }), turn.text('y')]);
    const err = (await client.chat.completions.create({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e)) as APIError;
    expect(err.status).toBe(502);
    expect(err.message).toContain('bad gateway');
  });

  test('a connection dropped mid-stream fails the stream after the chunks it sent', async () => {
    const { name, client } = script([turn.text('one two three four five', { faults: [{ drop_after_chunks: 3 }] })]);
    const stream = await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true });
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    // undici's error for a body cut short (a TypeError from Node's realm, not jest's: no instanceof).
    expect(String(err)).toBe('TypeError: terminated');
    expect(got.join('')).toBe('one two ');
    expect(() => model.assertConsumed(name)).toThrow(`scenario '${name}': turn 0 of 1 never served`);

    const retry = await collect(await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true }));
    expect(retry.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('one two three four five');
    model.assertConsumed(name);
  });

  test('a dropped non-streaming request is a connection error', async () => {
    const { client } = script([turn.text('x', { faults: [{ drop_after_chunks: 0 }] })]);
    const err = await client.chat.completions.create({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
  });

  test('a hang makes the client time out', async () => {
    const { name, client } = script([turn.text('late', { faults: [{ hang_ms: 10_000 }] })]);
    const started = Date.now();
    const err = await client.chat.completions
      .create({ model: 'm', messages: [user('hi')], stream: true }, { timeout: 300 })
      .catch((e: unknown) => e);
    // Outside jest this is an APIConnectionTimeoutError; under jest the SDK misses undici's
    // AbortError (a DOMException from another realm) and reports its parent class.
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(model.requests.filter((r) => r.scenario === name)[0]).toMatchObject({ status: 0, fault: { hang_ms: 10_000 } });
  });

  test('a hang after some chunks stalls the stream mid-way', async () => {
    const { client } = script([turn.text('a b c d', { faults: [{ hang_ms: 200, after_chunks: 2 }] })]);
    const started = Date.now();
    const stream = await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true });
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(String(err)).toBe('TypeError: terminated');
    expect(got.join('')).toBe('a ');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });
});

describe('consumption', () => {
  test('a script that runs out answers 500 and fails assertConsumed', async () => {
    const { name, client } = script([turn.text('only')]);
    const err = (await client.chat.completions
      .create({ model: 'm', messages: [user('a'), assistant('only'), user('b')] })
      .catch((e: unknown) => e)) as APIError;
    expect(err.status).toBe(500);
    expect(err.message).toMatch(/script ran out/);
    expect(model.errors.some((e) => e.includes(`scenario '${name}'`) && e.includes('script ran out'))).toBe(true);
    expect(() => model.assertConsumed(name)).toThrow(/script ran out: scenario 's\d+' has 1 turns, but the request holds 1 assistant/);
  });

  test('unused turns fail assertConsumed, naming them', async () => {
    const { name, client } = script([turn.text('a'), turn.text('b'), turn.text('c')]);
    await client.chat.completions.create({ model: 'm', messages: [user('a')] });
    expect(() => model.assertConsumed(name)).toThrow(`scenario '${name}': turns 1, 2 of 3 never served`);
  });

  test('reset forgets requests, errors and served turns, keeping the scenarios', async () => {
    const local = await startScriptedModel({ scenarios: [{ name: 'r', turns: [turn.text('a')] }] });
    try {
      const client = new OpenAI({ baseURL: local.url, apiKey: 'x', maxRetries: 0 });
      await client.chat.completions.create({ model: 'm', messages: [user('a')] });
      local.assertConsumed();
      const requests = local.requests;
      local.reset();
      expect(requests).toHaveLength(0);
      expect(() => local.assertConsumed()).toThrow(/turn 0 of 1 never served/);
      expect(local.scenario('r').turns).toHaveLength(1);
    } finally {
      await local.close();
    }
  });

  test('adding a scenario twice is an error', () => {
    expect(() => model.addScenario({ name: 'default', turns: [] })).toThrow(/already exists/);
  });
});

test('a concurrency limit answers 429 with retry-after beyond it, without touching the script', async () => {
  model.setMaxConcurrent(1);
  try {
    const slow = script([turn.text('slow reply', { delay_ms: 500 })]);
    const fast = script([turn.text('fast reply')]);
    const first = slow.client.chat.completions.create({ model: 'm', messages: [user('hi')] });
    // The first is in flight once recorded (it then waits 500 ms before answering).
    while (!model.requests.some((r) => r.scenario === slow.name)) await new Promise((r) => setTimeout(r, 5));
    const err = await fast.client.chat.completions.create({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(429);
    expect((err as APIError).headers?.get('retry-after')).toBe('1');
    expect((err as APIError).headers?.get('retry-after-ms')).toBe('1000');
    expect((await first).choices[0]!.message.content).toBe('slow reply');
    expect(model.rateLimited).toBeGreaterThanOrEqual(1);
    // The rejected request did not count as an attempt: the same turn is served whole next time.
    const again = await fast.client.chat.completions.create({ model: 'm', messages: [user('hi')] });
    expect(again.choices[0]!.message.content).toBe('fast reply');
    expect(model.requests.filter((r) => r.scenario === fast.name).map((r) => r.attempt)).toEqual([1]);
  } finally {
    model.setMaxConcurrent(undefined);
  }
});
