/**
 * The one request every turn makes: an OpenAI-compatible `POST {baseURL}/chat/completions` with
 * `stream: true`, sent over `node:http(s)` with kept-alive connections, its server-sent events
 * read with src/shared/sse.ts. Failures are the `openai` package's own error classes, made the
 * way its client makes them (`APIError.generate` for a status, `APIConnectionError`, `APIUserAbortError`, an
 * `APIError` for an `error` in the stream), so `errors.ts` classifies them as before. The
 * `openai` client itself still serves the endpoint's model list. Why this is not the `openai`
 * client: it cost about 0.9 ms of the worker's CPU per call against 0.2 ms here
 * (ARCHITECTURE.md#model-stream-client).
 */
import http from 'node:http';
import https from 'node:https';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { SseParser } from '../../shared/sse';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const MAX_REDIRECTS = 5;

export interface ChatStreamOptions {
  /** The endpoint, e.g. `https://api.openai.com/v1` (the default). */
  baseURL?: string;
  apiKey?: string;
  /** How long to wait for the response's headers (default 10 minutes); the stream itself is watched by its caller. */
  timeoutMs?: number;
  /** Sent as `OpenAI-Organization` / `OpenAI-Project`, as the `openai` client does from OPENAI_ORG_ID / OPENAI_PROJECT_ID. */
  organization?: string;
  project?: string;
}

/** A response that started streaming: its status and headers, and the chunks as they arrive. */
export interface ChatStream {
  status: number;
  headers: Headers;
  /** Ends at the end of the response; an abort through the call's signal also ends it, quietly. */
  chunks: AsyncIterable<ChatCompletionChunk>;
}

export class ChatStreamClient {
  readonly url: URL;
  /** Kept-alive connections, one pool per protocol (a redirect may change it). */
  private readonly agents: Record<string, http.Agent> = {};
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(opts: ChatStreamOptions = {}) {
    const base = opts.baseURL ?? DEFAULT_BASE_URL;
    const url = URL.canParse(base) ? new URL(`${base.endsWith('/') ? base.slice(0, -1) : base}/chat/completions`) : undefined;
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
      throw new TypeError(`the model endpoint (OPENAI_BASE_URL) must be an http(s) URL, not ${JSON.stringify(base)}`);
    }
    this.url = url;
    this.timeoutMs = opts.timeoutMs ?? 10 * 60_000;
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'durable-agent',
      ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
      ...(opts.organization ? { 'openai-organization': opts.organization } : {}),
      ...(opts.project ? { 'openai-project': opts.project } : {}),
    };
  }

  /**
   * Send the request; resolves once the response's headers are in. A 307 or 308 is followed (up
   * to 5 hops, with the same body; the key only to the same origin), as `fetch` does; any other
   * non-2xx status is thrown as the `openai` client throws it.
   */
  async stream(body: ChatCompletionCreateParamsStreaming, { signal }: { signal?: AbortSignal } = {}): Promise<ChatStream> {
    if (signal?.aborted) throw new APIUserAbortError();
    const payload = Buffer.from(JSON.stringify(body));
    let url = this.url;
    let res = await this.send(url, payload, signal);
    for (let hops = 0; hops < MAX_REDIRECTS && (res.statusCode === 307 || res.statusCode === 308) && res.headers.location; hops++) {
      res.resume(); // nothing to read: the connection goes back to the pool
      url = new URL(res.headers.location, url);
      res = await this.send(url, payload, signal);
    }
    const headers = headersOf(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      let text: string;
      try {
        text = await readAll(res);
      } catch (e) {
        if (signal?.aborted) throw new APIUserAbortError();
        text = e instanceof Error ? e.message : String(e);
      }
      const json = parseJson(text);
      throw APIError.generate(status, json as object | undefined, json ? undefined : text, headers);
    }
    return { status, headers, chunks: chunksOf(res, headers, signal) };
  }

  private send(url: URL, payload: Buffer, signal: AbortSignal | undefined): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return Promise.reject(new APIConnectionError({ message: `the model endpoint redirected to a URL that is not http(s): ${url.href}` }));
    }
    const { authorization, ...rest } = this.headers;
    // As `fetch`: the key goes to the endpoint's own origin only, not to wherever it redirects.
    const headers = { ...(url.origin === this.url.origin && authorization ? { authorization } : {}), ...rest };
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const transport = url.protocol === 'https:' ? https : http;
      const req = transport.request(url, {
        method: 'POST',
        agent: (this.agents[url.protocol] ??= new transport.Agent({ keepAlive: true })),
        headers: { ...headers, 'content-length': String(payload.length) },
      });
      let why: 'aborted' | 'timed out' | undefined;
      const onAbort = () => {
        why ??= 'aborted';
        req.destroy();
      };
      const timer = setTimeout(() => {
        why ??= 'timed out';
        req.destroy();
      }, this.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      req.once('response', (r) => {
        clearTimeout(timer);
        // From here an abort ends the body: the response is destroyed with the request.
        r.once('close', () => signal?.removeEventListener('abort', onAbort));
        resolve(r);
      });
      req.once('error', (e) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (why === 'aborted') reject(new APIUserAbortError());
        else if (why === 'timed out') reject(new APIConnectionTimeoutError());
        else reject(new APIConnectionError({ cause: e }));
      });
      req.end(payload);
    });
  }
}

async function* chunksOf(
  res: http.IncomingMessage,
  headers: Headers,
  signal: AbortSignal | undefined,
): AsyncGenerator<ChatCompletionChunk> {
  const events = new SseParser();
  let done = false;
  try {
    for await (const text of textOf(res, signal)) {
      for (const data of events.push(text, text === '')) {
        // Read on to the end after [DONE], so the connection can be used again.
        if (done) continue;
        if (data.startsWith('[DONE]')) {
          done = true;
          continue;
        }
        const chunk = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
        if (chunk && chunk.error) throw new APIError(undefined, chunk.error as object, undefined, headers);
        yield chunk;
      }
    }
    done = true;
  } finally {
    if (!done || !res.complete) res.destroy();
  }
}

/**
 * The response's text as it arrives, then '' once it has ended. An abort by the caller ends it
 * quietly, as with the `openai` client; a connection lost before the end is an error.
 */
async function* textOf(res: http.IncomingMessage, signal: AbortSignal | undefined): AsyncGenerator<string> {
  res.setEncoding('utf8');
  try {
    for await (const text of res as AsyncIterable<string>) if (text) yield text;
  } catch (e) {
    if (signal?.aborted) return;
    throw new Error(`the provider's stream broke off: ${e instanceof Error ? e.message : String(e)}`);
  }
  yield '';
}

function headersOf(res: http.IncomingMessage): Headers {
  const h = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      h.append(raw[i]!, raw[i + 1]!);
    } catch {
      // A header `Headers` refuses (a malformed name or value) is left out.
    }
  }
  return h;
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const s of res as AsyncIterable<string>) text += s;
  return text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
