/**
 * The hook activities, on the tools worker (where the workspace and the settings files are):
 * `runHooks` runs every hook of one event that matches — command hooks from the session's options
 * and settings files, code hooks registered on this worker — in parallel, as Claude Code does;
 * `loadSettings` reads and merges the settings files once at session start. Only decisions and
 * matchers come back; commands and outputs stay here (ARCHITECTURE.md#secrets-stay-on-workers).
 */
import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CodeHooks, HookInput } from '../../shared/hook-callbacks';
import {
  anyMatcherMatches,
  type HookActivities,
  type HookEvent,
  type HookRun,
  type LoadedSettings,
  type LoadSettingsInput,
  type RunHooksInput,
} from '../../shared/hooks';
import {
  HooksSettings,
  SettingsError,
  type MergedSettings,
  type SettingsSource,
  type SourcedHookMatcher,
} from '../../shared/permissions/settings';
import { heartbeatEveryMs } from '../heartbeat';
import { defaultToolOps, type ToolOps } from '../tools/ops';
import { runCodeHook } from './code';
import { directLaunch, runCommandHook, sandboxLauncher, type Launcher } from './command';
import { changedSettingsFiles, hooksDigest, loadMergedSettings, SESSION_OPTIONS_FILE, settingsFileDigests } from './settings-files';

export { HOOK_TEXT_MAX_CHARS } from './output';
export { hooksDigest } from './settings-files';

/** What a hook run says when the settings files' hooks are no longer the ones the session started with. */
export const HOOKS_CHANGED_MESSAGE = 'settings files changed since the session started: hooks not run';

/** `ApplicationFailure.type` of a settings file (or hooks option) that does not validate: the user's to fix, not retried. */
const INVALID_SETTINGS = 'InvalidSettings';

export interface HookActivityDeps {
  /** Code hooks registered on this worker. */
  codeHooks?: CodeHooks;
  /** The environment and process seam shared with the tools (scrub list, spawn). */
  ops?: ToolOps;
  /** The worker's home for the `user` settings file (default: HOME, read at each call). */
  homeDir?: string;
  /**
   * How a hook command from a file the model could have written (project, local, or any settings
   * file inside the session's writable folders) is spawned. Default: in the session's sandbox,
   * through `ops.sandbox`, as Bash. Operator hooks always run outside it (ARCHITECTURE.md#hooks).
   */
  launch?: Launcher;
}

