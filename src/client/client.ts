/**
 * The typed client: start a session, attach to one, list them, stream their messages, steer them.
 * Options are validated here, before anything starts (a bad field is named and nothing runs).
 *
 * Past 300 lines: the client and the session handle share connection, codec and lookup logic;
 * option mapping, permissions and the model catalogue already live in sibling files.
 */
import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  QueryNotRegisteredError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowClientInterceptor,
  type WorkflowHandle,
} from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { PayloadCodec } from '@temporalio/common';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import * as api from '../shared/api';
import { startConfig, startSearchAttributes } from '../shared/batch';
import { checkPromptSize, parseSessionConfig, type PermissionMode, type SessionOptions } from '../shared/config';
import { droppedEnvWarning, screenSessionEnv } from '../shared/secret-env';
import { refuseMcpSecrets } from '../shared/mcp';
import { refuseBadOutputSchema } from '../activities/model/output-schema';
import type { EventsPage, ResultMessage, SessionEvent } from '../shared/events';
import type { Message } from '../shared/messages';
import type { CheckpointsView } from '../shared/checkpoint';
import { codecFromEnv } from '../codec';
import { pendingPermissionsQuery, respondToPermissionUpdate, type PendingPermission, type PermissionAnswer } from '../shared/approvals';
import { answerPermissions, type CanUseTool } from './permissions';
import { pendingHookRequestsQuery, respondToHookUpdate, type HookAnswer, type PendingHookRequest } from '../shared/client-hooks';
import { ConfigError } from '../shared/config-error';
import { answerHooks, firstCallback, type HooksOption } from './hook-callbacks';
import { pendingToolRequestsQuery, respondToToolUpdate, type PendingToolRequest, type ToolAnswer } from '../shared/client-tools';
import { answerTools, firstSdkServer } from './client-tools';
import { followEvents, quote } from './stream';
import { listRuns } from './visibility';
import { followWithPartials, type LiveOptions, type StreamMessage } from './live';
import { connectTemporal } from '../server/connection';

export interface ConnectOptions {
  /** `host:port`; default: the profile's, else TEMPORAL_ADDRESS, else localhost:7233. */
  address?: string;
  namespace?: string;
  /** Temporal Cloud API key (turns TLS on); default: the profile's or TEMPORAL_API_KEY. */
  apiKey?: string;
  tls?: TLSConfig | boolean;
  /** Profile in the Temporal config file (TOML; TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml). */
  profile?: string;
  configFile?: string;
  /** Environment to read TEMPORAL_* variables from (default process.env). */
  env?: Record<string, string | undefined>;
  /** Use this connection instead of opening one (it is not closed by close()). */
  connection?: Connection;
  /** The workers' workflow queue (default DURABLE_AGENT_TASK_QUEUE, else `agent`). */
  taskQueue?: string;
  /** Payload codecs, the same as the workers' (ARCHITECTURE.md#payload-codec); default from
   *  DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_COMPRESS in `env` (src/codec/); `[]` turns them off. */
  payloadCodecs?: PayloadCodec[];
  /** Workflow client interceptors, e.g. `clientTracing()` so a session's spans join the caller's trace (ARCHITECTURE.md#observability). */
  interceptors?: WorkflowClientInterceptor[];
}

/** The connection settings `connect` would use: explicit options over profile over TEMPORAL_* variables. */
export function resolveConnectOptions(opts: ConnectOptions = {}): {
  address: string;
  namespace: string;
  taskQueue: string;
  apiKey?: string;
  tls?: TLSConfig | boolean;
  metadata?: Record<string, string>;
} {
  const env = Object.fromEntries(Object.entries(opts.env ?? process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const profile = loadClientConnectConfig({
    ...(opts.profile ? { profile: opts.profile } : {}),
    ...(opts.configFile ? { configSource: { path: opts.configFile } } : {}),
    overrideEnvVars: env,
  });
  const c = profile.connectionOptions;
  const apiKey = opts.apiKey ?? (typeof c.apiKey === 'string' ? c.apiKey : undefined);
  const tls = opts.tls ?? c.tls ?? (opts.apiKey ? true : undefined);
  return {
    address: opts.address ?? c.address ?? 'localhost:7233',
    namespace: opts.namespace ?? profile.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? env.DURABLE_AGENT_TASK_QUEUE ?? api.TASK_QUEUES.workflow,
    ...(apiKey ? { apiKey } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(c.metadata ? { metadata: c.metadata as Record<string, string> } : {}),
  };
}

/** The session id is taken (a session with that id exists or existed); nothing was started. */
export class SessionExistsError extends Error {
  constructor(readonly sessionId: string) {
    super(`a session with id ${sessionId} already exists (choose another --id, or watch it)`);
    this.name = 'SessionExistsError';
  }
}

/** No session with that id. */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`no session with id ${sessionId}`);
    this.name = 'SessionNotFoundError';
  }
}

