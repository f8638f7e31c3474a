/**
 * For test/client/connection-close.test.ts, in a process of its own (an uncaught exception must
 * reach a real process, not jest's): a lazy connection to argv[2], where nothing listens, with our
 * guard (`guarded`) or the SDK's plain one (`plain`). Its first call fails with UNAVAILABLE and
 * waits for its retry; the connection is closed during that wait. `after-close`: ours, closed
 * before the call is made.
 * Prints one JSON line: how the call settled and what escaped as uncaught exceptions.
 * Run with `node --require tsx/cjs`.
 */
import { Connection } from '@temporalio/client';
import { lazyTemporalConnection } from '../../src/client/connection';

async function main(): Promise<void> {
  const [address, kind] = process.argv.slice(2);
  if (!address || (kind !== 'guarded' && kind !== 'plain' && kind !== 'after-close')) {
    throw new Error('usage: close-during-retry ADDRESS guarded|plain|after-close');
  }
  const uncaught: string[] = [];
  process.on('uncaughtException', (e) => uncaught.push(e.message));
  // Lazy: no call at connect time, so nothing fails before the one below.
  const connection = kind === 'plain' ? Connection.lazy({ address }) : lazyTemporalConnection({ address });
  if (kind === 'after-close') await connection.close();
  const call = connection.workflowService.getSystemInfo({}).then(
    () => 'answered',
    (e: Error) => `rejected: ${e.message}`,
  );
  if (kind !== 'after-close') {
    // The first attempt is refused at once; the retry waits ≥ 100 ms.
    await new Promise((r) => setTimeout(r, 50));
    await connection.close();
  }
  const settled = await Promise.race([call, new Promise<string>((r) => setTimeout(() => r('pending'), 3_000))]);
  // Long enough for the retry timers of the first attempts to fire.
  await new Promise((r) => setTimeout(r, 1_000));
  console.log(JSON.stringify({ settled, uncaught }));
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
