/**
 * MCP in the workflow (ARCHITECTURE.md#mcp): the session's servers are listed by an activity on
 * the tools queue at start; a call reporting a newer connection version (the server restarted, or
 * said its tool list changed) lists them again before the result goes back.
 */
import { patched } from '@temporalio/workflow';
import type { McpActivities } from '../shared/activities';
import type { McpServerState } from '../shared/mcp';
import type { ToolOutcome, ToolSpec } from '../shared/tools';
import type { LoopState } from './state';

/** Sessions recorded before MCP servers existed never list them. */
const MCP_PATCH = 'mcp-servers';

export interface McpDeps {
  state: LoopState;
  mcp: McpActivities;
}

function hasServers(state: LoopState): boolean {
  return Object.keys(state.config.mcpServers ?? {}).length > 0;
}

/** The servers' tools at session start (none when the session has no servers). */
export async function listMcpTools(deps: McpDeps): Promise<ToolSpec[]> {
  const { state } = deps;
  if (!hasServers(state) || !patched(MCP_PATCH)) return [];
  const listed = await deps.mcp.listMcpTools({ servers: state.config.mcpServers ?? {}, cwd: state.config.cwd });
  state.mcpServers = listed.servers;
  return listed.tools;
}

/** Run an MCP call; on a changed connection version, refresh that server's tools in `state.tools`. */
export async function callMcpTool(deps: McpDeps, spec: ToolSpec, input: unknown): Promise<ToolOutcome> {
  const { state } = deps;
  const ref = spec.mcp!;
  const out = await deps.mcp.callMcpTool({
    server: ref.server,
    config: state.config.mcpServers?.[ref.server] ?? {},
    tool: ref.tool,
    ...(ref.resource ? { resource: true } : {}),
    input,
    cwd: state.config.cwd,
  });
  if (out.version !== undefined && ref.version !== undefined && out.version !== ref.version) await relist(deps, ref.server);
  return { content: out.content, isError: out.isError };
}

async function relist(deps: McpDeps, server: string): Promise<void> {
  const { state } = deps;
  const config = state.config.mcpServers?.[server];
  if (!config) return;
  const listed = await deps.mcp.listMcpTools({ servers: { [server]: config }, cwd: state.config.cwd });
  const status = listed.servers[0];
  if (status?.status !== 'connected') return;
  // Keep the order: the server's tools replace its old ones where they were.
  const at = state.tools.findIndex((t) => t.mcp?.server === server);
  const others = state.tools.filter((t) => t.mcp?.server !== server);
  const hidden = new Set(state.config.disallowedTools.filter((r) => !r.includes('(')).map((r) => r.trim()));
  const fresh = listed.tools.filter((t) => !hidden.has(t.name));
  state.tools = at < 0 ? [...others, ...fresh] : [...others.slice(0, at), ...fresh, ...others.slice(at)];
  state.mcpServers = (state.mcpServers ?? []).map((s): McpServerState => (s.name === server ? status : s));
}
