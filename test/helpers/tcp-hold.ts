/**
 * A TCP proxy in front of the Temporal server whose client-to-server direction can be held:
 * a worker behind it still receives tasks (its long polls are already at the server), but
 * nothing it sends afterwards — heartbeats, completions — arrives. It makes "the worker died
 * before its heartbeat reached the server" a state the test sets, not a race it hopes to win.
 */
import net from 'node:net';

export interface HoldingProxy {
  /** host:port to give a worker as TEMPORAL_ADDRESS. */
  readonly address: string;
  /** Bytes passed client → server so far. */
  readonly upstreamBytes: number;
  /** From now on, keep (never forward) what clients send. */
  hold(): void;
  /** Bytes held back since hold(). */
  readonly heldBytes: number;
  /** Drop every connection (held bytes are lost) and stop listening. */
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  let held = false;
  let upstreamBytes = 0;
  let heldBytes = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined); // the other side is torn down with it
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.on('data', (buf: Buffer) => client.write(buf));
    client.on('data', (buf: Buffer) => {
      if (held) {
        heldBytes += buf.length;
        return;
      }
      upstreamBytes += buf.length;
      upstream.write(buf);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${own}`,
    get upstreamBytes() {
      return upstreamBytes;
    },
    get heldBytes() {
      return heldBytes;
    },
    hold() {
      held = true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
