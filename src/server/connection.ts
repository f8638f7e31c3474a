/**
 * Temporal client connections that can be closed safely. `@temporalio/client`'s gRPC retry
 * interceptor schedules each retry with a timer that `Connection.close()` does not clear; when
 * such a timer fires after the close, grpc-js throws "Channel has been shut down" from inside the
 * timer — an uncaught exception that kills the process (a CLI command, a test file). Our
 * connections put a guard after the retry interceptor: once the connection is closed, a retry
 * ends with status CANCELLED ("the connection was closed") instead of reaching the channel.
 * A call *started* after the close is ended by a second guard before the retry interceptor: that
 * interceptor cannot take a status that comes with no reply on a first attempt (it throws
 * "savedMessageNext is not a function" from the status callback, again uncaught).
 */
import * as grpc from '@grpc/grpc-js';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

/** What `InterceptingCall` wraps (grpc-js does not export the interface by name). */
type NextCall = ConstructorParameters<typeof grpc.InterceptingCall>[0];

/** A call that never reaches the network: it ends with CANCELLED as soon as it starts. */
function closedCall(): NextCall {
  return {
    start(_metadata, listener) {
      setImmediate(() =>
        listener?.onReceiveStatus?.({ code: grpc.status.CANCELLED, details: 'the connection was closed', metadata: new grpc.Metadata() }),
      );
    },
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    cancelWithStatus() {},
    getPeer: () => '',
    getAuthContext: () => null,
  };
}

/** `Connection.connect` with the default retries, made safe to close while a retry waits. */
export async function connectTemporal(options: ConnectionOptions = {}): Promise<Connection> {
  const g = guarded(options);
  return g.seal(await Connection.connect(g.options));
}

/** `Connection.lazy` (connects at the first call), made safe the same way. */
export function lazyTemporalConnection(options: ConnectionOptions = {}): Connection {
  const g = guarded(options);
  return g.seal(Connection.lazy(g.options));
}

/** The options with the guard on both sides of the retry interceptor, and `seal`, which arms it on close. */
function guarded(options: ConnectionOptions): { options: ConnectionOptions; seal(connection: Connection): Connection } {
  let closed = false;
  const guard: grpc.Interceptor = (opts, nextCall) => new grpc.InterceptingCall(closed ? closedCall() : nextCall(opts));
  const retries = options.interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())];
  return {
    // Outside the retries: a call started after the close never reaches them. Inside: a retry
    // scheduled before the close and fired after it never reaches the channel.
    options: { ...options, interceptors: [guard, ...retries, guard] },
    seal(connection) {
      const close = connection.close.bind(connection);
      connection.close = () => {
        closed = true;
        return close();
      };
      return connection;
    },
  };
}
