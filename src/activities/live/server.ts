/**
 * The live server a model worker runs (ARCHITECTURE.md#live-tokens): `GET /live/<secret>/<key>`
 * answers with the stream's frames as server-sent events (`data: <json>`), replayed from its first
 * frame, and closes after the `end` frame. There is no listing: a client learns the secret only
 * from `describe` of a session this worker served.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { LiveHub } from './hub';

export interface LiveServerOptions {
  /** Interface to listen on (default 127.0.0.1: a client on another host needs `host` and `advertiseUrl`). */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The base URL clients are told (default `http://<host>:<port>`), e.g. behind NAT or a proxy. */
  advertiseUrl?: string;
}

export interface LiveServer {
  /** The advertised base URL (`…/live/` is appended for streams). */
  url: string;
  close(): Promise<void>;
}

/** `<secret>/<run>/<activity>/<attempt>` (each part URI-encoded) or `<secret>/<one-off token>`. */
const TOKEN = /^\/live\/([A-Za-z0-9_-]{16,64}(?:\/[A-Za-z0-9_.~%!'()*-]{1,256}){1,3})$/;

export async function startLiveServer(hub: LiveHub, opts: LiveServerOptions = {}): Promise<LiveServer> {
  const server: Server = createServer((req, res) => {
    const m = req.method === 'GET' ? TOKEN.exec((req.url ?? '').split('?')[0]!) : null;
    const unsubscribe = m
      ? hub.subscribe(m[1]!, (frame, last) => {
          if (res.writableEnded || res.destroyed) return;
          if (!res.headersSent) writeHead();
          res.write(`data: ${frame}\n\n`);
          if (last) res.end();
        })
      : undefined;
    function writeHead() {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.flushHeaders();
    }
    if (!unsubscribe) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such live stream (finished long ago, or never existed)\n');
      return;
    }
    if (!res.headersSent) writeHead();
    res.on('close', unsubscribe);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') && host !== '::' ? `[${host}]` : host === '0.0.0.0' || host === '::' ? hostname() : host;
  const url = (opts.advertiseUrl ?? `http://${shown}:${port}`).replace(/\/+$/, '');
  hub.baseUrl = `${url}/live/`;
  return {
    url,
    close: async () => {
      hub.baseUrl = undefined;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The live server's settings from the worker's environment: `DURABLE_AGENT_LIVE_LISTEN`
 * (`host:port`, `port`, or `off`; default `127.0.0.1:0`) and `DURABLE_AGENT_LIVE_URL` (the base
 * URL clients are told). Undefined when turned off.
 */
export function liveServerOptionsFromEnv(env: Record<string, string | undefined>): LiveServerOptions | undefined {
  const listen = env.DURABLE_AGENT_LIVE_LISTEN?.trim();
  if (listen === 'off') return undefined;
  const opts: LiveServerOptions = env.DURABLE_AGENT_LIVE_URL ? { advertiseUrl: env.DURABLE_AGENT_LIVE_URL } : {};
  if (!listen) return opts;
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65_535) {
    throw new Error(`DURABLE_AGENT_LIVE_LISTEN: expected host:port, port or off, got '${listen}'`);
  }
  return { ...opts, port, ...(m[1] ? { host: m[1].replace(/^\[|\]$/g, '') } : {}) };
}
