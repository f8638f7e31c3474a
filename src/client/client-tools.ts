/**
 * In-process MCP servers served by the process that called `query()` (ARCHITECTURE.md#client-mcp-tools).
 * An SDK server (`createSdkMcpServer`, `{ type: 'sdk' }` in `options.mcpServers`) holds code, which
 * a durable session cannot carry; so before the session starts this process connects an MCP client
 * to each server through an in-memory transport pair, lists its tools, and the session carries only
 * their declaration (`clientTools`). For each `system/tool_request` this client sees, it calls the
 * tool through that client and sends the result with the `respondToTool` update — the channel
 * callback hooks use (hook-callbacks.ts). The request lives in the workflow, so a client that goes
 * away before answering leaves it pending for another (`answerTools`), until its timeout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../shared/config-error';
import { capText, MAX_TOOL_RESULT_CHARS } from '../shared/tools';
import { clientToolName, type ClientTool, type PendingToolRequest, type ToolAnswer } from '../shared/client-tools';
import type { ToolRequestMessage } from '../shared/events';
import { DURABLE_AGENT_VERSION } from '../shared/version';
import { mcpResultText } from '../activities/mcp/result-text';
import type { SdkMcpToolDefinition } from '../activities/mcp/sdk-server';
import { answerPending, onceEachResponder, sendAnswer, type Responder } from './responder';

/**
 * An in-process server as `options.mcpServers` holds it: the Claude Agent SDK's
 * (`{ type: 'sdk', name, instance }`, an `McpServer`) or ours (`{ type: 'sdk', name, tools }`).
 */
export interface SdkServerOption {
  type: 'sdk';
  name?: string;
  version?: string;
  instance?: unknown;
  tools?: SdkMcpToolDefinition[];
}

function isSdkServerOption(v: unknown): v is SdkServerOption {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'sdk';
}

/** The servers of `options.mcpServers` split: those for the tools worker, and the in-process ones served here. */
export function splitMcpServers(servers: unknown): {
  remote?: Record<string, Record<string, unknown>>;
  sdk?: Record<string, SdkServerOption>;
} {
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) return { remote: servers as never };
  const remote: Record<string, Record<string, unknown>> = {};
  const sdk: Record<string, SdkServerOption> = {};
  for (const [name, cfg] of Object.entries(servers)) {
    if (isSdkServerOption(cfg)) sdk[name] = cfg;
    else remote[name] = cfg as Record<string, unknown>;
  }
  return {
    ...(Object.keys(remote).length ? { remote } : {}),
    ...(Object.keys(sdk).length ? { sdk } : {}),
  };
}

/** The first in-process server among `mcpServers` (session options, not query()): its field, or undefined. */
export function firstSdkServer(servers: unknown): string | undefined {
  const sdk = splitMcpServers(servers).sdk;
  const name = sdk ? Object.keys(sdk)[0] : undefined;
  return name === undefined ? undefined : `mcpServers.${name}`;
}

/** This process's connections to its in-process servers, by their names in `mcpServers`. */
export interface ClientMcpServers {
  /** The tools to declare in the session (`clientTools`); empty when the servers have none. */
  declaration: ClientTool[];
  clients: ReadonlyMap<string, Client>;
  close(): Promise<void>;
}

/** The server to connect to: the SDK's `instance`, or one built here from our `tools`. */
function serverOf(name: string, option: SdkServerOption): McpServer {
  const instance = option.instance as { connect?: unknown } | undefined;
  if (instance && typeof instance.connect === 'function') return instance as McpServer;
  if (!Array.isArray(option.tools)) {
    throw new ConfigError(
      `mcpServers.${name}: a type 'sdk' server needs an MCP server \`instance\` or \`tools\`; make it with createSdkMcpServer()`,
      `mcpServers.${name}`,
    );
  }
  const server = new McpServer({ name: option.name ?? name, version: option.version ?? '1.0.0' });
  for (const t of option.tools) {
    server.registerTool(
      t.name,
      {
        description: t.description,
        inputSchema: t.inputSchema as never,
        ...(t.annotations ? { annotations: t.annotations } : {}),
      },
      ((args: never, extra: unknown) => t.handler(args, extra)) as never,
    );
  }
  return server;
}

/**
 * Connect an MCP client to each in-process server (an in-memory transport pair) and list its tools.
 * A server that cannot be connected or listed fails the query before anything starts, naming it.
 */
