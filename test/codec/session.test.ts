/**
 * Encryption at rest on a real dev server: sessions run with encryption + compression on, and
 * what the server stores is read back with a client that has no codec. Distinctive markers in the
 * prompt, the tool outputs, the answer and a provider error must not appear in the stored bytes;
 * a control session without the codec shows the same search finds them when they are there.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createPayloadCodecs, EncryptionCodec, type EncryptionKey } from '../../src/codec';
import { turn } from '../../src/testing/scripted-model';
import type { ToolResultBlock } from '../../src/shared/messages';
import { latestSessionIn } from '../../src/sdk/catalog';
import { cli, cliEnv } from '../cli/helpers';
import { useHarness, type Harness } from '../helpers/harness';

const RUN = Date.now().toString(36);
const KEY: EncryptionKey = { id: `test-${RUN}`, key: randomBytes(32) };
const KEYS_ENV = `${KEY.id}:${Buffer.from(KEY.key).toString('base64')}`;

const enc = useHarness({ payloadCodecs: createPayloadCodecs({ keys: { current: KEY }, compress: true }) });
const plain = useHarness();
/** Sees the server's bytes as stored: no codec. */
const raw = () => enc.connectClient({ payloadCodecs: [] });

const History = temporal.api.history.v1.History;

/** Every event of a workflow's runs so far, as the server stores them. */
async function storedHistory(workflowId: string): Promise<temporal.api.history.v1.IHistory> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  const client = await raw();
  do {
    const page = await client.client.workflowService.getWorkflowExecutionHistory({
      namespace: client.namespace,
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events };
}

/**
 * The stored history as searchable text: its protobuf bytes (payload data verbatim) and its
 * proto3 JSON (which would show payload data only as base64 — searched decoded, too).
 */
function searchable(history: temporal.api.history.v1.IHistory): string {
  const bytes = Buffer.from(History.encode(history).finish()).toString('latin1');
  const json = JSON.stringify(History.fromObject(history).toJSON(), (_k, v: unknown) =>
    typeof v === 'string' && /^[A-Za-z0-9+/]{16,}={0,2}$/.test(v) ? `${v} ${Buffer.from(v, 'base64').toString('latin1')}` : v,
  );
  return `${bytes}\n${json}`;
}

/** Every Payload in the history except search attributes (indexed by the server, never encoded). */
function payloadsOf(history: temporal.api.history.v1.IHistory): { path: string; payload: Payload }[] {
  const found: { path: string; payload: Payload }[] = [];
  const walk = (v: unknown, at: string): void => {
    if (!v || typeof v !== 'object' || v instanceof Uint8Array) return;
    if (at.endsWith('.searchAttributes')) return;
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && Object.values(o.metadata).every((x) => x instanceof Uint8Array)) {
      found.push({ path: at, payload: o as Payload });
      return;
    }
    for (const [k, x] of Object.entries(o)) walk(x, `${at}.${k}`);
  };
  (history.events ?? []).forEach((e, i) => walk(e, `events[${i}]`));
  return found;
}

const metaOf = (p: Payload, k: string) => (p.metadata?.[k] ? Buffer.from(p.metadata[k]).toString('utf8') : undefined);

/** A session that reads a >1 KiB file (compressed), runs Bash and answers, each with its own marker. */
async function markedSession(h: Harness, tag: string) {
  const m = {
    prompt: `PROMPT-${tag}-${RUN}`,
    file: `READOUT-${tag}-${RUN}`,
    bash: `BASHOUT-${tag}-${RUN}`,
    answer: `ANSWER-${tag}-${RUN}`,
  };
  const ws = h.workspace();
  writeFileSync(path.join(ws, 'notes.txt'), Array.from({ length: 60 }, (_, i) => `${i}: ${m.file} lorem ipsum dolor sit amet`).join('\n'));
  writeFileSync(path.join(ws, 'small.txt'), `${m.bash}\n`);
  const run = await h.run(
    {
      name: `marked-${tag}`,
      turns: [
        turn.tools([
          { id: 'r1', name: 'Read', arguments: { file_path: path.join(ws, 'notes.txt') } },
          { id: 'b1', name: 'Bash', arguments: { command: 'cat small.txt' } },
        ]),
        turn.text(`Done: ${m.answer}`),
      ],
    },
    { cwd: ws, prompt: `Summarize the notes. ${m.prompt}` },
  );
  return { ...run, markers: m };
}