export interface ListFilter {
  /** AgentStatus: running, waiting_for_input, completed, failed, … (`running`/`waiting_for_input` also require an open workflow). */
  status?: string;
  batchId?: string;
  model?: string;
  /** Extra visibility query, ANDed. */
  query?: string;
  /** At most this many (default 100). */
  limit?: number;
}

export interface SessionSummary {
  sessionId: string;
  runId: string;
  status: string;
  executionStatus: string;
  model?: string;
  turns?: number;
  costUsd?: number;
  batchId?: string;
  /** The build of the worker deployment the run is on (ARCHITECTURE.md#deploys); absent when unversioned. */
  buildId?: string;
  startTime: Date;
  closeTime?: Date;
}

/**
 * Passed by query() to `start()` with the `clientTools` it declared from the in-process servers it
 * serves; any other start with `clientTools` is refused (nobody would run them).
 */
export const CLIENT_TOOLS_SERVED: unique symbol = Symbol('durable-agent.clientToolsServed');

export class DurableAgentClient {
  private constructor(
    readonly client: Client,
    /** The workflow queue sessions (and batches) are started on. */
    readonly taskQueue: string,
    private readonly ownsConnection: boolean,
    /** The codecs payloads are encoded with; listing decodes memos with them (src/client/visibility.ts). */
    readonly payloadCodecs: PayloadCodec[] = [],
  ) {}

  static async connect(opts: ConnectOptions = {}): Promise<DurableAgentClient> {
    const settings = resolveConnectOptions(opts);
    // Before connecting: a malformed key fails here, not at the first payload.
    const payloadCodecs = opts.payloadCodecs ?? codecFromEnv(opts.env ?? process.env);
    const connection =
      opts.connection ??
      (await connectTemporal({
        address: settings.address,
        ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
        ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
        ...(settings.metadata ? { metadata: settings.metadata } : {}),
      }));
    const client = new Client({
      connection,
      namespace: settings.namespace,
      ...(payloadCodecs?.length ? { dataConverter: { payloadCodecs } } : {}),
      ...(opts.interceptors ? { interceptors: { workflow: opts.interceptors } } : {}),
    });
    return new DurableAgentClient(client, settings.taskQueue, !opts.connection, payloadCodecs ?? []);
  }

  get namespace(): string {
    return this.client.options.namespace;
  }

