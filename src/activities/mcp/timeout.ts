/** How long one MCP call may take (ms): Claude Code's MCP_TOOL_TIMEOUT, default 10 minutes. */
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 600_000;

/** MCP_TOOL_TIMEOUT from the worker's environment; not a positive number: the default. */
export function mcpToolTimeoutMsFromEnv(env: Record<string, string | undefined>): number {
  const n = Number(env.MCP_TOOL_TIMEOUT);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_MCP_TOOL_TIMEOUT_MS;
}
