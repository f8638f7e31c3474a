/**
 * `query()` shaped like the Claude Agent SDK's: an async generator of SDK messages with control
 * methods, backed by a durable session. Where the SDK runs the agent in a child process, this
 * starts (or, with `resume`, continues) a session workflow and streams it:
 *
 *   for await (const message of query({ prompt: 'Fix the failing test', options: { cwd } })) {
 *     if (message.type === 'result') console.log(message.result);
 *   }
 *
 * The session outlives the generator: breaking out of the loop detaches (call `interrupt()` or
 * `cancel()` first to stop it). `prompt` may also be an async iterable of user messages (the
 * SDK's streaming input mode): the session is then interactive, each further message is sent with
 * the `sendMessage` update, and the session is closed when the iterable ends.
 */
import type { PermissionMode, SessionOptions } from '../shared/config';
import type { SDKMessage } from '../shared/events';
import { DurableAgentClient, type ConnectOptions, type SessionHandle } from './client';

/** A user message as the SDK's streaming input mode yields them (only text is used). */
export interface SDKUserMessageInput {
  type: 'user';
  message: { role: 'user'; content: string | { type: string; text?: string }[] };
  session_id?: string;
  parent_tool_use_id?: string | null;
}

export type QueryOptions = Omit<SessionOptions, 'prompt' | 'cwd'> & {
  /** Working directory of the tools (default: this process's cwd). */
  cwd?: string;
  /** Where the Temporal server is (default: TEMPORAL_* variables / the default profile). */
  connection?: ConnectOptions;
  /** Use this client instead of connecting (it is not closed). */
  client?: DurableAgentClient;
  /** Aborting cancels the session and ends the stream. */
  abortController?: AbortController;
};

export interface Query extends AsyncGenerator<SDKMessage, void> {
  /** The session id, once the session has started. */
  readonly sessionId: Promise<string>;
  interrupt(): Promise<void>;
  setModel(model?: string): Promise<void>;
  setPermissionMode(mode: PermissionMode): Promise<void>;
  setMaxThinkingTokens(maxThinkingTokens: number | null): Promise<void>;
  /** End the session (its current turn stops; it ends with an `aborted` result). */
  cancel(): Promise<void>;
}

export function query({ prompt, options = {} }: { prompt: string | AsyncIterable<SDKUserMessageInput>; options?: QueryOptions }): Query {
  const { connection, client: given, abortController, cwd, ...sessionOptions } = options;
  let resolveSession!: (h: SessionHandle) => void;
  let rejectSession!: (e: unknown) => void;
  const session = new Promise<SessionHandle>((res, rej) => {
    resolveSession = res;
    rejectSession = rej;
  });
  session.catch(() => undefined); // surfaced through the generator

  async function* run(): AsyncGenerator<SDKMessage, void> {
    const client = given ?? (await DurableAgentClient.connect(connection));
    try {
      const streaming = typeof prompt !== 'string';
      const input = streaming ? prompt[Symbol.asyncIterator]() : undefined;
      let first = typeof prompt === 'string' ? prompt : undefined;
      if (input) {
        const next = await input.next();
        if (next.done) throw new Error('query: the prompt stream ended before its first message');
        first = textOf(next.value);
      }
      const handle = await client.start({ ...sessionOptions, prompt: first!, cwd: cwd ?? process.cwd(), ...(streaming ? { interactive: true } : {}) });
      resolveSession(handle);
      const onAbort = () => void handle.cancel().catch(() => undefined);
      abortController?.signal.addEventListener('abort', onAbort, { once: true });
      // Streaming input: send each further message as it comes; once the input has ended and
      // every message has had its turn (one result each), close the session.
      const fed = { sent: 1, ended: !input, results: 0 };
      let closing: Promise<void> | undefined;
      const closeWhenAnswered = () => {
        if (input && fed.ended && fed.results >= fed.sent) closing ??= handle.close().catch(() => undefined);
      };
      const feeding = input ? feed(handle, input, fed).then(closeWhenAnswered) : undefined;
      feeding?.catch(() => undefined);
      try {
        for await (const m of handle.messages()) {
          yield m;
          if (m.type === 'result') {
            fed.results++;
            closeWhenAnswered();
          }
        }
      } finally {
        abortController?.signal.removeEventListener('abort', onAbort);
      }
      await feeding;
      await closing;
    } catch (e) {
      rejectSession(e);
      throw e;
    } finally {
      if (!given) await client.close();
    }
  }

  const gen = run() as Query;
  const control = <A extends unknown[]>(fn: (h: SessionHandle, ...a: A) => Promise<void>) =>
    async (...a: A) => fn(await session, ...a);
  return Object.assign(gen, {
    sessionId: session.then((h) => h.sessionId),
    interrupt: control((h) => h.interrupt()),
    setModel: control((h, model?: string) => h.setModel(model ?? sessionOptions.model ?? 'gpt-4.1-mini')),
    setPermissionMode: control((h, mode: PermissionMode) => h.setPermissionMode(mode)),
    setMaxThinkingTokens: control((h, n: number | null) => h.setMaxThinkingTokens(n)),
    cancel: control((h) => h.cancel()),
  });
}

/** Send each further message of a streaming prompt, counting them. */
async function feed(handle: SessionHandle, input: AsyncIterator<SDKUserMessageInput>, fed: { sent: number; ended: boolean }): Promise<void> {
  for (let next = await input.next(); !next.done; next = await input.next()) {
    await handle.send(textOf(next.value));
    fed.sent++;
  }
  fed.ended = true;
}

function textOf(m: SDKUserMessageInput): string {
  const c = m.message.content;
  return typeof c === 'string' ? c : c.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
}