  /**
   * Validate options, start the session workflow, and return its handle. `env` entries that look
   * like credentials or belong to this host are dropped, never sent (src/shared/secret-env.ts); the
   * handle's `warnings` and the session's stream say which.
   */
  async start(options: SessionOptions, served?: typeof CLIENT_TOOLS_SERVED): Promise<SessionHandle> {
    checkPromptSize(options.prompt);
    // An in-process MCP server is served by the process that called query(); a detached session has none (ARCHITECTURE.md#client-mcp-tools).
    const sdkServer = firstSdkServer(options.mcpServers);
    if (sdkServer !== undefined) {
      throw new ConfigError(
        `${sdkServer}: an in-process MCP server (type 'sdk', createSdkMcpServer) is served by the process that called query(), ` +
          'which runs its tools while it reads the session; client.start() starts a session detached, so nobody would run them. ' +
          'Pass the server to query(), or register it on the worker (createWorker({ tools: [server] }))',
        sdkServer,
      );
    }
    if (options.clientTools !== undefined && served !== CLIENT_TOOLS_SERVED) {
      throw new ConfigError(
        'clientTools: the tools of in-process MCP servers are run by the process that called query(), which declares them from ' +
          "`mcpServers` (type 'sdk'); client.start() starts a session detached, so nobody would run them. Pass the servers to query()",
        'clientTools',
      );
    }
    // A callback needs a process to answer it; a session started here has none (ARCHITECTURE.md#callback-hooks).
    const callback = firstCallback(options.hooks);
    if (callback !== undefined) {
      throw new ConfigError(
        `${callback}: a callback hook is answered by the process that called query(), which keeps answering while it reads the session; ` +
          'client.start() starts a session detached, so nobody would answer it. Pass the hooks to query(), register them on the worker ' +
          "(createWorker({ hooks })), or use command hooks ({ type: 'command', command })",
        callback,
      );
    }
    // The one rule for a session's env (ARCHITECTURE.md#secrets-stay-on-workers); a caller's own
    // `envDropped` (a resumed session's, inherited) is replaced by what this start dropped.
    const { envDropped: _inherited, ...rest } = options;
    const screened = screenSessionEnv(options.env);
    const config = parseSessionConfig({
      ...rest,
      ...(options.env !== undefined ? { env: screened.env } : {}),
      ...(screened.dropped.length ? { envDropped: screened.dropped } : {}),
      platform: options.platform ?? process.platform,
      startedAt: options.startedAt ?? new Date().toISOString(),
    });
    if (config.mcpServers) refuseMcpSecrets(config.mcpServers);
    refuseBadOutputSchema(config.outputFormat);
    const sessionId = config.sessionId ?? (config.resume && !config.forkSession ? config.resume : `session-${randomUUID()}`);
    let handle: StartedHandle;
    try {
      handle = await this.client.workflow.start(api.WORKFLOW_TYPE, {
        workflowId: sessionId,
        taskQueue: this.taskQueue,
        args: [startConfig({ ...config, sessionId })],
        typedSearchAttributes: startSearchAttributes(config),
        // Read back by `latestSessionIn` (catalog.ts, the SDK's `continue`) and `listSessions`
        // (list-sessions.ts, its `firstPrompt`); a memo needs no registration on the server, and is
        // encoded with the payload codecs like the prompt in the start input.
        memo: { cwd: config.cwd, firstPrompt: promptSummary(config.prompt) },
        // A closed session's id may be reused only to resume it.
        workflowIdReusePolicy: config.resume === sessionId ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      });
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) throw new SessionExistsError(sessionId);
      throw e;
    }
    return new SessionHandle(this.client, sessionId, handle, screened.dropped.length ? [droppedEnvWarning(screened.dropped)] : []);
  }

  /** Attach to an existing session by id (follows continue-as-new: the latest run is used). */
  async get(sessionId: string): Promise<SessionHandle> {
    const handle = this.client.workflow.getHandle(sessionId);
    try {
      await handle.describe();
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new SessionNotFoundError(sessionId);
      throw e;
    }
    return new SessionHandle(this.client, sessionId, handle);
  }

  /** Sessions, newest first, found through visibility and our search attributes. */
  async *list(filter: ListFilter = {}): AsyncGenerator<SessionSummary> {
    const clauses = [`WorkflowType = ${quote(api.WORKFLOW_TYPE)}`];
    if (filter.status) {
      clauses.push(`${api.SEARCH_ATTRIBUTES.status} = ${quote(filter.status)}`);
      if (['running', 'waiting_for_input', 'waiting_for_approval'].includes(filter.status)) clauses.push(`ExecutionStatus = 'Running'`);
    }
    if (filter.batchId) clauses.push(`${api.SEARCH_ATTRIBUTES.batchId} = ${quote(filter.batchId)}`);
    if (filter.model) clauses.push(`${api.SEARCH_ATTRIBUTES.model} = ${quote(filter.model)}`);
    if (filter.query) clauses.push(`(${filter.query})`);
    let n = 0;
    const limit = filter.limit ?? 100;
    if (limit <= 0) return;
    for await (const w of listRuns(this.client, clauses.join(' AND '), { pageSize: Math.min(limit, 1000) })) {
      const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
      const one = <T>(name: string) => sa[name]?.[0] as T | undefined;
      yield {
        sessionId: w.workflowId,
        runId: w.runId,
        status: one<string>(api.SEARCH_ATTRIBUTES.status) ?? 'unknown',
        executionStatus: w.status,
        model: one<string>(api.SEARCH_ATTRIBUTES.model),
        turns: one<number>(api.SEARCH_ATTRIBUTES.turns),
        costUsd: one<number>(api.SEARCH_ATTRIBUTES.costUsd),
        batchId: one<string>(api.SEARCH_ATTRIBUTES.batchId),
        ...(w.buildId ? { buildId: w.buildId } : {}),
        startTime: w.startTime,
        closeTime: w.closeTime,
      };
      if (++n >= limit) return;
    }
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.client.connection.close();
  }
}

/** A session's first prompt as `listSessions` shows it: one line, at most MEMO_PROMPT_CHARS characters. */
const MEMO_PROMPT_CHARS = 200;
function promptSummary(prompt: string): string {
  const chars = [
    ...prompt
      .slice(0, MEMO_PROMPT_CHARS * 4)
      .replace(/\s+/g, ' ')
      .trim(),
  ];
  return chars.length <= MEMO_PROMPT_CHARS ? chars.join('') : `${chars.slice(0, MEMO_PROMPT_CHARS - 1).join('')}…`;
}

