/**
 * Our streamed chat client (src/activities/model/chat-stream.ts) against the `openai` client it
 * replaced on the hot path: the same request to the same real HTTP server must give the same
 * chunks, and every failure the same error class, status, message and headers — src/activities/model/errors.ts
 * classifies by them. Then what only a hand-made server can show: events split anywhere
 * (CRLF halves, UTF-8 halves), comments and multi-line data, connection reuse, aborts, the
 * header timeout.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { ChatStreamClient } from '../../src/activities/model/chat-stream';
import { SseParser } from '../../src/shared/sse';
import { classifyModelError } from '../../src/activities/model/errors';
import type { Fault } from '../../src/testing/scenario';
import { startScriptedModel, turn, type ScriptedModel } from '../../src/testing/scripted-model';
import { waitFor } from '../helpers/wait';

let model: ScriptedModel;
/** Each fault answers one attempt of its turn, and both clients make attempts: enough for every test here. */
const always = (fault: Fault): Fault[] => Array.from({ length: 8 }, () => fault);
beforeAll(async () => {
  const usage = { prompt_tokens: 40, completion_tokens: 7, cached_tokens: 8 };
  const overflow = {
    error: { message: 'maximum context length exceeded', type: 'invalid_request_error', code: 'context_length_exceeded' },
  };
  model = await startScriptedModel({
    scenarios: [
      { name: 'tools', turns: [turn.tool('Read', { file_path: '/tmp/ü.txt' }, { text: 'Reading — “quoted” 日本語', usage })] },
      { name: 'bad', turns: [turn.text('x', { faults: always({ status: 400, body: overflow }) })] },
      {
        name: 'limited',
        turns: [turn.text('x', { faults: always({ status: 429, headers: { 'retry-after': '3', 'x-request-id': 'req_1' } }) })],
      },
      { name: 'plain', turns: [turn.text('x', { faults: always({ status: 502, body: 'Bad Gateway from the proxy' }) })] },
      { name: 'empty', turns: [turn.text('x', { faults: always({ status: 503, body: '' }) })] },
      { name: 'dropped', turns: [turn.text('one two three four', { faults: always({ drop_after_chunks: 2 }) })] },
      { name: 'slow', turns: [turn.text('late', { delay_ms: 60_000 })] },
      { name: 'trickle', turns: [turn.text('one two three four five six', { chunk_delay_ms: 60_000 })] },
    ],
  });
});
afterAll(() => model?.close());

const body = (scenario: string): ChatCompletionCreateParamsStreaming => ({
  model: `scripted/${scenario}`,
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
});

