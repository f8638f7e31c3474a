/**
 * Closing a connection while one of its calls waits to be retried (src/server/connection.ts).
 * Nothing listens at the address, so a call fails with UNAVAILABLE and the SDK's retry
 * interceptor waits before trying again; the connection is closed meanwhile. With the SDK's own
 * connection the retry's timer then throws "Channel has been shut down", an uncaught exception
 * that ends the process (it failed a whole test file in CI). Ours ends the call with CANCELLED.
 * Each case runs in a process of its own (test/helpers/close-during-retry.ts).
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

jest.setTimeout(60_000);

/** A port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function closeDuringRetry(
  kind: 'guarded' | 'plain' | 'after-close',
): Promise<{ settled: string; uncaught: string[]; attempts: number }> {
  const script = path.join(__dirname, '..', 'helpers', 'close-during-retry.ts');
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', script, `127.0.0.1:${await closedPort()}`, kind], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`close-during-retry ${kind} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { settled: string; uncaught: string[]; attempts: number };
}

test('a connection closed while a call waits to be retried ends that call, and nothing is thrown from a timer', async () => {
  // The second attempt is the retry, made after the close: the guard ends it.
  expect(await closeDuringRetry('guarded')).toEqual({
    settled: 'rejected: 1 CANCELLED: the connection was closed',
    uncaught: [],
    attempts: 2,
  });
});

test("the SDK's own connection, closed the same way, throws from the retry timer (what the guard is for)", async () => {
  expect(await closeDuringRetry('plain')).toEqual({ settled: 'pending', uncaught: ['Channel has been shut down'], attempts: 2 });
});

test('a call made after the close is refused the same way, and nothing is thrown from the retry interceptor', async () => {
  // Without the guard before the retry interceptor: uncaught "savedMessageNext is not a function"
  // (a status with no reply on a first attempt), and the call never settles.
  // No attempt reaches the retry interceptor's inside at all.
  expect(await closeDuringRetry('after-close')).toEqual({
    settled: 'rejected: 1 CANCELLED: the connection was closed',
    uncaught: [],
    attempts: 0,
  });
});
