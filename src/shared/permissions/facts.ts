/**
 * What the permission decision needs to know about a call that only the tools worker can find
 * out (ARCHITECTURE.md#bash-rules-on-a-real-parse, #path-rules-on-real-paths): what a Bash line
 * runs, where a path really leads, whether a write targets the session's own settings. The
 * `inspectToolCall` activity returns it; the result is recorded, so the decision replays.
 */
import type { HooksSettings, SettingsSource } from './settings';
import type { BashAnalysis } from './bash-analysis';

export interface InspectCallInput {
  toolName: string;
  input: unknown;
  cwd: string;
  /** Which settings files are the session's (a write to one of them asks). */
  settingSources: SettingsSource[];
  settingsFile?: string;
  /** The session's own command hooks: the scripts they name are protected like settings files. */
  hooks?: HooksSettings;
}

export interface CallFacts {
  bash?: BashAnalysis;
  /** File tools: the target as given, made absolute, and its real path (each symlink followed). */
  paths?: string[];
  /** Write tools: the target is a settings file the session reads or a script its hooks run. */
  protectedTarget?: string;
  /** Write tools: every such file, for the tool to re-check at the moment it writes. */
  protectedFiles?: string[];
  /** The tools worker's home directory, where `~/…` path rules start. */
  homeDir?: string;
}
