/**
 * The settings files a session names, read where its tools run: `user` is the worker's
 * ~/.claude/settings.json, `project` and `local` are under the session's cwd, and `--settings FILE`
 * is one more layer above them. Their text never leaves the worker; `mergeSettings` turns them into
 * rules and matchers (ARCHITECTURE.md#secrets-stay-on-workers).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  mergeSettings,
  parseSettingsJson,
  SettingsError,
  type MergedSettings,
  type SettingsLayer,
  type SettingsSource,
} from '../../shared/permissions/settings';
import type { HookEvent, HooksSettings } from '../../shared/hooks';

export interface SettingsFilesInput {
  cwd: string;
  settingSources: readonly SettingsSource[];
  settingsFile?: string;
  /** The session's options-level hooks: the highest layer. */
  hooks?: HooksSettings;
  /** Default: the worker's home directory (HOME), read when called. */
  homeDir?: string;
}

/** Where a source's file is; `flag` is `settingsFile`, `session` has no file. */
export function settingsFilePath(
  source: SettingsSource,
  dirs: { cwd: string; homeDir: string; settingsFile?: string },
): string | undefined {
  switch (source) {
    case 'user':
      return path.join(dirs.homeDir, '.claude', 'settings.json');
    case 'project':
      return path.join(dirs.cwd, '.claude', 'settings.json');
    case 'local':
      return path.join(dirs.cwd, '.claude', 'settings.local.json');
    case 'flag':
      return dirs.settingsFile === undefined ? undefined : path.resolve(dirs.cwd, dirs.settingsFile);
    case 'session':
      return undefined;
  }
}

export const SESSION_OPTIONS_FILE = 'session options';

/**
 * The layers to merge, lowest precedence first. A missing source file is fine (most projects have
 * none); a missing `settingsFile` is not — it was named on purpose. Throws SettingsError naming the
 * file, the key and the problem.
 */
export function readSettingsLayers(input: SettingsFilesInput): { layers: SettingsLayer[]; files: string[] } {
  const homeDir = input.homeDir ?? os.homedir();
  const layers: SettingsLayer[] = [];
  const files: string[] = [];
  const sources = new Set<SettingsSource>(input.settingSources);
  if (input.settingsFile !== undefined) sources.add('flag');
  for (const source of ['user', 'project', 'local', 'flag'] as const) {
    if (!sources.has(source)) continue;
    const file = settingsFilePath(source, { cwd: input.cwd, homeDir, settingsFile: input.settingsFile })!;
    const text = readText(file, { required: source === 'flag' });
    if (text === undefined) continue;
    layers.push({ source, file, settings: parseSettingsJson(text, file) });
    files.push(file);
  }
  if (input.hooks && Object.keys(input.hooks).length > 0)
    layers.push({ source: 'session', file: SESSION_OPTIONS_FILE, settings: { hooks: input.hooks } });
  return { layers, files };
}

/** What `settingsFileDigests` records for a file that is not there. */
const ABSENT = 'absent';

/**
 * SHA-256 of every settings file the session's sources name, or `absent` — a file the model
 * creates later (`.claude/settings.local.json`) counts as a change. Raw bytes, before parsing: a
 * file that no longer parses is a change too, never a failure (ARCHITECTURE.md#hooks).
 */
export function settingsFileDigests(input: SettingsFilesInput): Record<string, string> {
  const homeDir = input.homeDir ?? os.homedir();
  const sources = new Set<SettingsSource>(input.settingSources);
  if (input.settingsFile !== undefined) sources.add('flag');
  const out: Record<string, string> = {};
  for (const source of ['user', 'project', 'local', 'flag'] as const) {
    if (!sources.has(source)) continue;
    const file = settingsFilePath(source, { cwd: input.cwd, homeDir, settingsFile: input.settingsFile })!;
    let digest = ABSENT;
    try {
      digest = createHash('sha256').update(readFileSync(file)).digest('hex');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') digest = `unreadable:${code ?? 'error'}`;
    }
    out[file] = digest;
  }
  return out;
}

/** Files whose digest differs between two records (either side missing a file counts). */
export function changedSettingsFiles(then: Record<string, string>, now: Record<string, string>): string[] {
  const files = new Set([...Object.keys(then), ...Object.keys(now)]);
  return [...files].filter((f) => then[f] !== now[f]).sort();
}

/** Read and merge; throws SettingsError. */
export function loadMergedSettings(input: SettingsFilesInput): { merged: MergedSettings; files: string[] } {
  const { layers, files } = readSettingsLayers(input);
  return { merged: mergeSettings(layers, { cwd: input.cwd, homeDir: input.homeDir ?? os.homedir() }), files };
}

function readText(file: string, { required }: { required: boolean }): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (!required && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw new SettingsError(file, '(file)', code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? (e as Error).message})`);
  }
}

/**
 * A fingerprint of the command hooks in force: every (event, matcher, command, timeout), sorted
 * and deduplicated, hashed. Order, source file and formatting do not count; a timeout does (a
 * guard cut to a millisecond never decides anything). The commands stay on the worker.
 */
export function hooksDigest(hooks: MergedSettings['hooks']): string {
  const entries = new Set<string>();
  for (const [event, matchers] of Object.entries(hooks) as [HookEvent, NonNullable<MergedSettings['hooks'][HookEvent]>][]) {
    for (const m of matchers) for (const h of m.hooks) entries.add(JSON.stringify([event, m.matcher ?? '', h.command, h.timeout ?? null]));
  }
  return createHash('sha256')
    .update(JSON.stringify([...entries].sort()))
    .digest('hex');
}