export function createHookActivities(deps: HookActivityDeps = {}): HookActivities {
  const codeHooks = validateCodeHooks(deps.codeHooks ?? {});
  return {
    async runHooks(input: RunHooksInput): Promise<HookRun[]> {
      const ctx = Context.current();
      const homeDir = deps.homeDir ?? os.homedir();
      const current = currentHooks(input, homeDir);
      const refused = current === 'changed' ? [hooksChangedRun(input.event)] : [];
      const planned = planHooks(input, current === 'changed' ? [] : (current[input.event] ?? []), codeHooks[input.event] ?? [], homeDir);
      if (planned.length === 0) return refused;
      const signal = ctx.cancellationSignal;
      const base = { session_id: input.sessionId, cwd: input.cwd, hook_event_name: input.event, permission_mode: input.permissionMode };
      const stdin = JSON.stringify({ ...base, ...input.payload });
      const ops = deps.ops ?? defaultToolOps();
      const launch = deps.launch ?? sandboxLauncher(ops.sandbox);
      const session = {
        sessionId: input.sessionId,
        ...(input.sandbox ? { sandbox: input.sandbox } : {}),
        additionalDirectories: input.additionalDirectories ?? [],
      };
      const beat = setInterval(() => ctx.heartbeat({ event: input.event, hooks: planned.length }), heartbeatEveryMs());
      try {
        const runs = await Promise.all(
          planned.map((p) =>
            p.kind === 'command'
              ? runCommandHook(
                  {
                    name: p.name,
                    event: input.event,
                    command: p.command,
                    timeoutS: p.timeoutS,
                    cwd: input.cwd,
                    ...session,
                    sessionEnv: input.env,
                    stdin,
                    signal,
                  },
                  ops,
                  p.operator ? directLaunch : launch,
                )
              : runCodeHook({
                  name: p.name,
                  callback: p.callback,
                  input: { ...base, transcript_path: '', ...input.payload } as HookInput,
                  toolUseId: input.payload.tool_use_id,
                  timeoutS: p.timeoutS,
                  signal,
                  logError: (m) => ctx.log.warn(m),
                }),
          ),
        );
        // Cancelled (interrupt, timeout, worker shutdown): every process group is dead by now.
        if (signal.aborted) throw signal.reason;
        return [...refused, ...runs];
      } finally {
        clearInterval(beat);
      }
    },

    async loadSettings(input: LoadSettingsInput): Promise<LoadedSettings> {
      const homeDir = deps.homeDir ?? os.homedir();
      const fileDigests = settingsFileDigests({ ...input, homeDir });
      if (input.pinnedDigests) {
        // A resumed session keeps the settings it started with while the files differ: none of
        // their rules comes back (a file the model wrote may allow anything), nor is a file that no
        // longer parses an error (ARCHITECTURE.md#hooks).
        const changedFiles = changedSettingsFiles(input.pinnedDigests, fileDigests);
        if (changedFiles.length > 0) {
          return {
            permissions: { allow: [], deny: [], ask: [], additionalDirectories: [] },
            hookMatchers: {},
            files: [],
            ignoredKeys: [],
            fileDigests,
            changedFiles,
          };
        }
      }
      const { merged, files } = settingsOrFail(() => loadMergedSettings({ ...input, homeDir }));
      const hookMatchers: LoadedSettings['hookMatchers'] = {};
      const add = (event: HookEvent, matcher: string | undefined) => {
        const list = (hookMatchers[event] ??= []);
        if (!list.includes(matcher)) list.push(matcher);
      };
      for (const [event, ms] of Object.entries(merged.hooks) as [HookEvent, SourcedHookMatcher[]][])
        for (const m of ms) add(event, m.matcher);
      for (const [event, ms] of Object.entries(codeHooks) as [HookEvent, NonNullable<CodeHooks[HookEvent]>][])
        for (const m of ms) add(event, m.matcher);
      const p = merged.permissions;
      return {
        permissions: {
          allow: p.allow,
          deny: p.deny,
          ask: p.ask,
          ...(p.defaultMode ? { defaultMode: p.defaultMode } : {}),
          additionalDirectories: p.additionalDirectories,
          ...(p.disableBypassPermissionsMode ? { disableBypassPermissionsMode: true } : {}),
        },
        hookMatchers,
        hooksDigest: hooksDigest(merged.hooks),
        fileDigests,
        files,
        ignoredKeys: merged.ignoredKeys,
      };
    },
  };
}

/**
 * The command hooks in the settings files now — or 'changed' when the session started with
 * others. Hooks are a snapshot taken at start: the model can write `<cwd>/.claude/settings.json`,
 * so a file that no longer matches (or no longer parses) runs none of its commands rather than
 * letting the model drop a guard or add a hook of its own. Without a digest (sessions recorded
 * before it existed) the files are read as they are.
 */
function currentHooks(input: RunHooksInput, homeDir: string): MergedSettings['hooks'] | 'changed' {
  if (input.hooksDigest === undefined) return settingsOrFail(() => loadMergedSettings({ ...input, homeDir })).merged.hooks;
  try {
    const { hooks } = loadMergedSettings({ ...input, homeDir }).merged;
    return hooksDigest(hooks) === input.hooksDigest ? hooks : 'changed';
  } catch (e) {
    if (e instanceof SettingsError) return 'changed';
    throw e;
  }
}

/** PreToolUse fails closed: the tool does not run while its guards cannot be trusted. */
function hooksChangedRun(event: HookEvent): HookRun {
  return {
    hook: `${event} hooks (settings files)`,
    outcome: 'error',
    exitCode: null,
    durationMs: 0,
    error: HOOKS_CHANGED_MESSAGE,
    ...(event === 'PreToolUse' ? { blockReason: HOOKS_CHANGED_MESSAGE } : {}),
  };
}

type Planned =
  /** `operator`: runs outside the sandbox (see `isOperatorHook`). */
  | { kind: 'command'; name: string; command: string; timeoutS?: number; operator: boolean }
  | { kind: 'code'; name: string; callback: NonNullable<CodeHooks[HookEvent]>[number]['hooks'][number]; timeoutS?: number };

