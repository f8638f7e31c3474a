/**
 * A new session's first steps: load the transcript it resumes, list the worker's tools, build
 * the system prompt, and announce itself with `system/init` (sent again at each user turn).
 */
import { ApplicationFailure, patched } from '@temporalio/workflow';
import type { McpActivities, SessionStoreActivities, SetupActivities, ToolActivities } from '../../shared/activities';
import { listMcpTools } from './mcp';
import type { HookActivities, LoadedSettings, LoadSettingsInput, SessionSettings } from '../../shared/hooks';
import { fireHooks } from './hooks';
import { buildSystemPrompt } from '../../shared/system-prompt';
import { DURABLE_AGENT_VERSION } from '../../shared/version';
import { todoWriteSpec } from '../../shared/todo';
import { taskCompleteSpec } from '../../shared/done-tool';
import type { EventLog, LoopState } from './state';
import type { ToolSpec } from '../../shared/tools';
import { visibleTools } from './tool-calls';
import { taskToolSpec, taskToolVisible } from './subagents';
import { sandboxInitWarning } from '../../shared/sandbox';
import { droppedEnvWarning } from '../../shared/secret-env';
import { clientToolSpecs } from '../../shared/client-tools';
import { PATCHES } from '../../shared/compat';

export async function startSession(deps: {
  state: LoopState;
  log: EventLog;
  runId: string;
  tools: ToolActivities;
  mcp: McpActivities;
  store: SessionStoreActivities;
  hooks: HookActivities;
  setup: SetupActivities;
}): Promise<void> {
  const { state, log } = deps;
  const cfg = state.config;
  /** The resumed run's settings, kept while the files differ from what they were read from. */
  let resumed: SessionSettings | undefined;
  if (cfg.resume) {
    const loaded = await deps.store.loadTranscript({
      sessionId: cfg.resume,
      excludeRunId: deps.runId,
      ...(cfg.resumeAtTurn !== undefined ? { atTurn: cfg.resumeAtTurn } : {}),
    });
    state.messages = [...loaded.messages, ...state.messages];
    resumed = loaded.settings;
    // Turns go on counting from the resumed session's, and its checkpoints stay listed (ARCHITECTURE.md#checkpoints).
    if (state.turnMarks && loaded.turnMarks) state.turnMarks = [...loaded.turnMarks];
    if (state.files.checkpoints && loaded.checkpoints)
      state.files.checkpoints.list = [...loaded.checkpoints, ...state.files.checkpoints.list];
  }
  let all: ToolSpec[];
  if (cfg.setupInOneCall) {
    // One activity answers both: one task on the tools queue (ARCHITECTURE.md#session-start-in-one-step).
    const prepared = await deps.setup.prepareSession(settingsInput(cfg, resumed));
    all = prepared.tools;
    applySettings(deps, prepared.settings, resumed);
  } else if (cfg.setupAtOnce) {
    // Both on the tools worker, neither needs the other: scheduled together, one round trip
    // (ARCHITECTURE.md#session-start-in-one-step). Settings always load, so no patch marker.
    [all] = await Promise.all([deps.tools.listTools(), loadSettings(deps, resumed)]);
  } else {
    all = await deps.tools.listTools();
    if (patched(PATCHES.settingsAndHooks.id)) await loadSettings(deps, resumed);
  }
  const mcpTools = await listMcpTools(deps);
  const extra = [todoWriteSpec, ...(cfg.requireDoneTool ? [taskCompleteSpec] : [])];
  // Tools of the client's in-process MCP servers (ARCHITECTURE.md#client-mcp-tools): declared, not listed.
  const clientTools = clientToolSpecs(cfg.clientTools);
  const shadowed = new Set(clientTools.map((t) => t.name));
  const onWorker = [...all, ...extra, ...mcpTools];
  state.tools = visibleTools([...onWorker.filter((t) => !shadowed.has(t.name)), ...clientTools], cfg);
  const replaced = onWorker.filter((t) => shadowed.has(t.name)).map((t) => t.name);
  if (clientTools.length) {
    const servers = [...new Set(clientTools.map((t) => t.mcp!.server))];
    state.mcpServers = [...(state.mcpServers ?? []), ...servers.map((name) => ({ name, status: 'connected' as const }))];
  }
  // Listed only when the session has agents (ARCHITECTURE.md#subagents); not subject to `tools`.
  if (taskToolVisible(cfg)) state.tools.push(taskToolSpec(cfg.agents!));
  state.systemPrompt = buildSystemPrompt(cfg, {
    cwd: cfg.cwd,
    additionalDirectories: cfg.additionalDirectories,
    platform: cfg.platform,
    date: new Date(state.startedAtMs).toISOString().slice(0, 10),
    toolNames: state.tools.map((t) => t.name),
  });
  emitInit(state, log);
  const sandboxWarning = sandboxInitWarning(cfg.sandbox, state.tools);
  if (sandboxWarning) log.emit({ type: 'system', subtype: 'warning', message: sandboxWarning });
  if (replaced.length) {
    const them = replaced.length > 1 ? 'them' : 'it';
    log.emit({
      type: 'system',
      subtype: 'warning',
      message: `The worker also has ${replaced.join(', ')}; the in-process MCP server of the program that called query() serves ${them} in this session.`,
    });
  }
  // Names the client dropped from `env` (ARCHITECTURE.md#secrets-stay-on-workers); an event, not a command.
  if (cfg.envDropped?.length) log.emit({ type: 'system', subtype: 'warning', message: droppedEnvWarning(cfg.envDropped) });
  await fireHooks(deps, 'SessionStart', cfg.resume ? 'resume' : 'startup', { source: cfg.resume ? 'resume' : 'startup' });
  await submitPrompt(deps, cfg.prompt);
}

