/**
 * MCP activities on the tools worker (ARCHITECTURE.md#mcp): `listMcpTools` connects each server
 * of a session and lists its tools; `callMcpTool` runs one call. Servers live in this worker's
 * pool. A server that cannot be reached is data — `failed` with the reason at listing, an error
 * result at a call — never a failed activity.
 */
import { Context } from '@temporalio/activity';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  MCP_LIST_RESOURCES,
  MCP_READ_RESOURCE,
  mcpToolName,
  type CallMcpToolInput,
  type ListMcpToolsInput,
  type ListMcpToolsResult,
  type McpServerState,
} from '../../shared/mcp';
import { capText, MAX_TOOL_RESULT_CHARS, type ToolOutcome, type ToolSpec } from '../../shared/tools';
import type { McpActivities } from '../../shared/activities';
import { heartbeatEveryMs } from '../heartbeat';
import { resolveMcpConfig } from './config';
import { McpPool, type McpConnection } from './pool';
import { mcpResultText } from './result-text';
import { DEFAULT_MCP_TOOL_TIMEOUT_MS } from './timeout';

export { McpPool } from './pool';
export { isSdkMcpServer, sdkServerTools } from './sdk-server';
export type { McpSdkServerConfigWithInstance } from './sdk-server';

export interface McpActivityOptions {
  /** How long one MCP call may take (ms): MCP_TOOL_TIMEOUT, read by the worker's settings. Default 10 minutes. */
  callTimeoutMs?: number;
}

function poolKey(server: string, config: Record<string, unknown>, cwd: string | undefined): string {
  return JSON.stringify([server, config, cwd ?? null]);
}

/** OpenAI function names allow [A-Za-z0-9_-]{1,64}; Claude Code replaces anything else with `_`. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

function resourceSpecs(server: string): ToolSpec[] {
  return [
    {
      name: mcpToolName(server, MCP_LIST_RESOURCES),
      description: `List the resources of the MCP server "${server}" (uri, name, description, mime type).`,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      readOnly: true,
      mcp: { server, tool: MCP_LIST_RESOURCES, resource: true },
    },
    {
      name: mcpToolName(server, MCP_READ_RESOURCE),
      description: `Read one resource of the MCP server "${server}" by its uri.`,
      inputSchema: { type: 'object', properties: { uri: { type: 'string', description: 'The resource URI' } }, required: ['uri'] },
      readOnly: true,
      mcp: { server, tool: MCP_READ_RESOURCE, resource: true },
    },
  ];
}

function toolSpecOf(server: string, tool: Tool): ToolSpec {
  return {
    name: mcpToolName(server, safeName(tool.name)),
    description: tool.description ?? tool.title ?? tool.name,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    readOnly: tool.annotations?.readOnlyHint === true,
    mcp: { server, tool: tool.name },
  };
}

export function createMcpActivities(pool: McpPool, opts: McpActivityOptions = {}): McpActivities {
  const callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_MCP_TOOL_TIMEOUT_MS;
  async function connection(server: string, raw: Record<string, unknown>, cwd: string | undefined): Promise<McpConnection> {
    const resolved = resolveMcpConfig(raw);
    if (!resolved.ok) throw new Error(resolved.reason);
    return pool.get(poolKey(server, raw, cwd), resolved.config, cwd);
  }

  async function list(server: string, conn: McpConnection): Promise<ToolSpec[]> {
    const specs: ToolSpec[] = [];
    const caps = conn.client.getServerCapabilities();
    if (caps?.tools) {
      let cursor: string | undefined;
      do {
        const page = await conn.client.listTools(cursor ? { cursor } : {});
        specs.push(...page.tools.map((t) => toolSpecOf(server, t)));
        cursor = page.nextCursor;
      } while (cursor);
    }
    if (caps?.resources) specs.push(...resourceSpecs(server));
    return specs.map((s) => ({ ...s, mcp: { ...s.mcp!, version: conn.version } }));
  }

  return {
    async listMcpTools({ servers, cwd }: ListMcpToolsInput): Promise<ListMcpToolsResult> {
      const entries = Object.entries(servers);
      const listed = await Promise.all(
        entries.map(async ([name, raw]): Promise<{ state: McpServerState; tools: ToolSpec[] }> => {
          try {
            const conn = await connection(name, raw, cwd);
            return { state: { name, status: 'connected' }, tools: await list(name, conn) };
          } catch (e) {
            return { state: { name, status: 'failed', error: (e as Error).message }, tools: [] };
          }
        }),
      );
      return { servers: listed.map((l) => l.state), tools: listed.flatMap((l) => l.tools) };
    },

    async callMcpTool(input: CallMcpToolInput): Promise<ToolOutcome & { version?: string }> {
      const ctx = Context.current();
      const ticker = setInterval(() => ctx.heartbeat(), heartbeatEveryMs());
      try {
        return await callOnce(input, ctx.cancellationSignal, true);
      } finally {
        clearInterval(ticker);
      }
    },
  };

  async function callOnce(
    input: CallMcpToolInput,
    signal: AbortSignal,
    mayReconnect: boolean,
  ): Promise<ToolOutcome & { version?: string }> {
    const { server, tool } = input;
    let conn: McpConnection;
    try {
      conn = await connection(server, input.config, input.cwd);
    } catch (e) {
      return { content: `MCP server "${server}" is not available: ${(e as Error).message}`, isError: true };
    }
    const args = (input.input ?? {}) as Record<string, unknown>;
    const options = { signal, timeout: callTimeoutMs, resetTimeoutOnProgress: true };
    try {
      let text: string;
      let isError = false;
      if (input.resource && tool === MCP_LIST_RESOURCES) {
        const out = await conn.client.listResources({}, options);
        text = JSON.stringify(out.resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description, mimeType: r.mimeType })));
      } else if (input.resource && tool === MCP_READ_RESOURCE) {
        const out = await conn.client.readResource({ uri: String(args.uri) }, options);
        text = out.contents
          .map((c) =>
            'text' in c && typeof c.text === 'string'
              ? c.text
              : `[resource ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ''}, binary, not shown]`,
          )
          .join('\n');
      } else {
        const out = (await conn.client.callTool({ name: tool, arguments: args }, undefined, options)) as Partial<CallToolResult>;
        text = mcpResultText(out);
        isError = out.isError === true;
      }
      return { content: capText(text, MAX_TOOL_RESULT_CHARS), isError, version: conn.version };
    } catch (e) {
      if (signal.aborted) throw e;
      // The server died between calls (the close may be noticed only now): connect again, once.
      if (mayReconnect && conn.closed) return callOnce(input, signal, false);
      return { content: `MCP tool ${mcpToolName(server, tool)} failed: ${(e as Error).message}`, isError: true, version: conn.version };
    }
  }
}
