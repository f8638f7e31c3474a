/**
 * `durable-agent ui`: the dashboard's HTTP server (ARCHITECTURE.md#dashboard). Plain node:http, a
 * JSON API over our client, server-sent events for everything live, and the static page under
 * ./assets. Safe by default: it binds to 127.0.0.1 and checks the Host header (no DNS rebinding);
 * bound elsewhere it needs a token on every request; every action is a POST carrying the page's
 * CSRF token *and* the action token, which no GET hands out (a command on this host that can fetch
 * the page still cannot act); the page renders transcript content as text only and its CSP forbids
 * inline script.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { SessionNotFoundError, type DurableAgentClient, type SessionHandle } from '../client/client';
import { BatchConflictError } from '../client/batch';
import { CSV_COLUMNS, csvField } from '../client/batch-rows';
import type { PermissionAnswer } from '../shared/approvals';
import { annotate, BadRequest, DashboardData, type SessionFilter } from './data';

export interface DashboardOptions {
  client: DurableAgentClient;
  host?: string;
  /** 0: any free port. Default 8234. */
  port?: number;
  /** Required on every request (cookie, `Authorization: Bearer`, or `?token=` once); required when `host` is not loopback. */
  token?: string;
  /**
   * Required on every action (POST), however the page was reached: the cookie the returned `url`
   * sets when opened, or `Authorization: Bearer`. Default: `token` when given, else a random one per
   * start. `durable-agent ui` keeps one in ~/.config/durable-agent/ui-token (ARCHITECTURE.md#dashboard).
   */
  actionToken?: string;
  /** The Temporal Web UI's base URL, for links to workflows (default http://localhost:8233). */
  temporalUiUrl?: string;
  /** How often live lists re-read visibility (ms; default 1,000). */
  pollMs?: number;
}

export interface Dashboard {
  /** Opening it signs the browser in for actions (it carries the action token). */
  url: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const MAX_BODY = 64 * 1024;
const ASSETS: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The page's files: beside this module in src/ (a checkout) and in dist/ (scripts/build.mjs copies them). */
const assetDir = path.join(__dirname, 'assets');

export class DashboardConfigError extends Error {}

/** Refuse to serve beyond this machine without a token. */
export function checkBind(host: string, token: string | undefined): void {
  if (!LOOPBACK.has(host) && !token) {
    throw new DashboardConfigError(`--host ${host}: binding beyond this machine needs --token (or DURABLE_AGENT_UI_TOKEN)`);
  }
}

export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token || undefined;
  checkBind(host, token);
  const actionToken = token ?? (opts.actionToken || randomBytes(24).toString('base64url'));
  const data = new DashboardData(opts.client);
  const csrf = randomBytes(24).toString('base64url');
  const pollMs = opts.pollMs ?? 1_000;
  const temporalUi = (opts.temporalUiUrl ?? 'http://localhost:8233').replace(/\/+$/, '');
  const index = readFileSync(path.join(assetDir, 'index.html'), 'utf8').replace('__CSRF__', csrf);
  const assets = Object.fromEntries(Object.keys(ASSETS).map((f) => [f, readFileSync(path.join(assetDir, f))]));
  const streams = new Set<ServerResponse>();
  let port = 0;