test('control: without the codec, the same search finds every marker in the stored history', async () => {
  const { result, handle, markers } = await markedSession(plain, 'plain');
  expect(result.subtype).toBe('success');
  const text = searchable(await storedHistory(handle.sessionId));
  for (const marker of Object.values(markers)) expect(text).toContain(marker);
});

test('with encryption + compression: the session runs its tools, and the server stores only ciphertext', async () => {
  const { result, handle, messages, markers } = await markedSession(enc, 'enc');
  expect(result).toMatchObject({ subtype: 'success', num_turns: 2, result: `Done: ${markers.answer}` });
  // The model activity read its prompt (with both tool outputs) through the activity-context
  // client's `prompt` query — whose answers are encrypted (see below) — so that client decodes.
  const second = enc.requestsOf('marked-enc')[1]!.body.messages;
  expect(JSON.stringify(second)).toContain(markers.file);
  expect(JSON.stringify(second)).toContain(markers.bash);
  const toolResults = messages.flatMap((m) => (m.type === 'user' && Array.isArray(m.message.content) ? m.message.content : []));
  expect((toolResults as ToolResultBlock[]).map((b) => b.tool_use_id)).toEqual(['r1', 'b1']);

  const history = await storedHistory(handle.sessionId);
  const text = searchable(history);
  for (const marker of Object.values(markers)) expect(text).not.toContain(marker);

  const payloads = payloadsOf(history);
  expect(payloads.length).toBeGreaterThan(10);
  // Patch markers (`patched()`) carry only a patch id from our code, and the SDK records them without
  // the payload codec: no session content can be there.
  const unencrypted = payloads
    .filter((p) => metaOf(p.payload, 'encryption-key-id') !== KEY.id && !/markerRecordedEventAttributes\.details\.patch-data/.test(p.path))
    .map((p) => p.path);
  expect(unencrypted).toEqual([]);
  // Compression ran before encryption: some payloads are compressed inside their envelope.
  const inner = await new EncryptionCodec({ current: KEY }).decode(payloads.map((p) => p.payload));
  expect(inner.filter((p) => metaOf(p, 'compression') === 'brotli').length).toBeGreaterThan(0);
});

test('a client with the codec reads the transcript; one without it cannot (query answers are encrypted too)', async () => {
  const { handle, markers } = await markedSession(enc, 'read');
  const transcript = await (await enc.client.get(handle.sessionId)).transcript();
  expect(JSON.stringify(transcript)).toContain(markers.file);
  expect(JSON.stringify(transcript)).toContain(markers.bash);
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  // Without the codec it fails as soon as it reads anything (the session's memo or its transcript).
  await expect((async () => (await (await raw()).get(handle.sessionId)).transcript())()).rejects.toThrow(/binary\/encrypted/);
});

test("listing with a client that lacks the key still lists every session: the encrypted one's memo is left out, not fatal", async () => {
  const { handle } = await markedSession(enc, 'listed');
  const ws = plain.workspace();
  plain.model.addScenario({ name: 'listed-plain', turns: [turn.text('plain answer')] });
  const mine = await plain.client.start({ model: 'gpt-4.1-mini', cwd: ws, prompt: '[scenario:listed-plain] hi' });
  await mine.result();
  const client = await raw();
  // `continue` looks through every session's memo for its cwd: the encrypted ones cannot be read.
  expect(await latestSessionIn(client, ws)).toBe(mine.sessionId);
  const listed: string[] = [];
  for await (const s of client.list({ limit: 10_000 })) listed.push(`${s.sessionId} ${s.status}`);
  expect(listed).toContain(`${handle.sessionId} completed`);
  expect(listed).toContain(`${mine.sessionId} completed`);
  // The client with the key reads the encrypted memo.
  expect(await latestSessionIn(enc.client, await memoCwd(handle.sessionId))).toBe(handle.sessionId);
});

