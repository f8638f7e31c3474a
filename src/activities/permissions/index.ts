/**
 * `inspectToolCall`: the facts the permission decision needs from the tools worker
 * (ARCHITECTURE.md#bash-rules-on-a-real-parse, #path-rules-on-real-paths,
 * #settings-the-model-cannot-rewrite). Reads only: it parses, resolves paths and reads the
 * session's settings files to learn which scripts its hooks run; it changes nothing.
 */
import os from 'node:os';
import { ApplicationFailure } from '@temporalio/common';
import path from 'node:path';
import type { CallFacts, InspectCallInput } from '../../shared/permissions/facts';
import type { HooksSettings } from '../../shared/permissions/settings';
import { EDIT_TOOLS } from '../../shared/permissions/decide';
import { loadMergedSettings, settingsFilePath } from '../hooks/settings-files';
import { realpathDeep } from '../tools/paths';
import { defaultToolOps, type ToolFs } from '../tools/ops';
import { analyseBash } from './parser';

export { analyseBash } from './parser';

const PATH_FIELDS: Record<string, string> = {
  Read: 'file_path',
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
  Glob: 'path',
  Grep: 'path',
};

export interface InspectDeps {
  fs?: ToolFs;
  homeDir?: string;
  /**
   * The model role's copy: it parses Bash lines (on the workflow queue) and refuses anything that
   * needs the workspace host's files.
   */
  bashOnly?: boolean;
}

export function createInspectActivity(deps: InspectDeps = {}): { inspectToolCall(input: InspectCallInput): Promise<CallFacts> } {
  return {
    async inspectToolCall(input) {
      const homeDir = deps.homeDir ?? os.homedir();
      const args = (input.input ?? {}) as Record<string, unknown>;
      if (input.toolName === 'Bash') {
        const command = typeof args.command === 'string' ? args.command : '';
        return { bash: await analyseBash(command), homeDir };
      }
      if (deps.bashOnly) {
        throw ApplicationFailure.nonRetryable(
          `inspectToolCall for ${input.toolName} must run on the tools queue, where its files are`,
          'ToolConfigError',
        );
      }
      const field = PATH_FIELDS[input.toolName];
      if (!field) return { homeDir };
      const fs = deps.fs ?? defaultToolOps().fs;
      const raw = args[field];
      const given = typeof raw === 'string' && raw !== '' ? raw : field === 'path' ? input.cwd : undefined;
      if (given === undefined) return { homeDir };
      const abs = path.resolve(input.cwd, given);
      const real = await realpathDeep(fs, abs).catch(() => abs);
      const facts: CallFacts = { paths: abs === real ? [abs] : [abs, real], homeDir };
      if (EDIT_TOOLS.has(input.toolName)) {
        const protectedFiles = await protectedFilesOf(fs, input, homeDir);
        facts.protectedFiles = protectedFiles;
        const hit = [abs, real].find((p) => protectedFiles.includes(p));
        if (hit !== undefined) facts.protectedTarget = hit;
      }
      return facts;
    },
  };
}

/**
 * Settings files a session reads — every source's file, enabled or not, since a resume may enable
 * it — and the scripts its command hooks run, by real path.
 */
async function protectedFilesOf(fs: ToolFs, input: InspectCallInput, homeDir: string): Promise<string[]> {
  const files = (['user', 'project', 'local', 'flag'] as const)
    .map((source) => settingsFilePath(source, { cwd: input.cwd, homeDir, settingsFile: input.settingsFile }))
    .filter((f): f is string => f !== undefined);
  let hooks: HooksSettings = input.hooks ?? {};
  try {
    hooks = loadMergedSettings({
      cwd: input.cwd,
      homeDir,
      settingSources: input.settingSources.filter((s) => s !== 'flag' && s !== 'session') as ('user' | 'project' | 'local')[],
      settingsFile: input.settingsFile,
      hooks: input.hooks,
    }).merged.hooks as HooksSettings;
  } catch {
    // Settings that do not parse run no hooks (runHooks refuses them); the files stay protected.
  }
  for (const matchers of Object.values(hooks)) {
    for (const m of matchers ?? []) for (const h of m.hooks) files.push(...scriptPaths(h.command, input.cwd, homeDir));
  }
  const real = await Promise.all(files.map((f) => realpathDeep(fs, f).catch(() => f)));
  return [...new Set([...files, ...real])];
}

/** Words of a hook command that name a file: `/abs/x.sh`, `./x.sh`, `~/x`, `$CLAUDE_PROJECT_DIR/x`. */
function scriptPaths(command: string, cwd: string, homeDir: string): string[] {
  const out: string[] = [];
  for (const raw of command.split(/\s+/)) {
    const word = raw.replace(/^["']|["';&|)]+$/g, '').replace(/^\$\{?CLAUDE_PROJECT_DIR\}?/, cwd);
    if (!word.includes('/') || /^[a-z]+:\/\//i.test(word)) continue;
    if (word.startsWith('~/')) out.push(path.join(homeDir, word.slice(2)));
    else out.push(path.resolve(cwd, word));
  }
  return out;
}
