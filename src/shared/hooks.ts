/**
 * Hooks (ARCHITECTURE.md#hooks): Claude Code's hook events, run on the tools worker — command
 * hooks from the session's options and settings files, code hooks registered on the worker — by
 * the `runHooks` activity. Only decisions come back into the workflow (and so into history);
 * a command's other output never does (ARCHITECTURE.md#secrets-stay-on-workers).
 */
import type { PermissionMode, SessionConfig } from './config';
import { hookMatcherMatches, type HookEvent, type HooksSettings, type SettingsSource, type SourcedRule } from './permissions/settings';

export type { HookEvent, HooksSettings };

/** Event-specific fields of the JSON a hook receives on stdin (Claude Code's names). */
export interface HookPayload {
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  /** PostToolUse: the tool's output as the model saw it. */
  tool_response?: unknown;
  /** PostToolUseFailure. */
  error?: string;
  /** UserPromptSubmit. */
  prompt?: string;
  /** SessionStart: startup | resume. */
  source?: string;
  /** SessionEnd: the exit reason. */
  reason?: string;
  /** Stop / SubagentStop: a Stop hook already kept this turn going. */
  stop_hook_active?: boolean;
  /** SubagentStart / SubagentStop: the subagent's session id and its name in `agents`. */
  agent_id?: string;
  agent_type?: string;
  /** PreCompact: auto | manual. */
  trigger?: string;
}

export interface RunHooksInput {
  event: HookEvent;
  sessionId: string;
  cwd: string;
  permissionMode: PermissionMode;
  /** Matched against each matcher: the tool name for tool events, the source/trigger otherwise. */
  matchValue?: string;
  /** Command hooks from the session's options (already in history: the user passed them). */
  hooks: HooksSettings;
  /** Settings files to read on the tools worker; their commands never leave it. */
  settingSources: SettingsSource[];
  settingsFile?: string;
  payload: HookPayload;
  /** The session's `env` for command hooks (scrubbed like Bash's). */
  env: Record<string, string>;
  /** Command hooks run in the session's Bash sandbox (ARCHITECTURE.md#bash-sandbox). */
  sandbox?: SessionConfig['sandbox'];
  additionalDirectories?: string[];
  /** `LoadedSettings.hooksDigest` from session start: when the files' hooks differ now, none of them runs. */
  hooksDigest?: string;
}

/** Claude Code's JSON hook output: the fields that are decisions. */
export interface HookOutput {
  continue?: boolean;
  stopReason?: string;
  decision?: 'block' | 'approve';
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}

/** One hook's run, as recorded: never its raw stdout/stderr, except a block reason (exit 2). */
export interface HookRun {
  /** e.g. `PreToolUse[Bash] #1 (project .claude/settings.json)` or `PreToolUse code hook #2`. */
  hook: string;
  outcome: 'success' | 'blocked' | 'error' | 'timeout';
  exitCode: number | null;
  durationMs: number;
  /** Parsed JSON output (exit 0), decision fields only. */
  output?: HookOutput;
  /** Exit 2: stderr, trimmed and capped — it goes to the model. Also set on a PreToolUse `error`
   *  that must stop the tool (the hook could not be trusted to run): the error blocks. */
  blockReason?: string;
  /** A non-blocking error, described without the command's output (e.g. "exited 1", "invalid JSON on stdout"). */
  error?: string;
}

/** What a session learns about its settings at start (recorded once; no hook commands). */
export interface LoadedSettings {
  permissions: {
    allow: SourcedRule[];
    deny: SourcedRule[];
    ask: SourcedRule[];
    defaultMode?: PermissionMode;
    additionalDirectories: string[];
    /** Some file said `disableBypassPermissionsMode: "disable"`: bypassPermissions must be refused. */
    disableBypassPermissionsMode?: true;
  };
  /** For each event with hooks anywhere (options, settings files, worker code hooks): their matchers. */
  hookMatchers: Partial<Record<HookEvent, (string | undefined)[]>>;
  /** SHA-256 over the command hooks found (event, matcher, command, timeout; never the commands
   *  themselves): hooks are a snapshot taken at start, and `runHooks` refuses files that differ. */
  hooksDigest?: string;
  /** Every settings file the sources name → SHA-256 of its bytes, or `absent` (recorded at start, carried; compared on resume). */
  fileDigests?: Record<string, string>;
  /**
   * Resume with `pinnedDigests`: the files that differ from them. Set only when some do, and then
   * nothing else here comes from the files: the session keeps the settings it started with.
   */
  changedFiles?: string[];
  /** Files read, for the init event and messages. */
  files: string[];
  /** Top-level settings keys durable-agent does not use, reported as warnings. */
  ignoredKeys: { file: string; key: string }[];
}

