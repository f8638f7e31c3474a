/**
 * The scripted model: an OpenAI-compatible HTTP server (chat completions, streaming or not) that
 * plays scenarios. It is the one thing our tests fake, and it is faked only behind the real HTTP
 * interface, so the code under test runs its real `openai` client, retries and stream parsing.
 *
 * The reply is chosen from the request alone: the scenario by the `x-scenario` header, else a
 * `model` of `scripted/<name>` naming a known scenario, else a `[scenario:<name>]` tag in the
 * first user message (how session tests pick theirs through the whole agent), else the default
 * scenario; the turn by the
 * number of assistant messages in the request. A retried or replayed request therefore gets the same answer; only
 * faults depend on history (attempt k of a turn gets the turn's faults[k-1]).
 *
 * It fails the test when its script runs out (HTTP 500 to the client, and an entry in `errors`)
 * or is left unused: `assertConsumed()` throws naming every turn never served.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { completionObject, errorBody, renderReply, streamChunks } from './openai-wire';
import { isPreparedScenario, parseScenario, type Fault, type Scenario, type ScenarioInput } from './scenario';

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
  const aborts = new Set<AbortController>();
  let defaultName = options.defaultScenario;

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

  const handleChat = async (req: IncomingMessage, res: ServerResponse, raw: string, signal: AbortSignal) => {
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
      headers['x-scenario'] ?? (byModel !== undefined && scenarios.has(byModel) ? byModel : undefined) ?? scenarioTagIn(body) ?? defaultName;
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
      return void res.destroy();
    }
    const cut = fault && 'drop_after_chunks' in fault ? fault.drop_after_chunks : fault?.after_chunks;
    if (!stream) {
      sendJson(res, 200, completionObject(reply));
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      const includeUsage = body.stream_options?.include_usage === true;
      const chunks = streamChunks(reply, { includeUsage }).map((c) => `data: ${JSON.stringify(c)}\n\n`);
      chunks.push('data: [DONE]\n\n');
      for (const [i, data] of chunks.entries()) {
        if (cut !== undefined && i === cut) break;
        if (i > 0 && turn.chunk_delay_ms) await sleep(turn.chunk_delay_ms, signal);
        if (signal.aborted) return;
        // Wait until the chunk is handed to the socket, so a fault cuts after the chunks it names
        // (destroying a socket discards what is still buffered).
        await new Promise<void>((resolve) => res.write(data, () => resolve()));
      }
      if (fault && 'hang_ms' in fault) await sleep(fault.hang_ms, signal);
      if (fault) return void res.destroy();
      res.end();
    }
    let set = served.get(scenario.name);
    if (!set) served.set(scenario.name, (set = new Set()));
    set.add(turnIndex);
  };

  const server = createServer((req, res) => {
    const abort = new AbortController();
    aborts.add(abort);
    res.on('close', () => {
      aborts.delete(abort);
      if (!res.writableFinished) abort.abort();
    });
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      const done = (p: Promise<void> | void) =>
        Promise.resolve(p).catch((err: unknown) => {
          if (!res.headersSent) sendJson(res, 500, errorBody(`scripted model bug: ${String(err)}`, 'server_error'));
          else res.destroy();
        });
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        void done(handleChat(req, res, Buffer.concat(parts).toString('utf8'), abort.signal));
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
          problems.push(
            `scenario '${s.name}': turn${unused.length > 1 ? 's' : ''} ${unused.join(', ')} of ${s.turns.length} never served`,
          );
        }
      }
      if (problems.length > 0) throw new Error(`scripted model: script not consumed as written:\n  ${problems.join('\n  ')}`);
    },
    reset() {
      requests.length = 0;
      errors.length = 0;
      attempts.clear();
      served.clear();
    },
    async close() {
      for (const a of aborts) a.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `NAME` from a `[scenario:NAME]` tag in the first user message, if there is one. */
export function scenarioTagIn(body: ChatCompletionCreateParams): string | undefined {
  const first = body.messages.find((m) => m.role === 'user');
  const content: unknown = first?.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p: { type?: unknown; text?: unknown }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('\n')
        : '';
  return /\[scenario:([^\]\s]+)\]/.exec(text)?.[1];
}

function hasChunks(fault: Fault): boolean {
  return 'drop_after_chunks' in fault || ('hang_ms' in fault && fault.after_chunks !== undefined);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Resolves after `ms`, or at once when `signal` aborts (the client went away or the server closes). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
