/**
 * `query()` shaped like the Claude Agent SDK's: an async generator of the SDK's messages and our
 * own events (`QueryMessage`) with control methods, backed by a durable session. Where the SDK
 * runs the agent in a child process, this starts (or, with `resume`/`continue`, continues) a
 * session workflow and streams it:
 *
 *   for await (const message of query({ prompt: 'Fix the failing test', options: { cwd } })) {
 *     if (message.type === 'result') console.log(message.result);
 *   }
 *
 * Options are checked before anything starts: an SDK option we do not support is refused by name
 * (src/sdk/options.ts). The session outlives the generator: breaking out of the loop
 * detaches, and the session runs on; `close()`, `cancel()` or `abortController.abort()` end it.
 * `prompt` may also be an async iterable of user messages (the SDK's streaming input mode): the
 * session is then interactive, and each further message — from that iterable or from a stream
 * passed to `streamInput()` — is sent with the `sendMessage` update as it arrives: while a turn
 * runs it steers that turn, otherwise it starts the next one (`priority: 'later'` always waits for
 * the turn to end; `'now'` interrupts it first). The session is closed once every input stream
 * has ended and each turn it started has its result. `canUseTool` and callback `hooks` are called
 * in this process for the requests the session sends while the generator is read, and so are the
 * tools of in-process MCP servers (`type: 'sdk'` in `mcpServers`)
 * (ARCHITECTURE.md#durable-approval, #callback-hooks, #client-mcp-tools).
 */
import { QueryNotRegisteredError, WorkflowNotFoundError } from '@temporalio/client';
import { ConfigError } from '../shared/config-error';
import { SessionConfigFields, type SessionOptions } from '../shared/config';
import { isDurableAgentEvent, type QueryMessage } from '../shared/events';
import { DURABLE_AGENT_VERSION } from '../shared/version';
import { listModels, latestSessionIn } from './catalog';
import { CheckpointChoiceError, forkAtOptions, forkPoint } from '../client/checkpoints';
import { CLIENT_TOOLS_SERVED, DurableAgentClient, type SessionHandle } from '../client/client';
import type { StreamMessage } from '../client/live';
import { permissionResponder, requestFromEvent } from '../client/permissions';
import { hookRequestFromEvent, hookResponder, pollHookRequests } from '../client/hook-callbacks';
import { connectSdkServers, toolRequestFromEvent, toolResponder, type ClientMcpServers } from '../client/client-tools';
import { mapOptions, refuse, type MappedOptions } from './options';
import { REFUSED_METHODS } from './query-method-support';
import type {
  AccountInfo,
  AgentInfo,
  InitializationResult,
  McpServerStatus,
  ModelInfo,
  Options,
  PermissionMode,
  Query,
  SDKUserMessage,
} from './types';

export type { Query } from './types';

/**
 * Thrown by a query's iteration when its `abortController` aborts it, as the SDK's `AbortError`:
 * the session is cancelled (durably), and the stream ends with this error. `close()` ends the
 * stream without one.
 */
export class AbortError extends Error {
  constructor(message = 'Query aborted by its abortController: the session is cancelled') {
    super(message);
    this.name = 'AbortError';
  }
}

/** A `Query` method durable-agent does not have. */
export class NotSupportedError extends Error {
  constructor(method: string, why: string) {
    super(`Query.${method}() is not supported by durable-agent: ${why}`);
    this.name = 'NotSupportedError';
  }
}