/**
 * The settings a session runs with, as recorded from `loadSettings` at start and carried in its
 * state: rules and which events have hooks (never commands). A resumed session reads its previous
 * run's through the `settings` query and keeps them while the files differ from `fileDigests`.
 */
export interface SessionSettings {
  allow: string[];
  deny: string[];
  ask: string[];
  additionalDirectories: string[];
  hookMatchers: LoadedSettings['hookMatchers'];
  /** A settings file said `disableBypassPermissionsMode: "disable"`. */
  bypassDisabled?: boolean;
  /** Fingerprint of the hooks found at start: runHooks refuses to run hooks that changed since. */
  hooksDigest?: string;
  /** A settings file's `defaultMode` (applied when the session chose none). */
  defaultMode?: PermissionMode;
  /** The files these settings were read from, by digest (`LoadedSettings.fileDigests`). */
  fileDigests?: Record<string, string>;
}

export interface LoadSettingsInput {
  cwd: string;
  settingSources: SettingsSource[];
  settingsFile?: string;
  /** Options-level hooks, merged into `hookMatchers`. */
  hooks: HooksSettings;
  /** Resume: the files' digests the session started with; when the files differ, `changedFiles` says which and no settings are read. */
  pinnedDigests?: Record<string, string>;
}

export interface HookActivities {
  runHooks(input: RunHooksInput): Promise<HookRun[]>;
  loadSettings(input: LoadSettingsInput): Promise<LoadedSettings>;
}

/** Every hook run of one event, folded into what the loop acts on. Pure. */
export interface HookVerdict {
  /** PreToolUse: do not run the tool, tell the model this. UserPromptSubmit: drop the prompt. Stop: keep going with this. PostToolUse: feedback. */
  block?: string;
  permissionDecision?: 'allow' | 'deny' | 'ask';
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext: string[];
  systemMessages: string[];
  /** `continue: false`: stop the session after this step, with this reason. */
  stop?: string;
}

export function foldHookRuns(runs: readonly HookRun[]): HookVerdict {
  const v: HookVerdict = { additionalContext: [], systemMessages: [] };
  const precedence = { deny: 3, ask: 2, allow: 1 } as const;
  for (const run of runs) {
    if (run.outcome === 'blocked' || run.blockReason) v.block ??= run.blockReason || `Blocked by hook ${run.hook}.`;
    const out = run.output;
    if (!out) continue;
    if (out.continue === false) v.stop ??= out.stopReason || `Stopped by hook ${run.hook}.`;
    if (out.decision === 'block') v.block ??= out.reason || `Blocked by hook ${run.hook}.`;
    if (out.systemMessage) v.systemMessages.push(out.systemMessage);
    const specific = out.hookSpecificOutput;
    if (!specific) continue;
    if (specific.additionalContext) v.additionalContext.push(specific.additionalContext);
    if (specific.updatedInput && v.updatedInput === undefined) v.updatedInput = specific.updatedInput;
    const d = specific.permissionDecision;
    // Several hooks disagree: the most restrictive answer wins (deny > ask > allow).
    if (d && (!v.permissionDecision || precedence[d] > precedence[v.permissionDecision])) {
      v.permissionDecision = d;
      v.permissionDecisionReason = specific.permissionDecisionReason;
    }
  }
  return v;
}

/** Does any of an event's matchers match this value (tool name, source, trigger)? */
export function anyMatcherMatches(matchers: readonly (string | null | undefined)[] | undefined, value: string | undefined): boolean {
  // An absent matcher arrives as null: the list crossed the activity boundary as JSON.
  return (matchers ?? []).some((m) => {
    const all = m === undefined || m === null || m === '' || m === '*';
    return all || (value !== undefined && hookMatcherMatches(m, value));
  });
}
