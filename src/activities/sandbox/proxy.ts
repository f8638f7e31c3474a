/**
 * The sandbox's way out (docs/ARCHITECTURE.md#bash-sandbox): an HTTP proxy on a Unix socket,
 * bound into a sandbox whose network namespace has nothing but loopback. It forwards CONNECT
 * tunnels and plain `http://` requests, and refuses every destination that is the worker host
 * itself — loopback, any address of any of its interfaces, link-local and cloud metadata
 * addresses — unless the session's `allowedDomains` names that host with its port; with an
 * allowlist, it refuses every host the list does not name.
 *
 * The name is resolved here, checked, and the connection made to the checked address, so a name
 * that resolves differently a moment later (DNS rebinding) cannot slip past the check.
 */
import { promises as dns } from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { matchAllowedDomain, normalizeHost, type AllowedDomain } from '../../shared/sandbox';

export interface ProxyPolicy {
  /** undefined: any outside host ('on'); otherwise only these. */
  allowed?: readonly AllowedDomain[];
}

type Verdict = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', 'fd00:ec2::23']);

/**
 * An IPv4-mapped IPv6 address as the IPv4 address it reaches, in any spelling (`::ffff:127.0.0.1`,
 * `::ffff:7f00:1` — the form a URL normalizes it to); other addresses unchanged (lower case).
 */
function unmap(address: string): string {
  const a = address.toLowerCase();
  if (!net.isIPv6(a)) return a;
  const groups = expandV6(a).split(':');
  if (groups.slice(0, 5).every((g) => g === '0000') && groups[5] === 'ffff') {
    const hi = parseInt(groups[6]!, 16);
    const lo = parseInt(groups[7]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a;
}

/**
 * Whether `address` is the worker host itself or a link-local/metadata service next to it: every
 * address of every interface is read at each call, so an address added after start-up counts.
 */
function isHostAddress(address: string, interfaces = os.networkInterfaces()): boolean {
  const a = unmap(address);
  if (net.isIPv4(a)) {
    const [x, y] = a.split('.').map(Number) as [number, number];
    // 0/8 reaches the host itself on Linux; 127/8 is loopback; 169.254/16 link-local (metadata).
    if (x === 0 || x === 127 || (x === 169 && y === 254)) return true;
  } else if (net.isIPv6(a)) {
    const full = expandV6(a);
    if (full === expandV6('::') || full === expandV6('::1')) return true;
    // fe80::/10, link-local.
    if (/^fe[89ab]/.test(full)) return true;
  } else {
    return true;
  }
  if (METADATA.has(a)) return true;
  for (const list of Object.values(interfaces)) {
    for (const i of list ?? []) {
      const own = unmap(i.address.replace(/%.*$/, ''));
      if (own === a || (net.isIPv6(a) && net.isIPv6(own) && expandV6(own) === expandV6(a))) return true;
    }
  }
  return false;
}

function expandV6(a: string): string {
  const [head = '', tail] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // An embedded IPv4 tail takes two groups.
  const fix = (g: string[]) =>
    g.flatMap((x) => {
      if (!x.includes('.')) return [x];
      const [p, q, r, s] = x.split('.').map(Number) as [number, number, number, number];
      return [((p << 8) | q).toString(16), ((r << 8) | s).toString(16)];
    });
  const hh = fix(h);
  const tt = fix(t);
  const mid = tail === undefined ? [] : Array(8 - hh.length - tt.length).fill('0');
  return [...hh, ...mid, ...tt].map((x) => x.padStart(4, '0')).join(':');
}

/** Whether `host:port` may be reached under `policy`, and at which address (one DNS lookup). */
async function decide(host: string, port: number, policy: ProxyPolicy): Promise<Verdict> {
  const h = normalizeHost(host);
  if (!h || !(port >= 1 && port <= 65535)) return { ok: false, reason: `bad destination '${host}:${port}'` };
  const entry = policy.allowed ? matchAllowedDomain(h, port, policy.allowed) : undefined;
  if (policy.allowed && !entry) return { ok: false, reason: `${h}:${port} is not in the session's sandbox.network.allowedDomains` };
  let addresses: { address: string; family: number }[];
  if (net.isIP(h)) addresses = [{ address: h, family: net.isIP(h) }];
  else {
    try {
      addresses = await dns.lookup(h, { all: true, verbatim: true });
    } catch (e) {
      return { ok: false, reason: `cannot resolve ${h}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${h}` };
  // Every address is checked, not only the one used: a name that mixes an outside address with a
  // host one is refused as a whole, so no retry or happy-eyeballs path can land on the host.
  const own = addresses.find((a) => isHostAddress(a.address));
  if (own && entry?.port === undefined) {
    return {
      ok: false,
      reason:
        `${h}:${port} is the worker host itself or a link-local/metadata address (${own.address}); the sandbox reaches none ` +
        `of them unless sandbox.network.allowedDomains names it with its port (e.g. '${h.includes(':') ? `[${h}]` : h}:${port}')`,
    };
  }
  const first = addresses[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}

export interface NetworkProxy {
  /** The Unix socket it listens on. */
  socketPath: string;
  close(): Promise<void>;
}

function refuse(reason: string): string {
  const body = `durable-agent sandbox: ${reason}\n`;
  return (
    `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-durable-agent-sandbox: refused\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** `host:port` of a CONNECT request (`[::1]:443` too), or undefined. */
function authority(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

/** Listen on `socketPath` (created; an old file there is replaced by the caller). */
export async function startNetworkProxy(socketPath: string, policy: ProxyPolicy): Promise<NetworkProxy> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };

  const server = http.createServer((req, res) => {
    // A plain-HTTP request through a proxy has an absolute URL; anything else is not for us.
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' }).end('durable-agent sandbox: expected a proxy request\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    void decide(url.hostname, port, policy).then((v) => {
      if (!v.ok) {
        res.writeHead(403, { 'content-type': 'text/plain', 'x-durable-agent-sandbox': 'refused', connection: 'close' });
        res.end(`durable-agent sandbox: ${v.reason}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      const upstream = http.request(
        { host: v.address, family: v.family, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' });
        res.end(`durable-agent sandbox: ${e.message}\n`);
      });
      req.pipe(upstream);
    });
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    const dest = authority(req.url ?? '');
    if (!dest) {
      client.end(refuse(`bad CONNECT target '${req.url}'`));
      return;
    }
    void decide(dest.host, dest.port, policy).then((v) => {
      if (!v.ok) {
        client.end(refuse(v.reason));
        return;
      }
      const upstream = net.connect({ host: v.address, port: dest.port, family: v.family });
      track(upstream);
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.once('error', (e) => {
        const body = `durable-agent sandbox: ${e.message}\n`;
        if (!client.writableEnded)
          client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      });
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  });
  server.on('connection', track);
  server.on('clientError', (_e, s) => s.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A worker that is done must not be kept alive by its proxy.
  server.unref();
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
