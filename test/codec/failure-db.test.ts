/**
 * Failures encrypted at rest, checked where it matters: the dev server's SQLite file itself.
 * With the payload codec on, a provider error's message (and the stack trace around it) is moved
 * into an encrypted payload by the failure converter (src/codec/failure-converter.ts); a plaintext
 * search of the database file (and its write-ahead log) finds the session id, which is stored in
 * the clear, and not the error text.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPayloadCodecs, type EncryptionKey } from '../../src/codec';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';
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
