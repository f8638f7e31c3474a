/**
 * Live tokens (ARCHITECTURE.md#live-tokens): `includePartialMessages` yields the SDK's
 * `stream_event`s while the model streams, read from the worker that runs the call; a retried
 * call announces its restart and replaces the partial text; nothing per token enters history.
 */
import { query } from '../../src/sdk/query';
import type { AssistantMessage, QueryMessage, SDKPartialAssistantMessage } from '../../src/shared/events';
import type { StreamEvent } from '../../src/shared/stream-events';
import { turn } from '../../src/testing/scripted-model';
import { LiveHub } from '../../src/activities/live/hub';
import { startLiveServer } from '../../src/activities/live/server';
import { temporal as proto } from '@temporalio/proto';
import { liveUrlFromIdentity, readLiveStream, LiveStreamGone } from '../../src/client/live-sse';
import { kinds, scenarioTag, useHarness } from '../helpers/harness';

const h = useHarness();

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
const isStream = (m: QueryMessage): m is SDKPartialAssistantMessage => m.type === 'stream_event';
const textOf = (a: AssistantMessage) => a.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
const deltas = (events: StreamEvent[]) =>
  events.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : '')).join('');

/** The stream events between the previous history event and each assistant message. */
function streamsBeforeReplies(messages: QueryMessage[]): { reply: AssistantMessage; events: StreamEvent[] }[] {
  const out: { reply: AssistantMessage; events: StreamEvent[] }[] = [];
  let run: StreamEvent[] = [];
  for (const m of messages) {
    if (isStream(m)) run.push(m.event);
    else if (m.type === 'assistant') {
      out.push({ reply: m, events: run });
      run = [];
    } else if (run.length) throw new Error(`a ${m.type} event interrupted a model call's stream events`);
  }
  if (run.length) throw new Error('stream events after the last assistant message');
  return out;
}

