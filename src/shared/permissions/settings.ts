/**
 * Settings files in Claude Code's format (`permissions` and `hooks`), validated and merged the
 * way Claude Code merges them. Pure: the files are read by an activity on the tools worker and
 * only decisions enter history (ARCHITECTURE.md#secrets-stay-on-workers); this module takes their
 * text or parsed JSON and a name for messages.
 */
import { z } from 'zod';
import { sharedSchema } from '../shared-schema';
import { ConfigError } from '../config-error';
import { jsonProblem } from '../json-error';
import { PermissionMode } from '../permission-mode';
import { absolutePath } from './paths';
import { parseRule, PermissionRuleList, type PermissionRules } from './rules';

export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'UserPromptSubmit',
  'Stop',
  'SubagentStart',
  'SubagentStop',
  'SessionStart',
  'SessionEnd',
  'PreCompact',
] as const;
export const HookEvent = sharedSchema('settings.HookEvent', () => z.enum(HOOK_EVENTS));
export type HookEvent = z.infer<typeof HookEvent>;

export const CommandHook = sharedSchema('settings.CommandHook', () =>
  z
    .object({
      type: z.literal('command', { error: "only 'command' hooks are supported" }),
      command: z.string().min(1),
      timeout: z.number().positive().optional().describe('Seconds before the command is cancelled.'),
    })
    .strict(),
);
export type CommandHook = z.infer<typeof CommandHook>;

export const HookMatcher = sharedSchema('settings.HookMatcher', () =>
  z
    .object({
      matcher: z.string().optional().describe('Tool names: "*", "" or absent match all; `A|B` matches exactly; anything else is a regex.'),
      hooks: z.array(CommandHook).min(1),
    })
    .strict(),
);
export type HookMatcher = z.infer<typeof HookMatcher>;

/** True for an event we fire; otherwise an issue naming it and the events there are. */
export function knownHookEvent(event: string, ctx: z.RefinementCtx): boolean {
  if ((HOOK_EVENTS as readonly string[]).includes(event)) return true;
  ctx.addIssue({ code: 'custom', path: [event], message: `unknown hook event '${event}' (expected one of ${HOOK_EVENTS.join(', ')})` });
  return false;
}

export const HooksSettings = sharedSchema('settings.HooksSettings', () =>
  z.record(z.string(), z.array(HookMatcher)).superRefine((hooks, ctx) => {
    for (const [event, matchers] of Object.entries(hooks)) {
      knownHookEvent(event, ctx);
      matchers.forEach((m, i) => {
        const problem = matcherProblem(m.matcher);
        if (problem) ctx.addIssue({ code: 'custom', path: [event, i, 'matcher'], message: problem });
      });
    }
  }),
);
export type HooksSettings = Partial<Record<HookEvent, HookMatcher[]>>;

const PermissionsSettings = sharedSchema('settings.PermissionsSettings', () =>
  z
    .object({
      allow: PermissionRuleList.optional(),
      deny: PermissionRuleList.optional(),
      ask: PermissionRuleList.optional(),
      defaultMode: PermissionMode.optional(),
      additionalDirectories: z.array(z.string().min(1)).optional(),
      disableBypassPermissionsMode: z.literal('disable').optional(),
    })
    .strict(),
);

/** Other top-level keys of Claude Code's settings are kept, and reported by mergeSettings. */
export const Settings = sharedSchema('settings.Settings', () =>
  z
    .object({ $schema: z.string().optional(), permissions: PermissionsSettings.optional(), hooks: HooksSettings.optional() })
    .catchall(z.unknown()),
);
export type Settings = z.infer<typeof Settings>;

/** A settings problem: names the file, the key and what is wrong. */
export class SettingsError extends ConfigError {
  constructor(
    readonly file: string,
    readonly key: string,
    readonly problem: string,
  ) {
    super(`${file}: ${key}: ${problem}`, key);
    this.name = 'SettingsError';
  }
}

/** Settings sources, lowest precedence first (a later one wins where values conflict). */
const SETTINGS_SOURCES = ['user', 'project', 'local', 'flag', 'session'] as const;
export type SettingsSource = (typeof SETTINGS_SOURCES)[number];

export interface SettingsLayer {
  source: SettingsSource;
  /** For messages: the file's path, or e.g. "session options". */
  file: string;
  settings: unknown;
}

export interface SourcedRule {
  rule: string;
  source: SettingsSource;
  file: string;
}

export type SourcedHookMatcher = HookMatcher & { source: SettingsSource; file: string };

export interface MergedSettings {
  permissions: {
    allow: SourcedRule[];
    deny: SourcedRule[];
    ask: SourcedRule[];
    defaultMode?: PermissionMode;
    /** The file whose defaultMode won. */
    defaultModeFile?: string;
    /** Absolute, normalised. */
    additionalDirectories: string[];
    /** Any source saying `disable` forbids bypassPermissions. */
    disableBypassPermissionsMode: boolean;
  };
  hooks: Partial<Record<HookEvent, SourcedHookMatcher[]>>;
  /** Top-level keys durable-agent does not use, per file: to be reported, never silently dropped. */
  ignoredKeys: { file: string; key: string }[];
}

