/**
 * Every key of the Claude Agent SDK's `Options`, and what `query()` does with it. A key is
 * supported, supported later (by an open issue), or refused by name before anything starts —
 * never silently ignored. The README's "Options" table is printed from this one
 * (`npx tsx scripts/options-table.ts`; test/unit/sdk-options.test.ts keeps them equal) and
 * test/types/sdk-conformance.ts checks that it names exactly the SDK's keys.
 */
import type { SDKOptions } from './types';

export type OptionSupport =
  { status: 'supported'; note: string } | { status: 'later'; issue: number; note: string } | { status: 'refused'; note: string };

const yes = (note: string): OptionSupport => ({ status: 'supported', note });
const no = (note: string): OptionSupport => ({ status: 'refused', note });

const NO_CLAUDE_CODE_PROCESS = 'there is no Claude Code process: the agent loop runs as a Temporal workflow on your workers';

export const OPTION_SUPPORT: Record<keyof SDKOptions, OptionSupport> = {
  abortController: yes('aborting cancels the session (durably) and ends the stream with an `AbortError`, as the SDK’s'),
  additionalDirectories: yes('absolute paths the tools may use besides `cwd`'),
  allowedTools: yes("permission rules in Claude Code's syntax, auto-approved"),
  disallowedTools: yes('deny rules; a bare tool name removes the tool from the model'),
  allowDangerouslySkipPermissions: yes(
    "required with `permissionMode: 'bypassPermissions'` (and for `setPermissionMode('bypassPermissions')`)",
  ),
  canUseTool: yes(
    'called for each permission request the query sees; its answer is sent with `respondToPermission`. A request left unanswered (the loop was broken off) stays pending for any other client',
  ),
  continue: yes('resumes the most recent session started with the same `cwd` (an error when there is none)'),
  cwd: yes('default: `process.cwd()`; a relative path is resolved against `process.cwd()`; the path on the tools worker'),
  effort: yes('sent as `reasoning_effort` (`low`, `medium`, `high`; `xhigh` and `max` send `high`)'),
  env: yes(
    "for Bash children, `{ ...process.env, X: '1' }` included; entries whose name or value looks like a credential, and the caller host’s own (PATH, HOME, …), are dropped with a warning naming them (see Secrets) — give Bash secrets through the worker’s environment (`DURABLE_AGENT_PASS_ENV`)",
  ),
  fallbackModel: yes("one model, tried when the primary's retries are exhausted; a comma-separated list is refused"),
  forkSession: yes('with `resume`/`continue`: the conversation continues under a new session id'),
  hooks: yes(
    "callbacks (`HookCallback`) for PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStart, SubagentStop, SessionStart, SessionEnd and PreCompact are called in this process: the session asks it (`system/hook_request`) and waits durably — through a worker crash, or for another client (`answerHooks`) — up to the matcher’s `timeout` (default 60 s); unanswered, a PreToolUse call is denied and other events go on without it. Command hooks (`{ type: 'command', command }`) run on the tools worker. Other events are refused by name",
  ),
  includePartialMessages: yes(
    '`stream_event`s as the model streams, read from the worker that runs the call, never from history; a retried call starts again with its own `message_start`',
  ),
  maxBudgetUsd: yes('the session ends with `error_max_budget_usd` once its cost reaches it'),
  maxThinkingTokens: yes('sent as `reasoning_effort`: ≤ 4,096 `low`, ≤ 16,384 `medium`, more `high`; 0 sends nothing'),
  maxTurns: yes('model round-trips; the session ends with `error_max_turns`'),
  model: yes('any model name the OpenAI-compatible endpoint knows'),
  outputFormat: yes(
    '`json_schema`: sent to the provider as `response_format`; the final reply is checked against the schema (Ajv, drafts 07, 2019-09, 2020-12) on the model worker and is the result’s `structured_output`; a reply that does not match is sent back with why, 3 times at most, then `error_max_structured_output_retries`. A schema Ajv cannot compile is refused at start',
  ),
  permissionMode: yes(
    '`default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions` (with `allowDangerouslySkipPermissions`); `auto` is refused (no permission classifier)',
  ),
  permissionPrompts: yes(
    "`host`: asks become `system/permission_request` events any client answers; `none` is refused — use `permissionMode: 'dontAsk'`",
  ),
  persistSession: yes('sessions always persist (Temporal history); `false` is refused'),
  resume: yes('a durable-agent session id'),
  sandbox: yes(
    "Bash's sandbox: `auto`, `required`, `off`, or Claude Code's settings block (`enabled`, `failIfUnavailable`, `network` — `on`, `off`, `host` or `{allowedDomains}` — `excludedCommands`, `filesystem`); other fields are errors naming them",
  ),
  sessionId: yes('the session id (= workflow id); any non-empty string'),
  settingSources: yes('`user`, `project`, `local` settings files, read on the tools worker'),
  settings: yes('a path: a settings file on the tools worker; an inline object is refused — write it to a file there'),
  stderr: yes('receives the session’s diagnostics: warnings, model-call retries, loop warnings (one line each)'),
  systemPrompt: yes(
    'a string, `string[]` (joined; the dynamic-boundary marker dropped), `{type: custom}`, or `{type: preset, append}` for our coding prompt; recorded once per session (`snapshot: false` and `excludeDynamicSections` are refused)',
  ),
  thinking: yes('`enabled` → its `budgetTokens` as `maxThinkingTokens`; `disabled` → 0; `adaptive` → the endpoint’s default'),
  tools: yes('which built-in tools exist; `{type: preset}` = all'),
  mcpServers: yes(
    '`stdio`, `http` and `sse` servers, started on the tools worker; credentials in headers, URL query parameters and stdio `args`/`env` must be `${VAR}` references to the worker’s environment (a literal one is refused, naming the field). An in-process `sdk` server (`createSdkMcpServer`) runs in this process: its tools are offered as `mcp__<server>__<tool>`, and each call waits durably (`system/tool_request`, through a worker crash, or for another client: `answerTools`) for this process to run it, up to `clientToolTimeoutMs` (default 60 s), else it is an error result. `client.start()` refuses it; to serve every session, register it on the worker (`createWorker({ tools: [server] })`)',
  ),
  strictMcpConfig: yes('always strict: only the servers given in `mcpServers` are used, no `.mcp.json` is discovered'),
  verbatimPrompts: yes('prompts are always sent verbatim (no `@file` expansion, no slash commands)'),
  agent: yes(
    'the main thread runs as that agent from `agents`: its `prompt` is the system prompt (so not with `systemPrompt`), its `tools` the tools (within `tools`; without `Task` it starts no subagents), its `model` the model (`inherit`: `model`)',
  ),
  agents: yes(
    "`{description, prompt, tools, model}` per name: the `Task` tool starts each as a child workflow (the parent's cwd, rules and budget; `model` or the parent's); other AgentDefinition fields are errors naming them",
  ),
  agentProgressSummaries: no("no progress summaries: a subagent's own events join the stream with `parent_tool_use_id`"),
  forwardSubagentText: no("a subagent's messages already join the stream with `parent_tool_use_id`; filter on it"),
  includeHookEvents: yes(
    'every hook run is a `system/hook_response` in the stream (and a callback hook’s wait a `system/hook_request`), with or without it; `hook_started` and `hook_progress` are never sent: a hook runs in one activity, reported when it has run',
  ),
  betas: no('Anthropic API betas; the model endpoint is OpenAI-compatible'),
  debug: no('the agent runs on the workers: read the worker’s log (`durable-agent worker` prints to stderr)'),
  debugFile: no('the agent runs on the workers: read the worker’s log'),
  enableFileCheckpointing: no(
    'the workspace is checkpointed after every turn that may change it (`checkpoints`, on by default); go back by forking at a turn: `resumeSessionAt` with `forkSession: true`, or `durable-agent fork ID --at N`',
  ),
  executable: no(NO_CLAUDE_CODE_PROCESS),
  executableArgs: no(NO_CLAUDE_CODE_PROCESS),
  extraArgs: no(NO_CLAUDE_CODE_PROCESS),
  pathToClaudeCodeExecutable: no(NO_CLAUDE_CODE_PROCESS),
  spawnClaudeCodeProcess: no(NO_CLAUDE_CODE_PROCESS),
  loadTimeoutMs: no('Temporal is the session store: there is no `sessionStore` to load from'),
  sessionStore: no('Temporal history is the session store'),
  sessionStoreFlush: no('Temporal history is the session store'),
  managedSettings: no('no managed (policy) settings layer; use `settings` or `settingSources`'),
  mcpServersDelivery: no('MCP servers are connected on the tools worker, always (in-process `sdk` servers in the query’s process)'),
  onElicitation: no('MCP elicitation: the client does not offer it, so servers cannot ask for input'),
  onUserDialog: no('no dialogs: tool approvals are `system/permission_request` events answered with `respondToPermission`'),
  supportedDialogKinds: no('no dialogs: tool approvals are `system/permission_request` events'),
  perTaskStopAffordance: no('no background tasks'),
  permissionPromptToolName: no('an MCP approval tool; answer `system/permission_request` events instead'),
  planModeInstructions: no("put them in `systemPrompt` (`{type: 'preset', append}`)"),
  plugins: no('no Claude Code plugins'),
  pluginDelivery: no('no Claude Code plugins'),
  projectConfigRoot: no('settings are read from `cwd` on the tools worker; pass a `settings` file instead'),
  promptSuggestions: no('no prompt suggestions'),
  resumeSessionAt: yes(
    'with `resume` and `forkSession: true`: a new session from the turn holding that message (its transcript to the end of the turn, tool results included; its files from that turn’s checkpoint, restored on a tools host — so no `cwd`); without `forkSession` it is refused, since rewinding the session’s own folder would overwrite it',
  ),
  resumeDropsTurn: no('a fork keeps whole turns: give `resumeSessionAt` a message of the last turn to keep'),
  skills: no('no skills'),
  taskBudget: no('use `maxBudgetUsd` or `maxTurns`'),
  title: no('sessions are named by id (`sessionId`)'),
  toolAliases: no('register a tool under the name you want on the worker (`createWorker({ tools })`)'),
  toolConfig: no('the tools it configures (AskUserQuestion) do not exist here'),
};

/** Values of an unsupported key that change nothing (the SDK's defaults): accepted, not refused. */
export const HARMLESS_VALUES: Partial<Record<keyof SDKOptions, readonly unknown[]>> = {
  enableFileCheckpointing: [false],
  debug: [false],
  forwardSubagentText: [false],
  agentProgressSummaries: [false],
  promptSuggestions: [false],
  perTaskStopAffordance: [false],
};

export function describeSupport(s: OptionSupport): string {
  if (s.status === 'supported') return 'supported';
  if (s.status === 'later') return `supported later (issue ${s.issue})`;
  return 'refused';
}