/** The cwd a session was started in, as the keyed client reads it from the session's memo. */
async function memoCwd(sessionId: string): Promise<string> {
  const d = await enc.client.client.workflow.getHandle(sessionId).describe();
  return String(d.memo?.cwd);
}

test('resume loads the earlier transcript through the activity-context client (loadTranscript)', async () => {
  const id = `enc-resume-${RUN}`;
  enc.model.addScenario({ name: 'enc-resume', turns: [turn.text('first answer'), turn.text('second answer')] });
  const ws = enc.workspace();
  const base = { model: 'gpt-4.1-mini', cwd: ws, permissionMode: 'bypassPermissions' as const };
  await (await enc.client.start({ ...base, sessionId: id, prompt: '[scenario:enc-resume] first question' })).result();
  const again = await enc.client.start({ ...base, resume: id, prompt: 'second question' });
  expect(await again.result()).toMatchObject({ subtype: 'success', result: 'second answer' });
  const sent = enc.requestsOf('enc-resume')[1]!.body.messages.filter((m) => m.role !== 'system');
  expect(sent.map((m) => [m.role, m.content])).toEqual([
    ['user', '[scenario:enc-resume] first question'],
    ['assistant', 'first answer'],
    ['user', 'second question'],
  ]);
});

test("a provider's error message is stored encrypted too (activity failures' message and stack)", async () => {
  const secret = `FAULT-${RUN}`;
  const { result, handle } = await enc.run(
    {
      name: 'enc-fault',
      turns: [turn.text('never', { faults: [{ status: 400, body: { error: { message: `bad prompt near ${secret}` } } }] })],
    },
    {},
  );
  // The workflow still sees the message (decoded on the worker) and reports it in the result.
  expect(result).toMatchObject({ subtype: 'error_during_execution', exit_reason: 'model_error' });
  expect(result.errors![0]).toContain(secret);
  enc.model.reset();
  const history = await storedHistory(handle.sessionId);
  expect(searchable(history)).not.toContain(secret);
  const failed = history.events!.find((e) => e.activityTaskFailedEventAttributes)!.activityTaskFailedEventAttributes!.failure!;
  expect(failed.message).toBe('Encoded failure');
  expect(metaOf(failed.encodedAttributes!, 'encryption-key-id')).toBe(KEY.id);
  expect(failed.applicationFailureInfo?.type).toBe('ModelBadRequest');
});

test('the CLI picks the keys up from DURABLE_AGENT_ENCRYPTION_KEYS; without them it cannot read; with another key the worker names it', async () => {
  const { handle, markers } = await markedSession(enc, 'cli');
  const withKeys = await cli(['show', handle.sessionId, '--json'], {
    env: cliEnv(enc, { DURABLE_AGENT_ENCRYPTION_KEYS: KEYS_ENV, DURABLE_AGENT_COMPRESS: '1' }),
  });
  expect(withKeys.stderr).toBe('');
  expect(withKeys.code).toBe(0);
  expect(withKeys.stdout).toContain(markers.bash);

  const without = await cli(['show', handle.sessionId, '--json'], { env: cliEnv(enc) });
  expect(without.code).toBe(1);
  expect(without.stderr).toMatch(/binary\/encrypted/);

  const otherKey = `other:${randomBytes(32).toString('base64')}`;
  const wrong = await cli(['show', handle.sessionId, '--json'], { env: cliEnv(enc, { DURABLE_AGENT_ENCRYPTION_KEYS: otherKey }) });
  expect(wrong.code).toBe(1);
  // The session's memo, encrypted with the worker's key, is what fails first: the CLI names the key it lacks.
  expect(wrong.stderr).toContain(`payload encrypted with key id '${KEY.id}', which is not configured (known: 'other')`);
});