export function query({ prompt, options = {} }: { prompt: string | AsyncIterable<SDKUserMessage>; options?: Options }): Query {
  const mapped = mapOptions(options, process.cwd());
  const stop = new AbortController();
  let resolveSession!: (h: SessionHandle) => void;
  let rejectSession!: (e: unknown) => void;
  /** Set once the session has started: what may be answered without waiting for it. */
  let started: SessionHandle | undefined;
  const session = new Promise<SessionHandle>((res, rej) => {
    resolveSession = (h) => {
      started = h;
      res(h);
    };
    rejectSession = rej;
  });
  // A failed start is surfaced through the generator; these two only mark the rejection as seen.
  session.catch(() => undefined);
  const sessionId = session.then((h) => h.sessionId);
  sessionId.catch(() => undefined);
  const cancelSession = () => void session.then((h) => h.cancel()).catch(() => undefined);
  const onAbort = () => {
    stop.abort();
    cancelSession();
  };
  if (mapped.abortController?.signal.aborted) stop.abort();
  else mapped.abortController?.signal.addEventListener('abort', onAbort, { once: true });

  const inputs = typeof prompt === 'string' ? undefined : new Inputs(session);
  /** Set when the stream has ended (and closed its own connection, unless given a client). */
  let streamEnded = false;
  const gen = run(prompt, mapped, stop.signal, resolveSession, rejectSession, inputs, () => (streamEnded = true)) as Query;
  const control =
    <A extends unknown[], R>(fn: (h: SessionHandle, ...a: A) => Promise<R>) =>
    async (...a: A) =>
      fn(await session, ...a);
  const withClient = async <T>(fn: (c: DurableAgentClient) => Promise<T>): Promise<T> => {
    const client = mapped.client ?? (await DurableAgentClient.connect(mapped.connection));
    try {
      return await fn(client);
    } finally {
      if (!mapped.client) await client.close();
    }
  };
  const supportedModels = (): Promise<ModelInfo[]> =>
    withClient(async (c) =>
      (await listModels(c)).map((m) => ({ value: m.id, displayName: m.id, description: m.ownedBy ? `owned by ${m.ownedBy}` : '' })),
    );
  const accountInfo = async (): Promise<AccountInfo> => ({});
  // The session's options are fixed at start: its agents are the query's (`Task` starts them).
  const supportedAgents = async (): Promise<AgentInfo[]> => agentsOf(mapped);
  /**
   * The session's view: from its workflow, also once it has ended (a closed workflow still answers
   * queries). The query's own connection closes with its stream: then a new one is made to ask.
   */
  const sessionView = async (h: SessionHandle) =>
    mapped.client || !streamEnded ? h.state() : withClient(async (c) => (await c.get(h.sessionId)).state());
  // Servers are listed on the tools worker at session start; until then they are `pending`.
  // Answers before the session starts too (a query that is not iterated yet has no session to ask).
  const mcpServerStatus = async (): Promise<McpServerStatus[]> => {
    const listed = started ? (await sessionView(started)).mcpServers : undefined;
    if (listed) return listed.map((s) => ({ name: s.name, status: s.status, ...(s.error ? { error: s.error } : {}) }));
    // In-process servers (ARCHITECTURE.md#client-mcp-tools) too: connected by this query just before it starts.
    const names = [...Object.keys(mapped.session.mcpServers ?? {}), ...Object.keys(mapped.sdkServers ?? {})];
    return names.map((name) => ({ name, status: 'pending' }));
  };
  const unsupported = Object.fromEntries(
    Object.entries(REFUSED_METHODS).map(([name, why]) => [name, async () => Promise.reject(new NotSupportedError(name, why))]),
  );
  return Object.assign(gen, unsupported, {
    sessionId,
    // Nothing to interrupt once the session has ended: as the SDK's, that is not an error.
    interrupt: control(async (h) => {
      await h.interrupt().catch((e: unknown) => {
        if (!(e instanceof WorkflowNotFoundError)) throw e;
      });
      return undefined;
    }),
    setModel: control((h, model?: string) => h.setModel(model ?? mapped.session.model ?? SessionConfigFields.shape.model.parse(undefined))),
    // Checked before waiting for the session: a refused value is refused even before it starts.
    setPermissionMode: async (mode: PermissionMode) => {
      if (mode === 'auto') throw refuse("permissionMode 'auto'", 'there is no permission classifier');
      if (mode === 'bypassPermissions' && !mapped.allowBypass)
        throw refuse("permissionMode 'bypassPermissions'", 'start the query with allowDangerouslySkipPermissions: true');
      await (await session).setPermissionMode(mode);
      return undefined;
    },
    setMaxThinkingTokens: async (n: number | null, display?: string | null) => {
      if (display != null) throw refuse('thinkingDisplay', 'reasoning text is passed on as the endpoint returns it');
      return (await session).setMaxThinkingTokens(n);
    },
    close: () => onAbort(),
    cancel: control((h) => h.cancel()),
    supportedModels,
    supportedCommands: async () => [],
    supportedAgents,
    mcpServerStatus,
    reloadSkills: async () => ({ skills: [] }),
    reloadOutputStyles: async () => ({ available_output_styles: ['default'] }),
    reloadPlugins: async (opts?: { addPlugins?: unknown[] }) => {
      if (opts?.addPlugins?.length) throw new NotSupportedError('reloadPlugins', 'addPlugins: there are no Claude Code plugins');
      return { commands: [], agents: await supportedAgents(), plugins: [], mcpServers: await mcpServerStatus(), error_count: 0 };
    },
    accountInfo,
    initializationResult: async (): Promise<InitializationResult> => ({
      commands: [],
      agents: await supportedAgents(),
      output_style: 'default',
      available_output_styles: ['default'],
      models: await supportedModels(),
      account: await accountInfo(),
      claude_code_version: DURABLE_AGENT_VERSION,
    }),
    streamInput: (stream: AsyncIterable<SDKUserMessage>) => {
      if (!inputs)
        return Promise.reject(
          new Error(
            'Query.streamInput(): this query was started with a string prompt, which runs a one-shot session; start it in streaming input mode (`prompt` an AsyncIterable of user messages) to send more, or steer the running turn with client.get(id).steer(text)',
          ),
        );
      return inputs.feed(stream[Symbol.asyncIterator]());
    },
  });
}