test('query() with includePartialMessages yields stream_events while the model streams, each call before its assistant message', async () => {
  const long = words(20, 'w');
  h.model.addScenario({
    name: 'live-basic',
    turns: [
      { text: 'Looking around first.', tool_calls: [{ name: 'Glob', arguments: { pattern: '*' } }], chunk_delay_ms: 10 },
      turn.text(long, { chunk_delay_ms: 100 }),
    ],
  });
  const messages: QueryMessage[] = [];
  let modelChunksAtFirstText: number | undefined;
  let heartbeatsAtFirstEvent: number | undefined;
  const q = query({
    prompt: `${scenarioTag('live-basic')} go`,
    options: {
      cwd: h.workspace(),
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
      client: h.client,
      includePartialMessages: true,
    },
  });
  for await (const m of q) {
    messages.push(m);
    if (isStream(m) && heartbeatsAtFirstEvent === undefined) {
      const d = await h.client.client.workflow.getHandle(await q.sessionId).describe();
      const call = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel');
      heartbeatsAtFirstEvent = call?.heartbeatDetails?.payloads?.length ?? 0;
    }
    if (isStream(m) && m.event.type === 'content_block_delta' && deltas([m.event]).startsWith('w0')) {
      modelChunksAtFirstText = h.model.requests.find((r) => r.scenario === 'live-basic' && r.turnIndex === 1)?.chunksSent;
    }
  }
  h.model.assertConsumed('live-basic');

  // The history events are what they are without the option: no warning, each reply once.
  const history = messages.filter((m) => !isStream(m));
  expect(kinds(history).filter((k) => k !== 'tool_progress')).toEqual(['system/init', 'assistant', 'user', 'assistant', 'result']);
  // Each call's stream comes whole, right before its reply (the second after the tool result).
  const calls = streamsBeforeReplies(messages);
  expect(calls).toHaveLength(2);
  for (const { reply, events } of calls) {
    expect(events[0]).toMatchObject({ type: 'message_start', message: { id: reply.message.id, role: 'assistant', content: [] } });
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: reply.message.stop_reason } });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
    expect(events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(deltas(events)).toBe(textOf(reply));
  }
  const first = calls[0]!.events;
  expect(first.filter((e) => e.type === 'content_block_start').map((e) => e.type === 'content_block_start' && e.content_block)).toEqual([
    { type: 'text', text: '', citations: null },
    { type: 'tool_use', id: 'call_0_0', name: 'Glob', input: {} },
  ]);
  const json = first
    .map((e) => (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? e.delta.partial_json : ''))
    .join('');
  expect(JSON.parse(json)).toEqual({ pattern: '*' });
  expect(messages.filter(isStream)[0]).toMatchObject({ parent_tool_use_id: null, session_id: await q.sessionId, uuid: expect.any(String) });
  // Live, not replayed at the end: the first words reached us while the model was still sending
  // (22 chunks: role, 20 words, finish; plus usage and [DONE]).
  expect(modelChunksAtFirstText).toBeDefined();
  expect(modelChunksAtFirstText!).toBeLessThan(21);
  // Found from the worker's identity, not a heartbeat: the call had sent none when its first
  // event reached us (a short call sends none at all — src/activities/heartbeat.ts).
  expect(heartbeatsAtFirstEvent).toBe(0);

  // Nothing per token entered the session's history.
  // (Payloads print as base64: decode each to read what it holds.)
  const hist = JSON.stringify(await h.client.client.workflow.getHandle(await q.sessionId).fetchHistory()).replace(
    /"data":"([A-Za-z0-9+/=]+)"/g,
    (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'),
  );
  for (const marker of ['text_delta', 'stream_event', 'content_block', 'message_start']) expect(hist).not.toContain(marker);
  // The model worker's identity names its live server (`… live=http://…/live/<secret>/`), no stream of it.
  const base = / live=(http:\/\/[^"]+\/live\/[A-Za-z0-9_-]{22}\/)"/.exec(hist)?.[1];
  expect(base).toBeDefined();
  const { runId } = await h.client.client.workflow.getHandle(await q.sessionId).describe();
  expect(hist).not.toContain(`${base}${runId}`);
  expect(hist).toContain('w19'); // (the reply itself is there, once per call, as the activity result)
});

test('calls shorter than a look for them still reach the reader whole, each before its reply, once', async () => {
  // Four calls that stream no slower than the model server can send: each is over before the
  // reader's next look at the session's pending activities (every 100 ms), so each is found
  // after its reply arrives, from the session's history, and read from the kept stream.
  const calls = 4;
  const handle = await h.start(
    {
      name: 'live-short',
      turns: [
        ...Array.from({ length: calls - 1 }, (_, i) =>
          turn.tools([{ name: 'Glob', arguments: { pattern: `*${i}` } }], { text: `step${i}` }),
        ),
        turn.text('short one'),
      ],
    },
    {},
  );
  const messages: QueryMessage[] = [];
  // A slow look, so no call can be found while it runs: what arrives comes from the history.
  for await (const m of handle.messages({ includePartialMessages: true, livePollMs: 60_000, idlePollMs: 60_000, pollMs: 20 })) {
    messages.push(m);
  }
  h.model.assertConsumed('live-short');
  const found = streamsBeforeReplies(messages);
  expect(found).toHaveLength(calls);
  for (const { reply, events } of found) {
    expect(events[0]).toMatchObject({ type: 'message_start', message: { id: reply.message.id } });
    expect(events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
    expect(deltas(events)).toBe(textOf(reply));
  }
  expect(deltas(found.at(-1)!.events)).toBe('short one');

  // A reader that comes while the worker still keeps the streams (60 s) reads them the same way.
  const late: QueryMessage[] = [];
  for await (const m of handle.messages({ includePartialMessages: true, livePollMs: 60_000, idlePollMs: 60_000 })) late.push(m);
  expect(streamsBeforeReplies(late).map(({ events }) => deltas(events))).toEqual(found.map(({ events }) => deltas(events)));
});

test('a stream cut mid-reply is retried: the restart is announced and no text reaches the client twice', async () => {
  const text = words(16, 'r');
  // The first attempt sends the role chunk and five words, then the connection drops; the retry
  // waits 4 s (a window wide enough for a reader on a loaded machine), so the client finds the cut
  // attempt while it runs or while its stream is kept.
  const handle = await h.start(
    { name: 'live-retry', turns: [turn.text(text, { chunk_delay_ms: 50, faults: [{ drop_after_chunks: 6 }] })] },
    { retry: { maxAttempts: 3, initialIntervalMs: 4_000, maximumIntervalMs: 4_000 } },
  );
  const messages: QueryMessage[] = [];
  for await (const m of handle.messages({ includePartialMessages: true, pollMs: 50 })) messages.push(m);
  expect(h.model.requests.filter((r) => r.scenario === 'live-retry').map((r) => r.attempt)).toEqual([1, 2]);

  const replies = messages.filter((m): m is AssistantMessage => m.type === 'assistant');
  expect(replies).toHaveLength(1);
  expect(textOf(replies[0]!)).toBe(text);
  const events = messages.filter(isStream).map((m) => m.event);
  const starts = events.flatMap((e, i) => (e.type === 'message_start' ? [i] : []));
  expect(starts).toHaveLength(2); // the restart is announced by the retry's own message_start
  const cut = deltas(events.slice(starts[0], starts[1]));
  expect(cut).toBe('r0 r1 r2 r3 r4 ');
  expect(events.slice(starts[0], starts[1]).some((e) => e.type === 'message_stop')).toBe(false);
  // A consumer that starts over at each message_start shows exactly the final text.
  expect(deltas(events.slice(starts[1]))).toBe(text);
  // The retry notice comes between the cut attempt and the retried one.
  const order = messages.map((m) => (isStream(m) ? m.event.type : m.type === 'system' ? m.subtype : m.type));
  const retryAt = order.indexOf('api_retry');
  expect(retryAt).toBeGreaterThan(order.indexOf('message_start'));
  expect(retryAt).toBeLessThan(order.lastIndexOf('message_start'));
});

test('a live stream is served only to whoever presents its path under the worker secret: there is no listing and a guess finds nothing', async () => {
  const hub = new LiveHub();
  const server = await startLiveServer(hub);
  try {
    const stream = hub.open()!;
    stream.publish({ type: 'start', afterSeq: 3 });
    stream.end('completed');
    const read = async (url: string) => {
      const frames: unknown[] = [];
      await readLiveStream(url, new AbortController().signal, (f) => frames.push(f));
      return frames;
    };
    expect(await read(stream.url)).toEqual([
      { type: 'start', afterSeq: 3 },
      { type: 'end', status: 'completed' },
    ]);
    expect(stream.url).toMatch(/\/live\/[A-Za-z0-9_-]{22}\/[A-Za-z0-9_-]{22}$/);
    // An attempt's stream: under the worker's secret, at the path a client builds from `describe`.
    const call = hub.open({ runId: 'run-1', activityId: '7', attempt: 2 })!;
    call.publish({ type: 'start', afterSeq: 9 });
    expect(call.url).toBe(`${hub.streamsUrl}run-1/7/2`);
    const pending = {
      activityType: { name: 'callModel' },
      activityId: '7',
      attempt: 2,
      state: proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
      lastWorkerIdentity: `123@host live=${hub.streamsUrl}`,
    };
    expect(liveUrlFromIdentity('run-1', pending)).toBe(call.url);
    // While the retry waits, the attempt that was cut.
    const waiting = { ...pending, attempt: 3, state: proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED };
    expect(liveUrlFromIdentity('run-1', waiting)).toBe(call.url);
    expect(liveUrlFromIdentity('run-1', { ...pending, activityType: { name: 'runTool' } })).toBeUndefined();
    expect(liveUrlFromIdentity('run-1', { ...pending, lastWorkerIdentity: '123@host' })).toBeUndefined();
    const ac = new AbortController();
    const got: unknown[] = [];
    const reading = readLiveStream(call.url, ac.signal, (f) => {
      got.push(f);
      ac.abort();
    });
    await reading;
    expect(got).toEqual([{ type: 'start', afterSeq: 9 }]);
    // The same path under another secret is nothing.
    await expect(read(call.url.replace(/\/live\/[^/]+\//, `/live/${'A'.repeat(22)}/`))).rejects.toBeInstanceOf(LiveStreamGone);
    await expect(read(`${server.url}/live/${'A'.repeat(22)}`)).rejects.toBeInstanceOf(LiveStreamGone);
    await expect(read(`${server.url}/live/`)).rejects.toBeInstanceOf(LiveStreamGone);
    await expect(read(`${server.url}/`)).rejects.toBeInstanceOf(LiveStreamGone);
  } finally {
    await server.close();
  }
});