export async function connectSdkServers(servers: Record<string, SdkServerOption>): Promise<ClientMcpServers> {
  const clients = new Map<string, Client>();
  const closers: (() => Promise<void>)[] = [];
  const declaration: ClientTool[] = [];
  const close = async () => {
    await Promise.allSettled(closers.map((c) => c()));
  };
  try {
    for (const [name, option] of Object.entries(servers)) {
      const server = serverOf(name, option);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'durable-agent', version: DURABLE_AGENT_VERSION });
      try {
        await server.connect(serverSide);
        closers.push(() => server.close());
        await client.connect(clientSide);
        closers.push(() => client.close());
        if (client.getServerCapabilities()?.tools) {
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor ? { cursor } : {});
            for (const t of page.tools) {
              declaration.push({
                server: name,
                name: t.name,
                description: t.description ?? t.title ?? '',
                inputSchema: t.inputSchema as Record<string, unknown>,
                ...(t.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
              });
            }
            cursor = page.nextCursor;
          } while (cursor);
        }
      } catch (e) {
        if (e instanceof ConfigError) throw e;
        throw new ConfigError(
          `mcpServers.${name}: the in-process MCP server could not be connected: ${(e as Error).message}`,
          `mcpServers.${name}`,
        );
      }
      clients.set(name, client);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { declaration, clients, close };
}

/** One request as the responder needs it: which session holds it, and what to call. */
export interface ToolRequestLike {
  sessionId: string;
  requestId: string;
  server: string;
  tool: string;
  input: unknown;
  timeoutMs: number;
}

export function toolRequestFromEvent(m: ToolRequestMessage): ToolRequestLike {
  return {
    sessionId: m.request_session_id,
    requestId: m.request_id,
    server: m.server,
    tool: m.tool,
    input: m.tool_input,
    timeoutMs: m.timeout_ms,
  };
}

function toolRequestFromPending(sessionId: string, p: PendingToolRequest): ToolRequestLike {
  // What is left of its wait is not known here (clocks differ): the whole timeout bounds the call.
  return { sessionId, requestId: p.requestId, server: p.server, tool: p.tool, input: p.input, timeoutMs: p.timeoutMs };
}

/**
 * Call the tool through `client`; the answer to send, or undefined when `leaving` aborted (this
 * client went away: the request stays pending). A failed call — the tool threw, the server is
 * gone, the call outlived the session's wait — is an error result.
 */
export async function callServedTool(
  client: Client,
  request: ToolRequestLike,
  toolName: string,
  leaving: AbortSignal,
): Promise<ToolAnswer | undefined> {
  try {
    const args = (request.input ?? {}) as Record<string, unknown>;
    const out = (await client.callTool({ name: request.tool, arguments: args }, undefined, {
      signal: leaving,
      timeout: request.timeoutMs,
    })) as Partial<CallToolResult>;
    if (leaving.aborted) return undefined;
    return {
      requestId: request.requestId,
      content: capText(mcpResultText(out), MAX_TOOL_RESULT_CHARS),
      ...(out.isError === true ? { isError: true } : {}),
    };
  } catch (e) {
    if (leaving.aborted) return undefined;
    return {
      requestId: request.requestId,
      content: `Error: MCP tool ${toolName} failed: ${(e as Error)?.message ?? String(e)}`,
      isError: true,
    };
  }
}

/** What answering needs from a session (SessionHandle has it). */
export interface ToolSession {
  readonly sessionId: string;
  pendingToolRequests(): Promise<PendingToolRequest[]>;
  respondToTool(answer: ToolAnswer): Promise<unknown>;
  isOpen(): Promise<boolean>;
}

/** Calls a request's tool and sends its result (once per request). */
export type ToolResponder = Responder<ToolRequestLike>;

/** Answers tool requests with `served`'s servers until `signal` aborts; then nothing more is sent. */
export function toolResponder(
  sessionFor: (sessionId: string) => Promise<ToolSession>,
  served: Pick<ClientMcpServers, 'clients'>,
  signal: AbortSignal,
): ToolResponder {
  const answerOne = async (request: ToolRequestLike) => {
    const client = served.clients.get(request.server);
    // Not ours (another client's server): leave it to that client.
    if (!client) return;
    const answer = await callServedTool(client, request, clientToolName({ server: request.server, name: request.tool }), signal);
    if (!answer || signal.aborted) return;
    const session = await sessionFor(request.sessionId).catch(() => undefined);
    if (session)
      await sendAnswer(
        () => session.respondToTool(answer),
        () => session.isOpen(),
        signal,
      );
  };
  return onceEachResponder((r) => `${r.sessionId}\n${r.requestId}`, answerOne, signal);
}

/**
 * Answer a session's pending tool requests with the in-process servers of `mcpServers` (the same
 * option given to `query()`; other servers are skipped), including requests another client saw and
 * left, until `signal` aborts or the session closes. Polls the `pendingToolRequests` query.
 */
export async function answerTools(
  session: ToolSession,
  mcpServers: Record<string, unknown>,
  opts: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<void> {
  const sdk = splitMcpServers(mcpServers).sdk;
  if (!sdk) throw new ConfigError("answerTools: mcpServers has no in-process server (type 'sdk', createSdkMcpServer)", 'mcpServers');
  const served = await connectSdkServers(sdk);
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  const responder = toolResponder(async () => session, served, stop.signal);
  try {
    await answerPending(
      async () => (await session.pendingToolRequests()).map((p) => toolRequestFromPending(session.sessionId, p)),
      () => session.isOpen(),
      responder,
      { signal: stop.signal, pollMs: opts.pollMs },
    );
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    stop.abort();
    await served.close();
  }
}