async function* run(
  prompt: string | AsyncIterable<SDKUserMessage>,
  mapped: MappedOptions,
  stop: AbortSignal,
  resolveSession: (h: SessionHandle) => void,
  rejectSession: (e: unknown) => void,
  inputs: Inputs | undefined,
  onEnded: () => void,
): AsyncGenerator<QueryMessage, void> {
  const client = mapped.client ?? (await DurableAgentClient.connect(mapped.connection));
  let input: AsyncIterator<SDKUserMessage> | undefined;
  /** The in-process MCP servers this query serves (ARCHITECTURE.md#client-mcp-tools): connected before the session starts. */
  let served: ClientMcpServers | undefined;
  try {
    input = typeof prompt === 'string' ? undefined : prompt[Symbol.asyncIterator]();
    let first = typeof prompt === 'string' ? prompt : undefined;
    if (input) {
      const next = await input.next();
      if (next.done) throw new Error('query: the prompt stream ended before its first message');
      first = textOf(next.value);
    }
    let options: Omit<SessionOptions, 'prompt'> = { ...mapped.session };
    if (mapped.continueLatest) {
      const latest = await latestSessionIn(client, mapped.session.cwd);
      if (!latest) throw new Error(`continue: no earlier session was started in ${mapped.session.cwd}`);
      options.resume = latest;
    }
    if (mapped.resumeSessionAt !== undefined) {
      // The fork's folder is the checkpoint's, restored on a tools host: no cwd of its own.
      const { cwd: _cwd, ...rest } = options;
      options = { ...rest, ...(await forkAtMessage(client, options.resume!, mapped.resumeSessionAt)) };
    }
    if (mapped.sdkServers) {
      served = await connectSdkServers(mapped.sdkServers);
      if (served.declaration.length) options = { ...options, clientTools: served.declaration };
    }
    if (stop.aborted)
      return abortedByCaller(mapped, 'Query aborted by its abortController before the session started: nothing was started');
    const handle = await client.start(
      { ...options, prompt: first!, ...(input ? { interactive: true } : {}) },
      options.clientTools ? CLIENT_TOOLS_SERVED : undefined,
    );
    resolveSession(handle);
    // The rest of a streaming prompt is fed like any streamInput() stream; a failure of this one
    // (a message we cannot send, the iterable throwing) ends the query with that error.
    const inputFailed = new AbortController();
    const ended = new AbortController();
    for (const signal of [stop, inputFailed.signal]) {
      if (signal.aborted) ended.abort();
      else signal.addEventListener('abort', () => ended.abort(), { once: true });
    }
    const feeding = input && inputs ? inputs.feed(input) : undefined;
    let feedError: unknown;
    feeding?.catch((e: unknown) => {
      feedError = e;
      inputFailed.abort();
    });
    // canUseTool answers the requests this query sees; breaking off the loop aborts its signal,
    // and an unanswered request stays pending for any other client (ARCHITECTURE.md#durable-approval).
    const answering = new AbortController();
    const responder = mapped.canUseTool ? permissionResponder(handle, mapped.canUseTool, answering.signal) : undefined;
    // Callback hooks likewise (ARCHITECTURE.md#callback-hooks); a subagent's requests are answered on its own session.
    const hooks = mapped.hookCallbacks;
    const hookAnswers = hooks
      ? hookResponder(async (id) => (id === handle.sessionId ? handle : client.get(id)), hooks, answering.signal)
      : undefined;
    // Tools of the in-process MCP servers likewise (ARCHITECTURE.md#client-mcp-tools).
    const toolAnswers = served?.declaration.length ? toolResponder(async () => handle, served, answering.signal) : undefined;
    try {
      // Live tokens come from the worker running each model call (ARCHITECTURE.md#live-tokens).
      const messages = handle.messages({ includePartialMessages: mapped.session.includePartialMessages ?? false });
      for await (const m of untilAborted(messages, ended.signal)) {
        if (responder && m.type === 'system' && m.subtype === 'permission_request') responder.handle(requestFromEvent(m));
        if (hookAnswers && m.type === 'system' && m.subtype === 'hook_request') hookAnswers.handle(hookRequestFromEvent(m));
        if (toolAnswers && m.type === 'system' && m.subtype === 'tool_request' && m.request_session_id === handle.sessionId)
          toolAnswers.handle(toolRequestFromEvent(m));
        if (mapped.stderr) reportDiagnostic(m, mapped.stderr);
        // Our own events (isDurableAgentEvent) travel in the same stream: SDK consumers skip
        // subtypes they do not know.
        yield m;
        if (m.type === 'result') inputs?.answered();
      }
      // SessionEnd hooks fire after the last result, when the stream has ended: answer them until the session closes.
      if (hookAnswers && hooks?.SessionEnd && !ended.signal.aborted) {
        await pollHookRequests(handle, hookAnswers, { signal: ended.signal, pollMs: 100 });
        await hookAnswers.settled();
      }
    } finally {
      answering.abort();
    }
    if (stop.aborted) return abortedByCaller(mapped);
    if (inputFailed.signal.aborted) throw feedError;
  } catch (e) {
    rejectSession(e);
    throw e;
  } finally {
    // The session is over (or the reader left): stop reading the caller's prompt stream.
    void input?.return?.(undefined)?.catch(() => undefined);
    await served?.close();
    onEnded();
    if (!mapped.client) await client.close();
  }
}