async function ours(url: string, scenario: string, signal?: AbortSignal): Promise<unknown[]> {
  const { chunks } = await new ChatStreamClient({ baseURL: url, apiKey: 'k' }).stream(body(scenario), { signal });
  const out: unknown[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

async function theirs(url: string, scenario: string, signal?: AbortSignal): Promise<unknown[]> {
  const client = new OpenAI({ baseURL: url, apiKey: 'k', maxRetries: 0 });
  const out: unknown[] = [];
  for await (const c of await client.chat.completions.create(body(scenario), { signal })) out.push(c);
  return out;
}

/** What a caller can see of a failure: its class, status, message, and the headers model-errors reads. */
function failureOf(e: unknown) {
  const err = e as APIError;
  return {
    class: err.constructor.name,
    status: err.status,
    message: err.message,
    retryAfter: err.headers?.get('retry-after') ?? null,
    requestID: err.requestID ?? null,
    classified: classifyModelError(e).failure.type,
  };
}

test('the same chunks as the openai client, tool call, usage and non-ASCII text included', async () => {
  const mine = await ours(model.url, 'tools');
  const their = await theirs(model.url, 'tools');
  // `created` is each response's own second: two requests may straddle one. Compared apart.
  const created = (cs: unknown[]) => cs.map((c) => (c as { created: number }).created);
  const withoutCreated = (cs: unknown[]) => cs.map((c) => ({ ...(c as object), created: 0 }));
  expect(withoutCreated(mine)).toEqual(withoutCreated(their));
  for (const t of [...created(mine), ...created(their)]) expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
  // Not vacuous: a role chunk, the text, the tool call's name and arguments, the finish and the usage.
  expect(JSON.stringify(mine)).toContain('日本語');
  expect(JSON.stringify(mine)).toContain('"name":"Read"');
  expect(mine.at(-1)).toMatchObject({ usage: { prompt_tokens: 40, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 8 } } });
  expect(mine.some((c) => (c as { choices: { finish_reason: string | null }[] }).choices[0]?.finish_reason === 'tool_calls')).toBe(true);
});

test('the request is the one the openai client sends, with the key as a bearer token', async () => {
  const before = model.requests.length;
  await ours(model.url, 'tools');
  await theirs(model.url, 'tools');
  const [mine, sdk] = model.requests.slice(before);
  expect(mine!.body).toEqual(sdk!.body);
  expect(mine!.headers.authorization).toBe('Bearer k');
  expect(mine!.headers['content-type']).toBe('application/json');
});

test.each(['bad', 'limited', 'plain', 'empty'])('an HTTP error (%s) is the error the openai client throws', async (scenario) => {
  const mine = await ours(model.url, scenario).catch((e: unknown) => e);
  const sdk = await theirs(model.url, scenario).catch((e: unknown) => e);
  expect(mine).toBeInstanceOf(APIError);
  expect(failureOf(mine)).toEqual(failureOf(sdk));
});

test('the classes model-errors relies on: context overflow, and retry-after on a rate limit', async () => {
  expect(failureOf(await ours(model.url, 'bad').catch((e: unknown) => e))).toMatchObject({ status: 400, classified: 'ContextOverflow' });
  const limited = await ours(model.url, 'limited').catch((e: unknown) => e);
  expect(failureOf(limited)).toMatchObject({ status: 429, retryAfter: '3', requestID: 'req_1', classified: 'ModelRateLimited' });
  expect(classifyModelError(limited).retryAfterMs).toBe(3_000);
});

test('a stream the server cuts short is an error (retried as ModelStreamError), not a short reply', async () => {
  const e = await ours(model.url, 'dropped').catch((x: unknown) => x);
  expect(e).toBeInstanceOf(Error);
  expect(e).not.toBeInstanceOf(APIError);
  expect(String(e)).toMatch(/stream broke off/);
  expect(classifyModelError(e).failure.type).toBe('ModelStreamError');
});

test('an endpoint that refuses the connection is an APIConnectionError, as with the openai client', async () => {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  await new Promise((r) => server.close(r));
  const mine = await ours(url, 'tools').catch((e: unknown) => e);
  expect(mine).toBeInstanceOf(APIConnectionError);
  expect(failureOf(mine)).toEqual(failureOf(await theirs(url, 'tools').catch((e: unknown) => e)));
  expect(classifyModelError(mine).failure.type).toBe('ModelConnectionError');
});

test('an abort before the headers rejects with APIUserAbortError; mid-stream it ends the stream quietly', async () => {
  const early = new AbortController();
  const pending = ours(model.url, 'slow', early.signal).catch((e: unknown) => e);
  setTimeout(() => early.abort(), 100);
  expect(await pending).toBeInstanceOf(APIUserAbortError);
  await expect(ours(model.url, 'tools', AbortSignal.abort())).rejects.toBeInstanceOf(APIUserAbortError);

  const late = new AbortController();
  const { chunks } = await new ChatStreamClient({ baseURL: model.url }).stream(body('trickle'), { signal: late.signal });
  const it = chunks[Symbol.asyncIterator]();
  expect((await it.next()).done).toBe(false);
  late.abort();
  expect(await it.next()).toEqual({ done: true, value: undefined });
  // The provider saw the connection go: the call stopped there too.
  await waitFor('the abort to reach the provider', () => model.requests.filter((r) => r.scenario === 'trickle').at(-1)?.abortedAt);
});

describe('against a hand-made server', () => {
  let server: http.Server;
  let url: string;
  let reply: (res: http.ServerResponse, req: http.IncomingMessage, body: string) => void;
  const sockets = new Set<unknown>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      sockets.add(req.socket);
      let text = '';
      req.setEncoding('utf8').on('data', (s: string) => (text += s));
      req.on('end', () => reply(res, req, text));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const chunk = (n: number, content: string) => ({ id: `c${n}`, choices: [{ index: 0, delta: { content }, finish_reason: null }] });

  test('events split at every byte, CRLF and CR endings, comments, other fields and multi-line data parse alike', async () => {
    const wire = Buffer.from(
      [
        ': a comment\r\n',
        'event: message\r\n',
        `data: ${JSON.stringify(chunk(1, 'héllo — 世界'))}\r\n\r\n`,
        'id: 7\rretry: 10\r',
        `data:${JSON.stringify(chunk(2, 'second'))}\r\r`,
        // One event's data over two lines: joined with a newline, which JSON allows between tokens.
        `data: {"id":"c3",\ndata: "choices":[]}\n\n`,
        'data: [DONE]\n\n',
        `data: ${JSON.stringify(chunk(4, 'after done: ignored'))}\n\n`,
      ].join(''),
    );
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // One byte per write, each flushed: every boundary, inside a CRLF and inside a UTF-8 character too.
      let i = 0;
      const next = () => (i < wire.length ? res.write(wire.subarray(i, ++i), () => setImmediate(next)) : res.end());
      next();
    };
    expect(await ours(url, 'x')).toEqual([chunk(1, 'héllo — 世界'), chunk(2, 'second'), { id: 'c3', choices: [] }]);
  });

  test('an error object in the stream is an APIError, as the openai client throws it', async () => {
    reply = (res) =>
      res
        .writeHead(200, { 'content-type': 'text/event-stream' })
        .end(`data: ${JSON.stringify(chunk(1, 'a'))}\n\ndata: {"error":{"message":"overloaded mid-stream"}}\n\n`);
    const mine = await ours(url, 'x').catch((e: unknown) => e);
    expect(mine).toBeInstanceOf(APIError);
    expect(failureOf(mine)).toEqual(failureOf(await theirs(url, 'x').catch((e: unknown) => e)));
    expect((mine as Error).message).toBe('overloaded mid-stream');
  });

  test('calls one after another reuse one kept-alive connection', async () => {
    reply = (res) =>
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify(chunk(1, 'a'))}\n\ndata: [DONE]\n\n`);
    const client = new ChatStreamClient({ baseURL: url });
    sockets.clear();
    for (let i = 0; i < 3; i++) {
      const { chunks } = await client.stream(body('x'));
      for await (const _ of chunks) void _;
    }
    expect(sockets.size).toBe(1);
  });

  test('a 307 or 308 is followed with the same body, and the key goes to the same origin only', async () => {
    const seen: { at: string; key?: string; body: string }[] = [];
    const elsewhere = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (s: string) => (text += s));
      req.on('end', () => {
        seen.push({ at: `elsewhere ${req.url}`, key: req.headers.authorization, body: text });
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify(chunk(1, 'moved'))}\n\ndata: [DONE]\n\n`);
      });
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    try {
      const there = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/v2/chat/completions`;
      reply = (res, req, text) => {
        seen.push({ at: `here ${req.url}`, key: req.headers.authorization, body: text });
        if (req.url === '/v1/chat/completions') res.writeHead(307, { location: '/moved/chat/completions' }).end();
        else res.writeHead(308, { location: there }).end();
      };
      expect(await ours(url, 'x')).toEqual([chunk(1, 'moved')]);
      expect(seen.map((s) => [s.at, s.key])).toEqual([
        ['here /v1/chat/completions', 'Bearer k'],
        ['here /moved/chat/completions', 'Bearer k'],
        ['elsewhere /v2/chat/completions', undefined],
      ]);
      expect(new Set(seen.map((s) => s.body))).toEqual(new Set([JSON.stringify(body('x'))]));
    } finally {
      elsewhere.closeAllConnections();
      await new Promise((r) => elsewhere.close(r));
    }
  });

  test('past five redirects, or a redirect that is not a 307/308, the status is the error', async () => {
    let hops = 0;
    reply = (res) => void (hops++, res.writeHead(307, { location: `/v1/again-${hops}` }).end());
    const looped = await ours(url, 'x').catch((e: unknown) => e);
    expect(failureOf(looped)).toMatchObject({ class: 'APIError', status: 307 });
    expect(hops).toBe(6); // the request and five redirects
    reply = (res) => void res.writeHead(302, { location: '/v1/elsewhere' }).end();
    expect(failureOf(await ours(url, 'x').catch((e: unknown) => e))).toMatchObject({ status: 302, message: '302 status code (no body)' });
  });

  test('no headers within the timeout: APIConnectionTimeoutError', async () => {
    reply = () => undefined; // never answers
    const e = await new ChatStreamClient({ baseURL: url, timeoutMs: 200 }).stream(body('x')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIConnectionTimeoutError);
    expect(classifyModelError(e).failure.type).toBe('ModelConnectionError');
  });
});

test('SseParser: an event is dispatched by its blank line only, and the last one at the end of the text', () => {
  const p = new SseParser();
  expect(p.push('data: a\n')).toEqual([]);
  expect(p.push('\r')).toEqual([]); // a CR at the end may be half a CRLF
  expect(p.push('\ndata: b')).toEqual(['a']);
  expect(p.push('', true)).toEqual(['b']);
  expect(new SseParser().push('event: ping\n\n:keep-alive\n\n', true)).toEqual([]); // no data: nothing dispatched
});

test('a base URL that is not an http(s) URL is refused, naming the variable', () => {
  for (const bad of ['ftp://example.com/v1', 'localhost:8080/v1', 'not a url'])
    expect(() => new ChatStreamClient({ baseURL: bad })).toThrow(
      `the model endpoint (OPENAI_BASE_URL) must be an http(s) URL, not ${JSON.stringify(bad)}`,
    );
});
