/**
 * Check a session's settings files before starting it, so a bad file is an exit 2 naming the file,
 * the key and the problem, with nothing started. The tools worker reads them again when the session
 * starts (they are its files: ARCHITECTURE.md#secrets-stay-on-workers); here we check those this
 * machine can see as the session will: `--settings FILE` and the project/local files under its
 * cwd. The `user` file is the worker's, not this machine's, so it is left to the worker.
 */
import os from 'node:os';
import { readSettingsLayers } from '../activities/hooks/settings-files';
import { mergeSettings, type SettingsSource } from '../shared/permissions/settings';
import { UsageError } from './args';

const SETTING_SOURCE_NAMES = ['user', 'project', 'local'] as const;

/** `--setting-sources user,project,local` → the list; an unknown name is bad input. */
export function parseSettingSources(value: string | undefined): ('user' | 'project' | 'local')[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!(SETTING_SOURCE_NAMES as readonly string[]).includes(n))
      throw new UsageError(
        `--setting-sources: unknown source '${n}' (expected a comma-separated list of ${SETTING_SOURCE_NAMES.join(', ')})`,
      );
  }
  return names as ('user' | 'project' | 'local')[];
}

/** Throws ConfigError (SettingsError) for a file that does not validate. */
export function checkSettingsFiles(o: { cwd: string; settingSources?: readonly SettingsSource[]; settingsFile?: string }): void {
  const sources = (o.settingSources ?? []).filter((s) => s !== 'user');
  const { layers } = readSettingsLayers({ cwd: o.cwd, settingSources: sources, settingsFile: o.settingsFile });
  mergeSettings(layers, { cwd: o.cwd, homeDir: os.homedir() });
}
