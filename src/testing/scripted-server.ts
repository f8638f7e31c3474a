/**
 * The scripted model: an OpenAI-compatible HTTP server (chat completions, streaming or not) that
 * plays scenarios. It is the one thing our tests fake, and it is faked only behind the real HTTP
 * interface, so the code under test runs its real `openai` client, retries and stream parsing.
 *
 * The reply is chosen from the request alone: the scenario by the `x-scenario` header, else a
 * `model` of `scripted/<name>` naming a known scenario, else a `[scenario:<name>]` tag in the
 * first user message (how session tests pick theirs through the whole agent), else the default
 * scenario; the turn by the number of assistant messages in the request. A retried or replayed
 * request therefore gets the same answer; only faults depend on history (attempt k of a turn
 * gets the turn's faults[k-1]). A request the client abandons is marked (`abortedAt`), so tests
 * can assert that a cancelled call stopped at the provider.
 *
 * It fails the test when its script runs out (HTTP 500 to the client, and an entry in `errors`)
 * or is left unused: `assertConsumed()` throws naming every turn never served.
 *
 * Past 300 lines: routing, streaming, faults and the request record are one protocol; HTTP helpers
 * live in http.ts and scenario parsing in scenario.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { flatHeaders, sendJson, sleep } from './http';
import { completionObject, errorBody, renderReply, streamChunks } from './openai-wire';
import { hasChunks, isPreparedScenario, parseScenario, scenarioTagIn, type Fault, type Scenario, type ScenarioInput } from './scenario';

export interface RecordedRequest {
  /** Epoch ms when the request arrived. */
  at: number;
  scenario: string;
  turnIndex: number;
  /** 1 for the first request for this (scenario, turn), 2 for its first retry, ... */
  attempt: number;
  body: ChatCompletionCreateParams;
  headers: Record<string, string>;
  /** The HTTP status answered (200 for dropped or hung streams, 0 if cut before any header). */
  status: number;
  /** The fault applied to this attempt, if any. */
  fault?: Fault;
  /**
   * Epoch ms when the client went away before the response was finished: the caller aborted the
   * request (a cancelled activity, a stream watchdog). Not set when the server cut it (a fault)
   * or was closed.
   */
  abortedAt?: number;
  /** Stream chunks handed to the socket so far (0 until the stream starts). */
  chunksSent?: number;
  /** When each of those chunks was handed to the socket (epoch ms, fractional). */
  chunkTimes?: number[];
}

export interface ScriptedModelOptions {
  scenarios: ScenarioInput | ScenarioInput[];
  /** Served when a request names no scenario; default: the first scenario. */
  defaultScenario?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** `${NAME}` values for scenarios not already prepared by loadScenarioFile/parseScenario. */
  vars?: Record<string, string>;
  /** Called once per chat-completions request, when its answer has been decided. */
  onRequest?: (request: RecordedRequest) => void;
  /**
   * Keep each request's `messages` in `requests` (default true). Long-session tests turn this
   * off: thousands of requests carrying whole transcripts would hold gigabytes.
   */
  keepMessages?: boolean;
  /**
   * A provider's concurrency limit: a chat request arriving while this many are in flight is
   * answered 429 with `retry-after` (and counted in `rateLimited`), without touching the script.
   */
  maxConcurrent?: number;
  /** The `retry-after` those 429s carry, in ms (default 1,000; sent as seconds and as `retry-after-ms`). */
  retryAfterMs?: number;
}

export interface ScriptedModel {
  /** Base URL including `/v1`, for `new OpenAI({ baseURL })`. */
  url: string;
  port: number;
  /** Every chat-completions request, in arrival order (the same array across reset()). */
  requests: RecordedRequest[];
  scenario(name: string): Scenario;
  addScenario(scenarios: ScenarioInput | ScenarioInput[]): void;
  /** Script errors so far: a script that ran out, an unknown scenario, a malformed request. */
  readonly errors: string[];
  /** Throw if a turn (of `name`, or of every scenario) was never served, or on any script error. */
  assertConsumed(name?: string): void;
  /** Chat requests answered 429 because `maxConcurrent` were in flight (since the last reset). */
  readonly rateLimited: number;
  /** The most chat requests ever in flight at once (since the last reset). */
  readonly peakConcurrent: number;
  /** Change the concurrency limit (undefined: none). */
  setMaxConcurrent(n: number | undefined): void;
  /** Forget requests, errors, attempt counts and served turns; keep the scenarios. */
  reset(): void;
  close(): Promise<void>;
}

interface ScriptError {
  scenario?: string;
  message: string;
}