/** Rules and hook matchers from the settings files on the tools worker (never their commands). */
async function loadSettings(deps: { state: LoopState; log: EventLog; hooks: HookActivities }, resumed?: SessionSettings): Promise<void> {
  applySettings(deps, await deps.hooks.loadSettings(settingsInput(deps.state.config, resumed)), resumed);
}

function settingsInput(cfg: LoopState['config'], resumed: SessionSettings | undefined): LoadSettingsInput {
  // A resume compares the files with the digests its sessions started with, unless it asks to reload them.
  const pinned = resumed?.fileDigests && !cfg.reloadSettings ? resumed.fileDigests : undefined;
  return {
    cwd: cfg.cwd,
    settingSources: cfg.settingSources,
    ...(cfg.settingsFile ? { settingsFile: cfg.settingsFile } : {}),
    hooks: cfg.hooks,
    ...(pinned ? { pinnedDigests: pinned } : {}),
  };
}

/** The `system` warning of a resume whose settings files changed: which, and what was done instead. */
function settingsChangedWarning(files: readonly string[]): string {
  return (
    `Settings files changed since this session started and were not applied: ${files.join(', ')}. ` +
    'The session keeps the settings it started with (the model may have written these files); ' +
    'resume with --reload-settings (reloadSettings: true) to read them anew.'
  );
}

function applySettings(deps: { state: LoopState; log: EventLog }, loaded: LoadedSettings, resumed?: SessionSettings): void {
  const { state, log } = deps;
  const cfg = state.config;
  const rules = (list: { rule: string }[]) => list.map((r) => r.rule);
  // `changedFiles` comes only with the digests of a resumed run that recorded them (ARCHITECTURE.md#hooks).
  const keep = loaded.changedFiles?.length && resumed ? resumed : undefined;
  if (keep) log.emit({ type: 'system', subtype: 'warning', message: settingsChangedWarning(loaded.changedFiles!) });
  state.settings = keep
    ? { ...keep }
    : {
        allow: rules(loaded.permissions.allow),
        deny: rules(loaded.permissions.deny),
        ask: rules(loaded.permissions.ask),
        additionalDirectories: loaded.permissions.additionalDirectories,
        hookMatchers: loaded.hookMatchers,
        ...(loaded.permissions.disableBypassPermissionsMode ? { bypassDisabled: true } : {}),
        ...(loaded.hooksDigest ? { hooksDigest: loaded.hooksDigest } : {}),
        ...(loaded.permissions.defaultMode ? { defaultMode: loaded.permissions.defaultMode } : {}),
        ...(loaded.fileDigests ? { fileDigests: loaded.fileDigests } : {}),
      };
  if (keep) {
    if (keep.bypassDisabled && state.permissionMode === 'bypassPermissions') {
      const disabled = 'bypassPermissions is disabled by a settings file (disableBypassPermissionsMode: "disable")';
      if (cfg.permissionMode === 'bypassPermissions')
        throw ApplicationFailure.nonRetryable(`permissionMode ${disabled}`, 'InvalidSettings');
      state.permissionMode = cfg.permissionMode;
    }
    if (keep.defaultMode && cfg.permissionMode === 'default') state.permissionMode = keep.defaultMode;
    return;
  }
  if (loaded.permissions.disableBypassPermissionsMode && state.permissionMode === 'bypassPermissions') {
    const disabled = 'bypassPermissions is disabled by a settings file (disableBypassPermissionsMode: "disable")';
    if (cfg.permissionMode === 'bypassPermissions') throw ApplicationFailure.nonRetryable(`permissionMode ${disabled}`, 'InvalidSettings');
    // Switched by a signal that came before the settings were read.
    state.permissionMode = cfg.permissionMode;
    log.emit({ type: 'system', subtype: 'warning', message: `setPermissionMode ignored: ${disabled}` });
  }
  // A settings file's defaultMode applies when the session did not choose a mode of its own.
  if (loaded.permissions.defaultMode && cfg.permissionMode === 'default') state.permissionMode = loaded.permissions.defaultMode;
  for (const { file, key } of loaded.ignoredKeys) {
    log.emit({ type: 'system', subtype: 'warning', message: `${file}: setting ${key} is not used by durable-agent and has no effect.` });
  }
}

/** UserPromptSubmit hooks see each user prompt before the model does; a block ends the turn. */
export async function submitPrompt(deps: { state: LoopState; log: EventLog; hooks: HookActivities }, prompt: string): Promise<void> {
  const verdict = await fireHooks(deps, 'UserPromptSubmit', undefined, { prompt });
  if (verdict?.block !== undefined) deps.state.turn.hookStop ??= `The prompt was blocked by a UserPromptSubmit hook: ${verdict.block}`;
}

export function emitInit(state: LoopState, log: EventLog): void {
  log.emit({
    type: 'system',
    subtype: 'init',
    cwd: state.config.cwd,
    tools: state.tools.map((t) => t.name),
    model: state.model,
    permissionMode: state.permissionMode,
    mcp_servers: (state.mcpServers ?? []).map((s) => ({ name: s.name, status: s.status, ...(s.error ? { error: s.error } : {}) })),
    apiKeySource: 'none',
    claude_code_version: DURABLE_AGENT_VERSION,
    slash_commands: [],
    output_style: 'default',
    skills: [],
    plugins: [],
  });
}
