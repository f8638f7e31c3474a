/**
 * The scripted model marks a request the client abandoned (`abortedAt`), and only those: a
 * finished reply, a connection the server cut as a fault, and a server being closed are not
 * client aborts. Session tests rely on it to assert that a cancelled call stopped at the provider.
 */
import OpenAI from 'openai';
import { startScriptedModel, turn, type RecordedRequest, type ScriptedModel } from '../../src/testing/scripted-model';
import { waitFor } from '../helpers/wait';

let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel({
    scenarios: [
      { name: 'slow', turns: [turn.text('late', { delay_ms: 60_000 })] },
      { name: 'trickle', turns: [turn.text('one two three four five six', { chunk_delay_ms: 60_000 })] },
      { name: 'quick', turns: [turn.text('done')] },
      { name: 'dropped', turns: [turn.text('one two three four', { faults: [{ drop_after_chunks: 2 }] })] },
    ],
  });
});
afterAll(() => model?.close());

const client = (scenario: string) =>
  new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-scenario': scenario } });
const ask = (scenario: string, signal?: AbortSignal) =>
  client(scenario).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal });
const requestOf = (scenario: string): RecordedRequest | undefined => model.requests.find((r) => r.scenario === scenario);

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) void _;
}

test('a request the client aborts before any header is marked aborted', async () => {
  const abort = new AbortController();
  const pending = ask('slow', abort.signal).catch((e: unknown) => e);
  await waitFor('the request to arrive', () => requestOf('slow'));
  expect(requestOf('slow')!.abortedAt).toBeUndefined();
  const before = Date.now();
  abort.abort();
  expect(await pending).toBeInstanceOf(Error);
  const at = await waitFor('the abort to be recorded', () => requestOf('slow')!.abortedAt);
  expect(at).toBeGreaterThanOrEqual(before);
});

test('a stream the client abandons mid-way is marked aborted', async () => {
  const abort = new AbortController();
  const chunks = (await ask('trickle', abort.signal))[Symbol.asyncIterator]();
  expect((await chunks.next()).done).toBe(false);
  expect(requestOf('trickle')).toMatchObject({ chunksSent: 1 });
  expect(requestOf('trickle')!.abortedAt).toBeUndefined();
  abort.abort();
  await chunks.next().catch(() => undefined); // the stream ends (or throws) on the abort
  await waitFor('the abort to be recorded', () => requestOf('trickle')!.abortedAt);
});

test('a finished reply and a connection the server cut (a fault) are not client aborts', async () => {
  await drain(await ask('quick'));
  const dropped = await ask('dropped');
  // undici's error for a body cut short (a TypeError from Node's realm, not jest's: no instanceof).
  expect(String(await drain(dropped).catch((e: unknown) => e))).toBe('TypeError: terminated');
  // The server closed both; give a wrongly recorded abort the same event-loop turns to show up.
  await new Promise((r) => setImmediate(r));
  expect(requestOf('quick')).toMatchObject({ status: 200 });
  expect(requestOf('quick')!.abortedAt).toBeUndefined();
  expect(requestOf('dropped')!.fault).toEqual({ drop_after_chunks: 2 });
  expect(requestOf('dropped')!.abortedAt).toBeUndefined();
});

test('closing the server with a request in flight is not a client abort', async () => {
  const own = await startScriptedModel({ scenarios: [{ name: 'slow', turns: [turn.text('late', { delay_ms: 60_000 })] }] });
  const c = new OpenAI({ baseURL: own.url, apiKey: 'x', maxRetries: 0 });
  const pending = c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  await waitFor('the request to arrive', () => own.requests[0]);
  await own.close();
  expect(await pending).toBeInstanceOf(Error);
  expect(own.requests[0]!.abortedAt).toBeUndefined();
});