/** The hooks of one event whose matcher matches, each named for the stream; a command listed twice runs once. */
function planHooks(
  input: RunHooksInput,
  commandMatchers: SourcedHookMatcher[],
  codeMatchers: NonNullable<CodeHooks[HookEvent]>,
  homeDir: string,
): Planned[] {
  const planned: Planned[] = [];
  const seen = new Set<string>();
  const label = (m: string | undefined) => `${input.event}${m ? `[${m}]` : ''}`;
  for (const m of commandMatchers) {
    if (!anyMatcherMatches([m.matcher], input.matchValue)) continue;
    const operator = isOperatorHook(m, input, homeDir);
    for (const h of m.hooks) {
      if (seen.has(h.command)) continue;
      seen.add(h.command);
      planned.push({
        kind: 'command',
        name: `${label(m.matcher)} #${planned.length + 1} (${sourceLabel(m.source, m.file, input.cwd, homeDir)})`,
        command: h.command,
        timeoutS: h.timeout,
        operator,
      });
    }
  }
  for (const m of codeMatchers) {
    if (!anyMatcherMatches([m.matcher], input.matchValue)) continue;
    for (const callback of m.hooks)
      planned.push({ kind: 'code', name: `${label(m.matcher)} code hook #${planned.length + 1}`, callback, timeoutS: m.timeout });
  }
  return planned;
}

/**
 * Operator hooks run outside the Bash sandbox, as Claude Code runs every hook: the session's
 * `hooks` option, the worker's user settings and a `--settings` file — unless that file lies
 * where the session may write (cwd, additionalDirectories, the sandbox's allowWrite), for then
 * the model could have written it. Project and local settings are in cwd: their hooks stay in the
 * sandbox. Why (ARCHITECTURE.md#hooks): an operator's hook must see its own script (under /tmp,
 * under ~/.claude/hooks — both hidden in the sandbox), and a guard that cannot run denies.
 */
function isOperatorHook(m: SourcedHookMatcher, input: RunHooksInput, homeDir: string): boolean {
  if (m.source === 'session') return true;
  if (m.source !== 'user' && m.source !== 'flag') return false;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const file = real(m.file);
  const sandbox = input.sandbox;
  const expand = (d: string) => (d === '~' || d.startsWith('~/') ? homeDir + d.slice(1) : path.resolve(input.cwd, d));
  const writable = [
    input.cwd,
    ...(input.additionalDirectories ?? []),
    ...(sandbox && typeof sandbox === 'object' ? sandbox.filesystem.allowWrite.map(expand) : []),
  ].map(real);
  return !writable.some((dir) => file === dir || file.startsWith(`${dir}/`));
}

function sourceLabel(source: SettingsSource, file: string, cwd: string, homeDir: string): string {
  if (file === SESSION_OPTIONS_FILE) return SESSION_OPTIONS_FILE;
  const shown = file.startsWith(`${cwd}/`)
    ? file.slice(cwd.length + 1)
    : file.startsWith(`${homeDir}/`)
      ? `~/${file.slice(homeDir.length + 1)}`
      : file;
  return `${source === 'flag' ? 'settings' : source} ${shown}`;
}

function settingsOrFail<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    throw ApplicationFailure.create({
      type: INVALID_SETTINGS,
      message: e.message,
      nonRetryable: true,
      details: [{ file: e.file, key: e.key, problem: e.problem }],
    });
  }
}

/** Code hooks are checked when the worker is built: an unknown event or a bad matcher is a start-up error, never ignored. */
function validateCodeHooks(hooks: CodeHooks): CodeHooks {
  const shape = Object.fromEntries(
    Object.entries(hooks).map(([event, ms]) => [
      event,
      (ms ?? []).map((m) => ({
        ...(m.matcher !== undefined ? { matcher: m.matcher } : {}),
        hooks: [{ type: 'command', command: 'code' }],
      })),
    ]),
  );
  const parsed = HooksSettings.safeParse(shape);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(
      'createWorker({ hooks })',
      issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
        .join('.')
        .replace(/\.\[/g, '['),
      issue.message,
    );
  }
  for (const [event, ms] of Object.entries(hooks)) {
    (ms ?? []).forEach((m, i) => {
      if (!Array.isArray(m.hooks) || m.hooks.some((h) => typeof h !== 'function'))
        throw new SettingsError('createWorker({ hooks })', `${event}[${i}].hooks`, 'expected an array of functions');
      if (m.timeout !== undefined && !(m.timeout > 0))
        throw new SettingsError('createWorker({ hooks })', `${event}[${i}].timeout`, 'expected a positive number of seconds');
    });
  }
  return hooks;
}