export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const scenarios = new Map<string, Scenario>();
  const attempts = new Map<string, number>();
  const served = new Map<string, Set<number>>();
  const errors: ScriptError[] = [];
  const requests: RecordedRequest[] = [];
  /** Requests in flight: abort one to stop its handler; resolves when its response is closed. */
  const inFlight = new Map<AbortController, Promise<void>>();
  let defaultName = options.defaultScenario;
  let maxConcurrent = options.maxConcurrent;
  let chatsInFlight = 0;
  let rateLimited = 0;
  let peakConcurrent = 0;

  const addScenario = (input: ScenarioInput | ScenarioInput[]): void => {
    for (const s of Array.isArray(input) ? input : [input]) {
      const scenario = isPreparedScenario(s) ? s : parseScenario(s, { vars: options.vars });
      if (scenarios.has(scenario.name)) throw new Error(`scripted model: scenario '${scenario.name}' already exists`);
      scenarios.set(scenario.name, scenario);
      defaultName ??= scenario.name;
    }
  };
  addScenario(options.scenarios);
  if (options.defaultScenario !== undefined && !scenarios.has(options.defaultScenario)) {
    throw new Error(`scripted model: default scenario '${options.defaultScenario}' is not among the scenarios`);
  }

  const fail = (res: ServerResponse, status: number, error: ScriptError, type: string): void => {
    errors.push(error);
    sendJson(res, status, errorBody(`scripted model: ${error.message}`, type));
  };

  /** Per request: its record once decided, and whether the server itself cut the connection. */
  interface Exchange {
    signal: AbortSignal;
    record?: RecordedRequest;
    cutByServer?: boolean;
  }
  let closing = false;

  const handleChat = async (req: IncomingMessage, res: ServerResponse, raw: string, ex: Exchange) => {
    const signal = ex.signal;
    const cut = () => {
      ex.cutByServer = true;
      res.destroy();
    };
    let body: ChatCompletionCreateParams;
    try {
      body = JSON.parse(raw) as ChatCompletionCreateParams;
      if (!Array.isArray(body?.messages)) throw new Error('`messages` must be an array');
    } catch (err) {
      return fail(res, 400, { message: `malformed request: ${(err as Error).message}` }, 'invalid_request_error');
    }
    const headers = flatHeaders(req);
    const byModel = typeof body.model === 'string' && body.model.startsWith('scripted/') ? body.model.slice(9) : undefined;
    // A known `scripted/<name>` model wins over the prompt's tag, so a session can route its
    // side calls (e.g. compaction summaries with `summaryModel`) to a scenario of their own.
    const name =
      headers['x-scenario'] ??
      (byModel !== undefined && scenarios.has(byModel) ? byModel : undefined) ??
      scenarioTagIn(body) ??
      defaultName;
    const scenario = name === undefined ? undefined : scenarios.get(name);
    if (!scenario) {
      const known = [...scenarios.keys()].join(', ') || 'none';
      return fail(res, 404, { message: `unknown scenario '${name ?? ''}' (known: ${known})` }, 'not_found_error');
    }
    const turnIndex = body.messages.filter((m) => m.role === 'assistant').length;
    const key = `${scenario.name}\u0000${turnIndex}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const turn = scenario.turns[turnIndex];
    const fault = turn?.faults?.[attempt - 1];
    const stream = body.stream === true;
    const kept = options.keepMessages === false ? { ...body, messages: [] } : body;
    const record: RecordedRequest = { at: Date.now(), scenario: scenario.name, turnIndex, attempt, body: kept, headers, status: 0 };
    if (fault) record.fault = fault;
    requests.push(record);
    ex.record = record;
    record.status = !turn ? 500 : !fault ? 200 : 'status' in fault ? fault.status : stream && hasChunks(fault) ? 200 : 0;
    options.onRequest?.(record);

    if (!turn) {
      const message =
        `script ran out: scenario '${scenario.name}' has ${scenario.turns.length} turns, but the request ` +
        `holds ${turnIndex} assistant messages (asks for turn index ${turnIndex})`;
      return fail(res, 500, { scenario: scenario.name, message }, 'script_exhausted');
    }
    if (turn.delay_ms) await sleep(turn.delay_ms, signal);
    if (signal.aborted) return;

    if (fault && 'status' in fault) {
      const faultBody = fault.body ?? errorBody(`scripted fault: HTTP ${fault.status}`, 'scripted_fault');
      const text = typeof faultBody === 'string' ? faultBody : JSON.stringify(faultBody);
      const type = typeof faultBody === 'string' ? 'text/plain' : 'application/json';
      res.writeHead(fault.status, { 'content-type': type, ...fault.headers }).end(text);
      return;
    }
    const reply = renderReply(turn, {
      scenario: scenario.name,
      turnIndex,
      model: scenario.model ?? (typeof body.model === 'string' ? body.model : 'scripted'),
      promptChars: JSON.stringify(body.messages).length,
      now: Date.now(),
    });
    if (fault && !(stream && hasChunks(fault))) {
      // Nothing of the reply is sent: hang (if asked) and cut the connection before any header.
      if ('hang_ms' in fault) await sleep(fault.hang_ms, signal);
      return void cut();
    }
    const cutAfter = fault && 'drop_after_chunks' in fault ? fault.drop_after_chunks : fault?.after_chunks;
    if (!stream) {
      sendJson(res, 200, completionObject(reply));
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      const includeUsage = body.stream_options?.include_usage === true;
      const chunks = streamChunks(reply, { includeUsage }).map((c) => `data: ${JSON.stringify(c)}\n\n`);
      chunks.push('data: [DONE]\n\n');
      for (const [i, data] of chunks.entries()) {
        if (cutAfter !== undefined && i === cutAfter) break;
        if (i > 0 && turn.chunk_delay_ms) await sleep(turn.chunk_delay_ms, signal);
        if (signal.aborted) return;
        // Wait until the chunk is handed to the socket, so a fault cuts after the chunks it names
        // (destroying a socket discards what is still buffered).
        const sentAt = performance.timeOrigin + performance.now();
        await new Promise<void>((resolve) => res.write(data, () => resolve()));
        record.chunksSent = i + 1;
        (record.chunkTimes ??= []).push(sentAt);
      }
      if (fault && 'hang_ms' in fault) await sleep(fault.hang_ms, signal);
      if (fault) return void cut();
      res.end();
    }
    let set = served.get(scenario.name);
    if (!set) served.set(scenario.name, (set = new Set()));
    set.add(turnIndex);
  };

  const server = createServer((req, res) => {
    const abort = new AbortController();
    const ex: Exchange = { signal: abort.signal };
    const closed = new Promise<void>((resolve) =>
      res.on('close', () => {
        inFlight.delete(abort);
        if (!res.writableFinished) {
          if (ex.record && !ex.cutByServer && !closing) ex.record.abortedAt = Date.now();
          abort.abort();
        }
        resolve();
      }),
    );
    inFlight.set(abort, closed);
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      const done = (p: Promise<void> | void) =>
        Promise.resolve(p).catch((err: unknown) => {
          if (!res.headersSent) sendJson(res, 500, errorBody(`scripted model bug: ${String(err)}`, 'server_error'));
          else {
            ex.cutByServer = true;
            res.destroy();
          }
        });
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        if (maxConcurrent !== undefined && chatsInFlight >= maxConcurrent) {
          rateLimited++;
          const ms = options.retryAfterMs ?? 1_000;
          res.setHeader('retry-after', String(Math.ceil(ms / 1000)));
          res.setHeader('retry-after-ms', String(ms));
          return sendJson(
            res,
            429,
            errorBody(`scripted model: ${chatsInFlight} requests in flight (limit ${maxConcurrent})`, 'rate_limit_exceeded'),
          );
        }
        chatsInFlight++;
        peakConcurrent = Math.max(peakConcurrent, chatsInFlight);
        res.once('close', () => chatsInFlight--);
        void done(handleChat(req, res, Buffer.concat(parts).toString('utf8'), ex));
      } else if (req.method === 'GET' && path === '/v1/models') {
        const ids = new Set([...scenarios.values()].flatMap((s) => [`scripted/${s.name}`, ...(s.model ? [s.model] : [])]));
        const data = [...ids].map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
        sendJson(res, 200, { object: 'list', data });
      } else {
        sendJson(res, 404, errorBody(`no route ${req.method} ${path}`, 'not_found_error'));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const hostPart = address.includes(':') ? `[${address}]` : address;

  const getScenario = (name: string): Scenario => {
    const s = scenarios.get(name);
    if (!s) throw new Error(`scripted model: unknown scenario '${name}'`);
    return s;
  };

  return {
    url: `http://${hostPart}:${port}/v1`,
    port,
    requests,
    scenario: getScenario,
    addScenario,
    get errors() {
      return errors.map((e) => e.message);
    },
    assertConsumed(name) {
      const checked = name === undefined ? [...scenarios.values()] : [getScenario(name)];
      const problems = errors.filter((e) => name === undefined || e.scenario === name).map((e) => e.message);
      for (const s of checked) {
        const unused = s.turns.map((_, i) => i).filter((i) => !served.get(s.name)?.has(i));
        if (unused.length > 0) {
          problems.push(`scenario '${s.name}': turn${unused.length > 1 ? 's' : ''} ${unused.join(', ')} of ${s.turns.length} never served`);
        }
      }
      if (problems.length > 0) throw new Error(`scripted model: script not consumed as written:\n  ${problems.join('\n  ')}`);
    },
    get rateLimited() {
      return rateLimited;
    },
    get peakConcurrent() {
      return peakConcurrent;
    },
    setMaxConcurrent(n) {
      maxConcurrent = n;
    },
    reset() {
      rateLimited = 0;
      peakConcurrent = 0;
      requests.length = 0;
      errors.length = 0;
      attempts.clear();
      served.clear();
    },
    async close() {
      closing = true;
      const closed = [...inFlight.values()];
      for (const a of inFlight.keys()) a.abort();
      server.closeAllConnections();
      await Promise.all(closed);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