/** A workflow handle; from start() it also names the first run. */
export type StartedHandle = WorkflowHandle & { readonly firstExecutionRunId?: string };

export class SessionHandle {
  constructor(
    private readonly client: Client,
    readonly sessionId: string,
    /** The handle it was started or found with (from start(): carries `firstExecutionRunId`). */
    readonly workflow: StartedHandle,
    /** From start(): what the start changed in the options (dropped `env` entries); also in the session's stream. */
    readonly warnings: readonly string[] = [],
  ) {}

  /** The session's latest run: queries, signals and updates always reach the current run. */
  private get latest(): WorkflowHandle {
    return this.client.workflow.getHandle(this.sessionId);
  }

  /**
   * The session's messages as they happen: polls the `events` query, follows continue-as-new
   * (sequence numbers continue across runs, so `after` works across them) and ends after the
   * final `result`. `after` resumes from a sequence number (e.g. after a client restart).
   * With `includePartialMessages`, also each model call's `stream_event`s as the model streams
   * them (ARCHITECTURE.md#live-tokens), before the call's `assistant` message.
   */
  messages(opts?: { after?: number; pollMs?: number; includePartialMessages?: false }): AsyncGenerator<SessionEvent>;
  messages(opts: LiveOptions & { includePartialMessages: boolean }): AsyncGenerator<StreamMessage>;
  messages(opts: LiveOptions & { includePartialMessages?: boolean } = {}): AsyncGenerator<StreamMessage> {
    const { includePartialMessages, ...rest } = opts;
    return includePartialMessages ? followWithPartials(this.client, this.sessionId, rest) : followEvents(this.client, this.sessionId, rest);
  }

