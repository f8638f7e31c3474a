/**
 * Every method of the Claude Agent SDK's `Query`, and what ours does. A method is supported, or
 * refused: it rejects with a `NotSupportedError` that says why (`Query.X() is not supported by
 * durable-agent: …`). The README's "Query methods" table is printed from this one
 * (`npx tsx scripts/options-table.ts`; test/unit/sdk-options.test.ts keeps them equal) and
 * test/types/sdk-conformance.ts checks that it names exactly the SDK's methods.
 */
export type MethodSupport = { status: 'supported'; note: string } | { status: 'refused'; note: string };

// Each entry keeps its literal status: the conformance check reads which methods are supported.
const yes = (note: string) => ({ status: 'supported', note }) as const;
const no = (note: string) => ({ status: 'refused', note }) as const;

export const QUERY_METHOD_SUPPORT = {
  interrupt: yes('interrupts the running turn (a signal to the session); after the session ended, nothing to interrupt: resolves'),
  setModel: yes('the next model call uses it; no argument: the model the query started with'),
  setPermissionMode: yes('`bypassPermissions` only when the query was started with `allowDangerouslySkipPermissions`; `auto` is refused'),
  setMaxThinkingTokens: yes('sets the `reasoning_effort` of the next calls; a `thinkingDisplay` is refused'),
  close: yes('cancels the session (durably) and ends the stream at once'),
  streamInput: yes('in streaming input mode: each message steers the running turn or starts the next'),
  supportedModels: yes("the models of the workers' endpoint (`GET /v1/models`, asked by a one-activity workflow on a model worker)"),
  supportedCommands: yes('an empty list: prompts are sent verbatim, there are no slash commands'),
  supportedAgents: yes('the session’s `agents` (name, description, model) that `Task` can start; none when `Task` is disallowed'),
  mcpServerStatus: yes(
    'each `mcpServers` entry: `pending` until the tools worker has listed it, then `connected` or `failed` (with the error); after the session ended, the last known status',
  ),
  accountInfo: yes('empty: the endpoint’s credentials are the workers’, there is no client account'),
  initializationResult: yes('the models, the agents, no commands, the `default` output style, the package version'),
  reloadSkills: yes('an empty list: there are no skills to reload'),
  reloadOutputStyles: yes('`default`, the only output style'),
  reloadPlugins: yes('no plugins: the agents, the MCP servers’ status and no commands; `addPlugins` is refused'),
  reinitialize: no('there is no Claude Code process to re-initialize: a session’s options are fixed at start'),
  applyFlagSettings: no('settings are fixed at start; pass `settings` or `settingSources`'),
  updateSettings: no('settings files are read on the tools worker at start'),
  setMcpPermissionModeOverride: no('MCP tools follow the session’s permission mode and rules (`mcp__server`, `mcp__server__tool`)'),
  getContextUsage: no(
    'no per-category token accounting of the context window; read `usage` and `modelUsage` from the result, or `durable-agent usage ID`',
  ),
  usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET: no(
    'lines changed and API time are not tracked; use `durable-agent usage ID` or the session handle’s `usage()`',
  ),
  readFile: no('files are on the tools worker; the model reads them with the Read tool'),
  rewindFiles: no('a session’s files are checkpointed per turn: fork at a turn instead (`resumeSessionAt` with `forkSession: true`)'),
  seedReadState: no('read stamps are durable state the tools record themselves'),
  reconnectMcpServer: no('the tools worker reconnects a closed MCP server by itself on the next call'),
  toggleMcpServer: no('a session’s MCP servers are fixed at start; deny a server’s tools with a `mcp__server` rule instead'),
  readMcpResource: no('resources are read by the model through the server’s `read_resource` tool, on the tools worker'),
  setMcpServers: no('a session’s MCP servers are fixed at start (`mcpServers`)'),
  stopTask: no('no background tasks'),
  backgroundTasks: no('no background tasks'),
} as const satisfies Record<string, MethodSupport>;

/** The refused methods and why (each rejects with a `NotSupportedError` saying so). */
export const REFUSED_METHODS = Object.fromEntries(
  Object.entries(QUERY_METHOD_SUPPORT).flatMap(([name, s]) => (s.status === 'refused' ? [[name, s.note]] : [])),
) as Record<string, string>;
