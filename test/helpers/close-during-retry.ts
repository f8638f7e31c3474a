/**
 * For test/client/connection-close.test.ts, in a process of its own (an uncaught exception must
 * reach a real process, not jest's): a lazy connection to argv[2], where nothing listens, with our
 * guard (`guarded`) or the SDK's plain one (`plain`). Its first call fails with UNAVAILABLE and
 * waits for its retry; the connection is closed during that wait. `after-close`: ours, closed
 * before the call is made.
 *
 * Nothing here waits on time: an observer inside the retry interceptor reports each attempt, so
 * the close comes right after the first attempt's status has reached the retry interceptor (its
 * retry timer is then set), and the process reports once the outcome is in — the call settled
 * (ours) or the retry timer threw (the SDK's). Timeouts are only backstops for a hang.
 * Prints one JSON line: how the call settled, what escaped as uncaught exceptions, and how many
 * attempts reached the observer.
 * Run with `node --require tsx/cjs`.
 */
import * as grpc from '@grpc/grpc-js';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { lazyTemporalConnection } from '../../src/server/connection';

const BACKSTOP_MS = 20_000;

function within<T>(p: Promise<T>, otherwise: T): Promise<T> {
  return Promise.race([p, new Promise<T>((r) => setTimeout(() => r(otherwise), BACKSTOP_MS).unref())]);
}

async function main(): Promise<void> {
  const [address, kind] = process.argv.slice(2);
  if (!address || (kind !== 'guarded' && kind !== 'plain' && kind !== 'after-close')) {
    throw new Error('usage: close-during-retry ADDRESS guarded|plain|after-close');
  }
  const uncaught: string[] = [];
  let threw: () => void = () => undefined;
  const uncaughtSeen = new Promise<void>((r) => (threw = r));
  process.on('uncaughtException', (e) => {
    uncaught.push(e.message);
    threw();
  });

  // Sits just inside the retry interceptor: sees every attempt it makes, and each attempt's status
  // after the retry interceptor has taken it (and set its retry timer).
  let attempts = 0;
  let firstStatus: () => void = () => undefined;
  const firstAttemptFailed = new Promise<void>((r) => (firstStatus = r));
  const observer: grpc.Interceptor = (opts, nextCall) => {
    attempts++;
    const requester = new grpc.RequesterBuilder()
      .withStart((metadata, listener, next) =>
        next(
          metadata,
          new grpc.ListenerBuilder()
            .withOnReceiveStatus((status, nextStatus) => {
              nextStatus(status);
              firstStatus();
            })
            .build(),
        ),
      )
      .build();
    return new grpc.InterceptingCall(nextCall(opts), requester);
  };
  const interceptors = [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), observer];
  // Lazy: no call at connect time, so nothing fails before the one below.
  const connection = kind === 'plain' ? Connection.lazy({ address, interceptors }) : lazyTemporalConnection({ address, interceptors });
  if (kind === 'after-close') await connection.close();

  let settled = 'pending';
  const call = connection.workflowService.getSystemInfo({}).then(
    () => (settled = 'answered'),
    (e: Error) => (settled = `rejected: ${e.message}`),
  );
  if (kind !== 'after-close') {
    // The first attempt was refused and its retry is scheduled: close now, before the retry runs.
    await within(firstAttemptFailed, undefined);
    await connection.close();
  }
  // Ours: the call settles (a retry after the close is refused by the guard). The SDK's: the
  // retry's timer throws, and the call never settles.
  await within<unknown>(kind === 'plain' ? uncaughtSeen : call, undefined);
  // Anything a timer of this turn threw has been reported by now.
  await new Promise((r) => setImmediate(r));
  console.log(JSON.stringify({ settled, uncaught, attempts }));
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