  events(opts: { after?: number; limit?: number } = {}): Promise<EventsPage> {
    return this.latest.query(api.eventsQuery, opts);
  }
  interrupt(): Promise<void> {
    return this.latest.signal(api.interruptSignal);
  }
  setModel(model: string): Promise<void> {
    return this.latest.signal(api.setModelSignal, model);
  }
  setPermissionMode(mode: PermissionMode): Promise<void> {
    return this.latest.signal(api.setPermissionModeSignal, mode);
  }
  setMaxThinkingTokens(tokens: number | null): Promise<void> {
    return this.latest.signal(api.setMaxThinkingTokensSignal, tokens);
  }
  /**
   * A follow-up message for an interactive session, acknowledged by the workflow (the `sendMessage`
   * update): resolves with the turn it starts; rejects (WorkflowUpdateFailedError) when the session
   * is not interactive, is closed, or the text is empty. A repeated `id` is accepted once.
   */
  async send(text: string, opts: { id?: string; steer?: boolean } = {}): Promise<{ turnId: string; duplicate: boolean }> {
    checkPromptSize(text, 'text');
    return this.latest.executeUpdate(api.sendMessageUpdate, {
      args: [{ text, ...(opts.id ? { id: opts.id } : {}), ...(opts.steer ? { steer: true } : {}) }],
    });
  }
  /**
   * Steer the running turn: the model gets `text` before its next call in this turn, after the
   * current tool results (one-shot sessions too). With no turn running, an interactive session
   * takes it as a follow-up; a one-shot session rejects it.
   */
  steer(text: string, opts: { id?: string } = {}): Promise<{ turnId: string; duplicate: boolean }> {
    return this.send(text, { ...opts, steer: true });
  }
  /** Ends an interactive session once its current turn is over. */
  close(): Promise<void> {
    return this.latest.signal(api.closeSignal);
  }
  usage(): Promise<api.SessionUsage> {
    return this.latest.query(api.usageQuery);
  }
  turnCount(): Promise<number> {
    return this.latest.query(api.turnCountQuery);
  }
  state(): Promise<api.SessionView> {
    return this.latest.query(api.sessionViewQuery);
  }
  async transcript(): Promise<Message[]> {
    const all: Message[] = [];
    for (;;) {
      const page = await this.latest.query(api.transcriptQuery, { start: all.length });
      if (page.length === 0) return all;
      all.push(...page);
    }
  }
  /**
   * The session's checkpoints by turn (ARCHITECTURE.md#checkpoints); null for a session from before
   * checkpoints (its workflow has no such query).
   */
  async checkpoints(): Promise<CheckpointsView | null> {
    try {
      return await this.latest.query(api.checkpointsQuery);
    } catch (e) {
      if (e instanceof QueryNotRegisteredError) return null;
      throw e;
    }
  }
  /** The turn (counted across resumes) a stream message's `uuid` belongs to, or null when none does. */
  turnOfMessage(uuid: string): Promise<number | null> {
    return this.latest.query(api.turnOfMessageQuery, uuid);
  }
  /** Tool calls waiting for a person's answer (ARCHITECTURE.md#durable-approval). */
  pendingPermissions(): Promise<PendingPermission[]> {
    return this.latest.query(pendingPermissionsQuery);
  }
  /**
   * Answer a pending request: allow (once, with `updatedInput`, or `always` — the request's
   * suggested rules join the session), or deny with a `message` the model sees (and `interrupt`).
   * Rejects (WorkflowUpdateFailedError) for an unknown or already-answered request id.
   */
  respond(answer: PermissionAnswer): Promise<{ applied: true; rulesAdded: string[] }> {
    return this.latest.executeUpdate(respondToPermissionUpdate, { args: [answer] });
  }
  /**
   * Answer this session's pending requests with an SDK-style `canUseTool` until `signal` aborts or
   * the session ends — requests other clients saw and left unanswered included.
   */
  answerPermissions(canUseTool: CanUseTool, opts: { signal?: AbortSignal; pollMs?: number } = {}): Promise<void> {
    return answerPermissions(this, canUseTool, opts);
  }
  /** Callback hooks waiting for a client's answer (ARCHITECTURE.md#callback-hooks). */
  pendingHookRequests(): Promise<PendingHookRequest[]> {
    return this.latest.query(pendingHookRequestsQuery);
  }
  /**
   * Answer a pending hook request: one result per callback of its matcher, `{output}` (the SDK's
   * hook output; its decision fields are kept) or `{error}`. Rejects (WorkflowUpdateFailedError)
   * for an unknown, answered or timed-out request id.
   */
  respondToHook(answer: HookAnswer): Promise<{ applied: true }> {
    return this.latest.executeUpdate(respondToHookUpdate, { args: [answer] });
  }
  /**
   * Answer this session's hook requests — and its running subagents' — with the callbacks of
   * `hooks` (the `options.hooks` given to `query()`) until `signal` aborts or the session ends:
   * how another process takes over from a client that went away.
   */
  answerHooks(hooks: HooksOption, opts: { signal?: AbortSignal; pollMs?: number } = {}): Promise<void> {
    return answerHooks(this, hooks, opts);
  }
  /** Calls of client tools waiting for a client's answer (ARCHITECTURE.md#client-mcp-tools). */
  pendingToolRequests(): Promise<PendingToolRequest[]> {
    return this.latest.query(pendingToolRequestsQuery);
  }
  /**
   * Answer a pending tool request with the result's text (`isError` for a failed call). Rejects
   * (WorkflowUpdateFailedError) for an unknown, answered or timed-out request id.
   */
  respondToTool(answer: ToolAnswer): Promise<{ applied: true }> {
    return this.latest.executeUpdate(respondToToolUpdate, { args: [answer] });
  }
  /**
   * Run this session's pending client-tool calls with the in-process servers of `mcpServers` (the
   * `options.mcpServers` given to `query()`) until `signal` aborts or the session ends: how another
   * process takes over from a client that went away.
   */
  answerTools(mcpServers: Record<string, unknown>, opts: { signal?: AbortSignal; pollMs?: number } = {}): Promise<void> {
    return answerTools(this, mcpServers, opts);
  }
  /** Handles of the subagents this session is running now. */
  async subagentSessions(): Promise<SessionHandle[]> {
    const running = ((await this.state()).subagents ?? []).filter((r) => r.status === 'running');
    return running.map((r) => new SessionHandle(this.client, r.workflowId, this.client.workflow.getHandle(r.workflowId)));
  }
  /** Whether the session's latest run is still running. */
  async isOpen(): Promise<boolean> {
    return (await this.latest.describe()).status.name === 'RUNNING';
  }
  /**
   * The final result message (waits for the session to end; follows continue-as-new). A handle
   * from start() waits on the run it started and the runs that run continued as, so a later
   * `resume` under the same id does not change its answer; a handle from get() waits on the
   * latest run. Naming the run also spares the server a look-up of the session's current run on
   * every long poll, which grows with the history store (ARCHITECTURE.md#result-by-run).
   */
  result(): Promise<ResultMessage> {
    const handle = this.workflow.firstExecutionRunId !== undefined ? this.workflow : this.latest;
    return handle.result() as Promise<ResultMessage>;
  }
  /** Cancel the session: the current turn stops and it ends with an `aborted` result. */
  cancel(): Promise<void> {
    return this.latest.cancel().then(() => undefined);
  }
}