export function parseSettings(json: unknown, file: string): Settings {
  const parsed = Settings.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  let path: PropertyKey[] = issue.path;
  let problem = issue.message;
  if (issue.code === 'unrecognized_keys') {
    path = [...issue.path, issue.keys[0]!];
    problem = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  }
  throw new SettingsError(file, keyPath(path), problem);
}

/** JSON text → settings; a syntax error names the line and column, never quoting the text (it may hold a secret). */
export function parseSettingsJson(text: string, file: string): Settings {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const p = jsonProblem(text);
    throw new SettingsError(file, '(file)', p ? `not valid JSON at line ${p.line} column ${p.column}: ${p.problem}` : 'not valid JSON');
  }
  return parseSettings(json, file);
}

function keyPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}

/**
 * Merge layers as Claude Code does: user < project < local < flag < session. Permission lists
 * and additional directories are concatenated and de-duplicated, hooks from every layer run,
 * defaultMode comes from the highest-precedence layer that sets one.
 */
export function mergeSettings(layers: readonly SettingsLayer[], dirs: { cwd: string; homeDir?: string }): MergedSettings {
  const ordered = [...layers].sort((a, b) => SETTINGS_SOURCES.indexOf(a.source) - SETTINGS_SOURCES.indexOf(b.source));
  const merged: MergedSettings = {
    permissions: { allow: [], deny: [], ask: [], additionalDirectories: [], disableBypassPermissionsMode: false },
    hooks: {},
    ignoredKeys: [],
  };
  const p = merged.permissions;
  const seenHooks = new Set<string>();
  for (const layer of ordered) {
    const { source, file } = layer;
    const s = parseSettings(layer.settings, file);
    for (const key of Object.keys(s)) {
      if (key !== '$schema' && key !== 'permissions' && key !== 'hooks') merged.ignoredKeys.push({ file, key });
    }
    for (const list of ['allow', 'deny', 'ask'] as const) {
      for (const rule of s.permissions?.[list] ?? []) {
        if (!p[list].some((r) => r.rule === rule)) p[list].push({ rule, source, file });
      }
    }
    if (s.permissions?.defaultMode) {
      p.defaultMode = s.permissions.defaultMode;
      p.defaultModeFile = file;
    }
    if (s.permissions?.disableBypassPermissionsMode === 'disable') p.disableBypassPermissionsMode = true;
    (s.permissions?.additionalDirectories ?? []).forEach((dir, i) => {
      const abs = resolveDir(dir, dirs);
      if (abs === undefined)
        throw new SettingsError(
          file,
          `permissions.additionalDirectories[${i}]`,
          `'${dir}' needs the home directory, which is unknown here`,
        );
      if (!p.additionalDirectories.includes(abs)) p.additionalDirectories.push(abs);
    });
    for (const [event, matchers] of Object.entries(s.hooks ?? {}) as [HookEvent, HookMatcher[]][]) {
      for (const m of matchers) {
        const hooks = m.hooks.filter((h) => {
          const id = JSON.stringify([event, m.matcher ?? '', h.command]);
          return seenHooks.has(id) ? false : (seenHooks.add(id), true);
        });
        if (hooks.length) (merged.hooks[event] ??= []).push({ ...m, hooks, source, file });
      }
    }
  }
  return merged;
}

function resolveDir(dir: string, dirs: { cwd: string; homeDir?: string }): string | undefined {
  if (dir === '~' || dir.startsWith('~/')) return dirs.homeDir ? absolutePath(dirs.homeDir + dir.slice(1), undefined) : undefined;
  return absolutePath(dir, dirs.cwd);
}

/** The merged permission lists as parsed rules, each naming the file it came from. */
export function rulesFromSettings(merged: MergedSettings): PermissionRules {
  const parse = (rules: SourcedRule[]) => rules.map((r) => parseRule(r.rule, r.file));
  return { allow: parse(merged.permissions.allow), deny: parse(merged.permissions.deny), ask: parse(merged.permissions.ask) };
}

const SIMPLE_MATCHER = /^[A-Za-z0-9_|]+$/;

/** Why a hook matcher cannot be used (not a valid regular expression), or undefined. */
export function matcherProblem(matcher: string | undefined): string | undefined {
  if (matcher === undefined || matcher === '' || matcher === '*' || SIMPLE_MATCHER.test(matcher)) return undefined;
  try {
    new RegExp(matcher);
    return undefined;
  } catch (e) {
    return `not a valid regular expression: ${(e as Error).message}`;
  }
}

/** Claude Code's matcher rule: "*", "" or absent match all; names joined by `|` match exactly; otherwise an unanchored regex. */
export function hookMatcherMatches(matcher: string | undefined, value: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (SIMPLE_MATCHER.test(matcher)) return matcher.split('|').includes(value);
  return new RegExp(matcher).test(value);
}