  const allowedHost = (h: string | undefined): boolean => {
    if (token) return true;
    if (!h) return false;
    const name = h.replace(/:\d+$/, '');
    return LOOPBACK.has(name) && (h.endsWith(`:${port}`) || port === 80);
  };
  const tokenOf = (req: IncomingMessage, url: URL): string | undefined => {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) return auth.slice(7);
    const cookie = /(?:^|;\s*)da_token=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (cookie) return decodeURIComponent(cookie);
    return url.searchParams.get('token') ?? undefined;
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => sendError(res, e));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    if (!allowedHost(req.headers.host)) return sendJson(res, 421, { error: `Host ${req.headers.host ?? '(none)'} is not served here` });
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const given = tokenOf(req, url);
    const signedIn = given !== undefined && same(given, actionToken);
    if (token && !signedIn) return sendJson(res, 401, { error: 'a token is required: open the URL printed by `durable-agent ui`' });
    if (url.searchParams.has('token') && req.method === 'GET') {
      if (!signedIn) return sendJson(res, 401, { error: 'wrong token: open the URL printed by `durable-agent ui`' });
      // HttpOnly: the page's script never sees it; SameSite=Strict: no other site's page sends it.
      url.searchParams.delete('token');
      res.setHeader('set-cookie', `da_token=${encodeURIComponent(actionToken)}; HttpOnly; SameSite=Strict; Path=/`);
      res.writeHead(303, { location: url.pathname + url.search });
      return void res.end();
    }
    const parts = url.pathname
      .split('/')
      .filter(Boolean)
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          throw new BadRequest(`path: bad escape in ${JSON.stringify(p)}`);
        }
      });
    if (req.method === 'POST') {
      // The page and its CSRF token are a GET away for anything on this host (a sandboxed command
      // included); the action token is not (ARCHITECTURE.md#dashboard).
      if (!signedIn)
        return sendJson(res, 401, {
          error:
            'actions need the dashboard token: open the URL printed by `durable-agent ui` (its token is kept in ~/.config/durable-agent/ui-token)',
        });
      return post(req, res, parts);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: `method ${req.method} not allowed` });
    const q = (k: string) => url.searchParams.get(k) ?? undefined;

    if (parts[0] === 'assets' && parts.length === 2 && ASSETS[parts[1]!]) {
      res.writeHead(200, { 'content-type': ASSETS[parts[1]!]!, 'cache-control': 'no-cache' });
      return void res.end(assets[parts[1]!]);
    }
    if (parts[0] !== 'api') {
      if (parts.length === 0 || (parts.length === 2 && (parts[0] === 's' || parts[0] === 'b'))) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP, 'cache-control': 'no-store' });
        return void res.end(index);
      }
      return sendJson(res, 404, { error: `no page ${url.pathname}` });
    }
    const [, kind, id, sub] = parts;
    const filter = (): SessionFilter & { page?: string; pageSize?: number } => ({
      status: q('status'),
      batch: q('batch'),
      model: q('model'),
      text: q('text'),
      page: q('page'),
      pageSize: q('pageSize') ? Number(q('pageSize')) : undefined,
    });
    if (kind === 'config' && !id) return sendJson(res, 200, { namespace: opts.client.namespace, temporalUi, canAct: signedIn });
    if (kind === 'sessions' && !id) return sendJson(res, 200, await data.sessions(filter()));
    if (kind === 'sessions' && id === 'live' && !sub) {
      const f = filter();
      await data.sessions(f); // a bad filter is refused before the stream opens
      return sse(req, res, async (send, stopped) => {
        let last = '';
        while (!stopped()) {
          const page = await data.sessions(f).catch((e: Error) => ({ error: e.message }));
          const text = JSON.stringify(page);
          if (text !== last) send('page', page);
          last = text;
          await sleep(pollMs, stopped);
        }
      });
    }
    if (kind === 'session' && id && !sub) return sendJson(res, 200, await data.session(id));
    if (kind === 'session' && id && sub === 'events')
      return sessionEvents(req, res, id, Number(req.headers['last-event-id'] ?? q('after') ?? -1));
    if (kind === 'batch' && id && !sub) return sendJson(res, 200, await data.batch(id));
    if (kind === 'batch' && id && sub === 'live') {
      await data.batch(id, { jobs: false });
      return sse(req, res, async (send, stopped) => {
        let last = '';
        while (!stopped()) {
          const b = await data.batch(id).catch((e: Error) => ({ error: e.message }));
          const text = JSON.stringify(b);
          if (text !== last) send('batch', b);
          last = text;
          if ('executionStatus' in b && b.executionStatus !== 'RUNNING') return;
          await sleep(pollMs, stopped);
        }
      });
    }
    if (kind === 'batch' && id && sub === 'export') {
      const b = await data.batch(id);
      const format = q('format') ?? 'jsonl';
      if (format !== 'jsonl' && format !== 'csv') throw new BadRequest(`format: expected jsonl or csv, got ${JSON.stringify(format)}`);
      const jobs = b.jobs ?? [];
      const body =
        format === 'jsonl'
          ? jobs.map((j) => JSON.stringify(j)).join('\n') + (jobs.length ? '\n' : '')
          : toCsv(jobs as unknown as Record<string, unknown>[], ['index', ...CSV_COLUMNS]);
      res.writeHead(200, {
        'content-type': format === 'jsonl' ? 'application/x-ndjson' : 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.${format}"`,
      });
      return void res.end(body);
    }
    return sendJson(res, 404, { error: `no API ${url.pathname}` });
  }

  async function post(req: IncomingMessage, res: ServerResponse, parts: string[]): Promise<void> {
    // CSRF: the page's token in a header (a cross-site form cannot set one), JSON only, same origin.
    const given = req.headers['x-csrf-token'];
    if (typeof given !== 'string' || !same(given, csrf))
      return sendJson(res, 403, { error: 'missing or wrong X-CSRF-Token (reload the page)' });
    const origin = req.headers.origin;
    if (origin && origin !== `http://${req.headers.host}` && origin !== `https://${req.headers.host}`) {
      return sendJson(res, 403, { error: `cross-origin request from ${origin} refused` });
    }
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new BadRequest('content-type: expected application/json');
    const body = await readJson(req);
    const [api, kind, id, action] = parts;
    if (api !== 'api' || kind !== 'session' || !id || !action) return sendJson(res, 404, { error: `no action ${parts.join('/')}` });
    const fields = (allowed: string[]) => {
      for (const k of Object.keys(body))
        if (!allowed.includes(k)) throw new BadRequest(`${k}: not a field of ${action} (fields: ${allowed.join(', ') || 'none'})`);
    };
    const str = (k: string, required = true): string | undefined => {
      const v = body[k];
      if (v === undefined && !required) return undefined;
      if (typeof v !== 'string' || (required && v.trim() === '')) throw new BadRequest(`${k}: expected a non-empty string`);
      return v;
    };
    // Validate first (bad input is named whatever the session's state), then act.
    let run: (s: SessionHandle) => Promise<Record<string, unknown>>;
    switch (action) {
      case 'interrupt':
        fields([]);
        run = async (s) => (await s.interrupt(), { ok: true, message: 'interrupt sent' });
        break;
      case 'send': {
        fields(['text']);
        const text = str('text')!;
        run = async (s) => {
          const r = await s.send(text);
          return { ok: true, message: `message accepted (turn ${r.turnId})`, ...r };
        };
        break;
      }
      case 'model': {
        fields(['model']);
        const model = str('model')!;
        run = async (s) => (await s.setModel(model), { ok: true, message: `model set to ${model} from the next call` });
        break;
      }
      case 'permission': {
        fields(['requestId', 'behavior', 'message', 'always']);
        const behavior = str('behavior');
        if (behavior !== 'allow' && behavior !== 'deny')
          throw new BadRequest(`behavior: expected allow or deny, got ${JSON.stringify(behavior)}`);
        if (body.always !== undefined && typeof body.always !== 'boolean') throw new BadRequest('always: expected true or false');
        const message = str('message', false);
        const answer: PermissionAnswer = {
          requestId: str('requestId')!,
          behavior,
          ...(behavior === 'deny' && message ? { message } : {}),
          ...(behavior === 'allow' && body.always === true ? { always: true } : {}),
        };
        run = async (s) => {
          const r = await s.respond(answer);
          const what = behavior === 'allow' ? (answer.always ? 'allowed, always' : 'allowed') : 'denied';
          return {
            ok: true,
            message: `${answer.requestId} ${what}${r.rulesAdded.length ? ` (rules added: ${r.rulesAdded.join(', ')})` : ''}`,
            ...r,
          };
        };
        break;
      }
      default:
        return sendJson(res, 404, { error: `no action ${action} (interrupt, send, model, permission)` });
    }
    const session = await opts.client.get(id);
    // A closed run answers no update or signal; say so instead of "not found".
    if (!(await session.isOpen())) return sendJson(res, 409, { error: `rejected: session ${id} has ended` });
    return sendJson(res, 200, await run(session));
  }

  async function sessionEvents(req: IncomingMessage, res: ServerResponse, id: string, after: number): Promise<void> {
    const session = await opts.client.get(id);
    if (!Number.isInteger(after) || after < -1) throw new BadRequest('after: expected an event sequence number');
    return sse(req, res, async (send, stopped, signal) => {
      let refresh: NodeJS.Timeout | undefined;
      const detail = () => {
        clearTimeout(refresh);
        refresh = setTimeout(
          () =>
            void data.session(id).then(
              (d) => !stopped() && send('detail', d),
              () => undefined,
            ),
          100,
        );
      };
      detail();
      const ticker = setInterval(detail, Math.max(pollMs, 1_000));
      const messages = session.messages({ includePartialMessages: true, after, pollMs: 100, livePollMs: 100 });
      signal.addEventListener('abort', () => void messages.return(undefined));
      try {
        for await (const m of messages) {
          if (stopped()) break;
          send('message', annotate(m), m.type === 'stream_event' ? undefined : m.seq);
          if (m.type !== 'stream_event') detail();
        }
        if (!stopped()) {
          clearTimeout(refresh);
          send('detail', await data.session(id));
          send('end', {});
        }
      } finally {
        clearInterval(ticker);
        clearTimeout(refresh);
      }
    });
  }

  /** A server-sent event stream; ends when `body` returns or the browser goes away. */
  async function sse(
    req: IncomingMessage,
    res: ServerResponse,
    body: (send: (event: string, data: unknown, id?: number) => void, stopped: () => boolean, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    const abort = new AbortController();
    const stop = () => abort.abort();
    req.on('close', stop);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    const send = (event: string, payload: unknown, id?: number) => {
      if (abort.signal.aborted) return;
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`);
    };
    try {
      await body(send, () => abort.signal.aborted, abort.signal);
    } catch (e) {
      send('failure', { error: (e as Error).message });
    } finally {
      clearInterval(keepAlive);
      streams.delete(res);
      res.end();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8234, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/?token=${encodeURIComponent(actionToken)}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sleep(ms: number, stopped: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const step = Math.min(ms, 100);
    let waited = 0;
    const t = setInterval(() => {
      waited += step;
      if (stopped() || waited >= ms) {
        clearInterval(t);
        resolve();
      }
    }, step);
  });
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new BadRequest(`body: larger than ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let v: unknown;
      try {
        v = text.trim() === '' ? {} : JSON.parse(text);
      } catch (e) {
        return reject(new BadRequest(`body: not JSON (${(e as Error).message})`));
      }
      if (!v || typeof v !== 'object' || Array.isArray(v)) return reject(new BadRequest('body: expected a JSON object'));
      resolve(v as Record<string, unknown>);
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, e: unknown): void {
  if (e instanceof BadRequest || e instanceof BatchConflictError) return sendJson(res, 400, { error: e.message });
  if (e instanceof SessionNotFoundError) return sendJson(res, 404, { error: e.message });
  if (e instanceof WorkflowNotFoundError) return sendJson(res, 404, { error: `no workflow ${e.workflowId ?? ''}`.trim() });
  if (e instanceof WorkflowUpdateFailedError) return sendJson(res, 409, { error: `rejected: ${e.cause?.message ?? e.message}` });
  sendJson(res, 500, { error: (e as Error)?.message ?? String(e) });
}

function toCsv(rows: Record<string, unknown>[], columns: string[]): string {
  return [columns.join(','), ...rows.map((r) => columns.map((c) => csvField(r[c])).join(','))].join('\n') + '\n';
}
