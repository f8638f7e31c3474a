/**
 * Encryption turned on in the middle of a session (docs/OPERATIONS.md, encryption): a session
 * started without a codec keeps running when its workers and clients get a key; its history then
 * holds plain and encrypted payloads side by side. A worker without the key cannot replay that
 * history: its workflow tasks fail and the session stalls (nothing lost, nothing run), until a
 * worker with the key returns and the session carries on.
 */
import { randomBytes } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import type { Payload } from '@temporalio/common';
import { createPayloadCodecs, type EncryptionKey } from '../../src/codec';
import * as api from '../../src/shared/api';
import { turn } from '../../src/testing/scripted-model';
import { createWorker, type AgentWorker } from '../../src/worker/worker';
import { useHarness, workflowBundle } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const KEY: EncryptionKey = { id: `mid-${Date.now().toString(36)}`, key: randomBytes(32) };
const keyed = () => createPayloadCodecs({ keys: { current: KEY } })!;

const h = useHarness();

const keyIdOf = (p: Payload | null | undefined) => {
  const v = p?.metadata?.['encryption-key-id'];
  return v ? Buffer.from(v).toString() : undefined;
};

test('a session started without encryption continues encrypted; a worker without the key stalls it until a keyed worker returns', async () => {
  const connection = await NativeConnection.connect({ address: h.address });
  const workers: { worker: AgentWorker; running: Promise<void> }[] = [];
  const startKeyedWorker = async () => {
    const worker = await createWorker({
      connection,
      taskQueue: h.taskQueue,
      workflowBundle: await workflowBundle({ encryptFailures: true }),
      model: { baseURL: h.model.url, apiKey: 'scripted-model' },
      payloadCodecs: keyed(),
      log: () => undefined,
    });
    const entry = { worker, running: worker.run() };
    workers.push(entry);
    return async () => {
      worker.shutdown();
      await entry.running;
    };
  };
  try {
    // 1. No encryption: the harness's worker and client have no codec.
    const plain = await h.start(
      { name: 'enc-mid', turns: [turn.text('answer one'), turn.text('answer two'), turn.text('answer three')] },
      { interactive: true },
    );
    await waitFor('turn one answered', async () => (await plain.state()).status === 'waiting_for_input');

    // 2. Encryption turned on: a keyed worker replaces the plain one, a keyed client sends turn two.
    await h.stopWorker();
    const stopKeyed = await startKeyedWorker();
    const client = await h.connectClient({ payloadCodecs: keyed() });
    const session = await client.get(plain.sessionId);
    await session.send('second question');
    await waitFor('turn two answered', async () => {
      const s = await session.state();
      return s.status === 'waiting_for_input' && s.turnCount === 2;
    });
    const raw = await h.connectClient({ payloadCodecs: [] });
    const stored = async () => (await raw.client.workflow.getHandle(plain.sessionId).fetchHistory()).events ?? [];
    const before = await stored();
    // The history now holds both: the start's input in plain, the update's encrypted with the key.
    expect(keyIdOf(before[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0])).toBeUndefined();
    const update = before.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)!;
    expect(keyIdOf(update.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!.input!.args!.payloads![0])).toBe(KEY.id);

    // 3. A worker without the key: the next message (a signal; an update would wait for it) stalls.
    await stopKeyed();
    await h.startWorker();
    await session.workflow.signal(api.userMessageSignal, { text: 'third question' });
    await waitFor(
      'a failed workflow task on the worker without the key',
      async () => (await stored()).some((e) => e.workflowTaskFailedEventAttributes),
      { timeoutMs: 120_000 },
    );
    // What the worker reports is not about keys: replaying, it cannot decode the encrypted update's
    // input, so the update is not re-accepted and the SDK calls the history nondeterministic.
    const failed = (await stored()).find((e) => e.workflowTaskFailedEventAttributes)!.workflowTaskFailedEventAttributes!;
    expect(failed.failure?.message).toMatch(/Nondeterminism error|binary\/encrypted/);
    // Stalled, not failed: still running, turn three not started, the provider not called for it.
    expect((await raw.client.workflow.getHandle(plain.sessionId).describe()).status.name).toBe('RUNNING');
    expect(h.requestsOf('enc-mid')).toHaveLength(2);

    // 4. A keyed worker returns: the session picks up the third message and answers it.
    await h.stopWorker();
    await startKeyedWorker();
    await waitFor('turn three answered', async () => {
      const s = await session.state();
      return s.status === 'waiting_for_input' && s.turnCount === 3;
    });
    await session.close();
    expect(await session.result()).toMatchObject({ subtype: 'success', result: 'answer three' });
    expect(h.requestsOf('enc-mid')).toHaveLength(3);
    expect(JSON.stringify(h.requestsOf('enc-mid')[2]!.body.messages)).toContain('third question');
  } finally {
    for (const w of workers) {
      w.worker.shutdown();
      await w.running.catch(() => undefined);
    }
    await connection.close();
    // Leave the harness with its own worker running, as the other tests expect.
    await h.startWorker().catch(() => undefined);
  }
});