/** The stream was stopped: by the caller's `abortController` (an AbortError, as the SDK's) or by `close()` (it just ends). */
function abortedByCaller(mapped: MappedOptions, message?: string): void {
  if (mapped.abortController?.signal.aborted) throw new AbortError(message);
}

/**
 * `resumeSessionAt`: the options of a fork of `sessionId` at the turn holding message `uuid` (its
 * `turnOfMessage` query), with that turn's checkpoint as the fork's folder.
 */
async function forkAtMessage(client: DurableAgentClient, sessionId: string, uuid: string): Promise<ReturnType<typeof forkAtOptions>> {
  const old = await client.get(sessionId);
  const turn = await old.turnOfMessage(uuid).catch((e: unknown) => {
    if (e instanceof QueryNotRegisteredError) {
      throw new ConfigError(
        `resumeSessionAt: session ${sessionId} is from before durable-agent recorded turns: it cannot be forked at a message`,
        'resumeSessionAt',
      );
    }
    throw e;
  });
  if (turn === null) {
    throw new ConfigError(`resumeSessionAt: no message with uuid ${uuid} in session ${sessionId}`, 'resumeSessionAt');
  }
  try {
    return forkAtOptions(sessionId, forkPoint(await old.checkpoints(), sessionId, `resumeSessionAt ${uuid} (turn ${turn})`, turn));
  } catch (e) {
    if (e instanceof CheckpointChoiceError) throw new ConfigError(e.message, 'resumeSessionAt');
    throw e;
  }
}

