/**
 * Failures encrypted at rest, checked where it matters: the dev server's SQLite file itself.
 * With the payload codec on, a provider error's message (and the stack trace around it) is moved
 * into an encrypted payload by the failure converter (src/codec/failure-converter.ts); a plaintext
 * search of the database file (and its write-ahead log) finds the session id, which is stored in
 * the clear, and not the error text. The same for a failure the workflow itself raises (the
 * converter is in the workflow bundle), and a keyed worker refuses a bundle built without it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createPayloadCodecs, type EncryptionKey } from '../../src/codec';
import { WORKFLOW_TYPE } from '../../src/shared/api';
import { createWorker } from '../../src/worker/worker';
import { turn } from '../../src/testing/scripted-model';
import { useHarness, workflowBundle } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

jest.setTimeout(120_000);

const RUN = Date.now().toString(36);
const KEY: EncryptionKey = { id: `db-${RUN}`, key: randomBytes(32) };
const dbFile = path.join(mkdtempSync(path.join(tmpdir(), 'da-faildb-')), 'temporal.db');
const h = useHarness({ payloadCodecs: createPayloadCodecs({ keys: { current: KEY } }) }, { devServer: { dbFile, ui: false } });

/** The database as the server wrote it, main file and WAL, as searchable text. */
const database = () =>
  [dbFile, `${dbFile}-wal`]
    .filter(existsSync)
    .map((f) => readFileSync(f).toString('latin1'))
    .join('\n');

test("a failed model call's message is not in the server's database file", async () => {
  const marker = `SECRET-FAILURE-${RUN}`;
  const { result, handle } = await h.run(
    { name: 'db-fault', turns: [turn.text('never', { faults: [{ status: 400, body: { error: { message: `rejected: ${marker}` } } }] })] },
    {},
  );
  // The session saw the message (decoded on the worker)…
  expect(result).toMatchObject({ exit_reason: 'model_error' });
  expect(result.errors!.join(' ')).toContain(marker);
  // …and the server stored the failure: its session id is in the file once the write is there.
  await waitFor('the session in the database file', () => database().includes(handle.sessionId), { timeoutMs: 60_000 });
  await waitFor(
    'the session to close',
    async () => (await h.client.client.workflow.getHandle(handle.sessionId).describe()).status.name !== 'RUNNING',
  );
  expect(database()).not.toContain(marker);
  expect(database()).not.toContain('ModelBadRequest: rejected');
});

test("a failure the workflow raises (an unknown option's name) is not in the database file either", async () => {
  const marker = `SECRETOPTION${RUN}`;
  const sessionId = `db-invalid-${RUN}`;
  // Past the client's own validation, as another SDK or a hand-made start would be.
  const handle = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: sessionId,
    args: [{ prompt: 'hello', cwd: tmpdir(), [marker]: true }],
  });
  const failure = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  // The keyed client reads the message back…
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause?.message).toBe(`invalid session config: ${marker}: unknown option '${marker}'`);
  // …and the server stored only ciphertext of it.
  expect((await handle.describe()).status.name).toBe('FAILED');
  await waitFor('the failed session in the database file', () => database().includes(sessionId), { timeoutMs: 60_000 });
  expect(database()).not.toContain(marker);
  // The failure's type is stored in the clear, as Temporal needs it: the failure event is there.
  expect(database()).toContain('InvalidConfig');
});

test('a keyed worker refuses a workflow bundle that would store workflow failures in plaintext', async () => {
  const connection = await NativeConnection.connect({ address: h.address });
  try {
    const error = await createWorker({
      connection,
      taskQueue: `${h.taskQueue}-refused`,
      roles: ['workflow'],
      workflowBundle: await workflowBundle({ encryptFailures: false }),
      payloadCodecs: createPayloadCodecs({ keys: { current: KEY } }),
      log: () => undefined,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^payloads are encrypted but the workflow bundle was built without the encrypting failure converter/);
    // The bundle with the converter is accepted.
    const worker = await createWorker({
      connection,
      taskQueue: `${h.taskQueue}-accepted`,
      roles: ['workflow'],
      workflowBundle: await workflowBundle({ encryptFailures: true }),
      payloadCodecs: createPayloadCodecs({ keys: { current: KEY } }),
      log: () => undefined,
    });
    const running = worker.run();
    worker.shutdown();
    await running;
  } finally {
    await connection.close();
  }
});