/** Stop following when `signal` aborts, without waiting for the next poll to answer. */
async function* untilAborted<T>(source: AsyncGenerator<T>, signal: AbortSignal): AsyncGenerator<T> {
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) resolve('aborted');
    signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([source.next(), aborted]);
      if (next === 'aborted' || next.done) return;
      yield next.value;
    }
  } finally {
    void source.return(undefined).catch(() => undefined);
  }
}

/** The SDK's `stderr` carries the agent's diagnostics; ours are these events, one line each. */
function reportDiagnostic(m: StreamMessage, stderr: (data: string) => void): void {
  if (m.type === 'system' && m.subtype === 'api_retry') {
    stderr(
      `[durable-agent] model call failed (${m.error_status ?? 'network'}: ${m.error_message}); retry ${m.attempt}/${m.max_retries} in ${m.retry_delay_ms} ms\n`,
    );
  } else if (isDurableAgentEvent(m) && (m.subtype === 'warning' || m.subtype === 'loop_detected')) {
    stderr(`[durable-agent] ${m.subtype === 'warning' ? 'warning' : 'loop detected'}: ${m.message}\n`);
  }
}

/**
 * The user messages of a query in streaming input mode: the rest of the prompt stream and every
 * `streamInput()` stream, sent as they arrive. Each message steers the running turn or, with no
 * turn running, starts the next (the workflow decides, atomically: `sendMessage` with `steer`);
 * `priority: 'later'` never steers, `'now'` interrupts the running turn first. The session is
 * closed once no stream is open and every turn started has had its result.
 */
class Inputs {
  /** Turns started and not yet answered by a result: a new session's first is `turn-1`. */
  private readonly turns = new Set<string>(['turn-1']);
  private results = 0;
  private open = 0;
  private closing: Promise<void> | undefined;
  constructor(private readonly session: Promise<SessionHandle>) {}

  /** Send each message of `stream`; resolves once each has been accepted by the session. */
  async feed(stream: AsyncIterator<SDKUserMessage>): Promise<void> {
    if (this.closing)
      throw new Error(
        'Query.streamInput(): the session has been closed: every earlier input stream had ended and each message was answered',
      );
    this.open++;
    try {
      const handle = await this.session;
      for (let next = await stream.next(); !next.done; next = await stream.next()) {
        const text = textOf(next.value);
        const priority = next.value.priority;
        if (priority === 'now') await handle.interrupt();
        const { turnId } = await handle.send(text, priority === 'now' || priority === 'later' ? {} : { steer: true });
        this.turns.add(turnId);
      }
    } finally {
      this.open--;
      this.closeWhenAnswered();
    }
  }

  /** A turn's result arrived. */
  answered(): void {
    this.results++;
    this.closeWhenAnswered();
  }

  private closeWhenAnswered(): void {
    if (this.open === 0 && this.results >= this.turns.size) this.closing ??= this.session.then((h) => h.close()).catch(() => undefined);
  }
}

function textOf(m: SDKUserMessage): string {
  if (m.message.role !== 'user') throw new Error(`query: a prompt message has role '${m.message.role}'; only 'user' messages can be sent`);
  const c = m.message.content;
  if (typeof c === 'string') return c;
  const other = c.find((b) => b.type !== 'text');
  if (other) throw new Error(`query: a prompt message has a content block of type '${other.type}'; only text blocks can be sent`);
  return c.map((b) => b.text ?? '').join('');
}

/** `supportedAgents()`: the agents `Task` can start — none when `Task` is disallowed (src/workflows/session/subagents.ts). */
function agentsOf(mapped: MappedOptions): AgentInfo[] {
  const { agents, disallowedTools } = mapped.session;
  if (!agents || (disallowedTools ?? []).some((r) => r.trim() === 'Task')) return [];
  return Object.entries(agents).map(([name, def]) => ({
    name,
    description: def.description,
    ...(typeof def.model === 'string' ? { model: def.model } : {}),
  }));
}
