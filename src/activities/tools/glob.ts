/** Glob: files whose path (relative to `path`) matches a glob, newest first. */
import * as path from 'node:path';
import { z } from 'zod';
import { globDepth, globToRegExp, splitStaticPrefix } from './glob-match';
import { resolveToolPath } from './paths';
import { toolError, toolOk, type ToolDefinition, type ToolExecContext } from './types';
import { walkFiles } from './walk';

export const GLOB_MAX_RESULTS = 100;
export const GLOB_TRUNCATED_NOTE = '(Results are truncated. Consider using a more specific path or pattern.)';

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('The glob pattern to match files against'),
  path: z
    .string()
    .optional()
    .describe(
      'The directory to search in. If not specified, the current working directory will be used. ' +
        'Omit this field to use the default directory. Must be a valid directory path if provided.',
    ),
});
export type GlobInput = z.infer<typeof GlobInput>;

/** Searching needs a directory: the base `path` checked against the policy, or an error text. */
export async function searchDir(dir: string, ctx: ToolExecContext): Promise<{ ok: true; real: string } | { ok: false; error: string }> {
  const check = await resolveToolPath(dir, { context: ctx.context, fs: ctx.ops.fs, allowRelative: true });
  if (!check.ok) return check;
  try {
    const stat = await ctx.ops.fs.stat(check.real);
    if (!stat.isDirectory) return { ok: false, error: `Path is not a directory: ${dir}` };
  } catch {
    return { ok: false, error: `Directory does not exist: ${dir}` };
  }
  return { ok: true, real: check.real };
}

export const globTool: ToolDefinition<GlobInput> = {
  name: 'Glob',
  description:
    'Fast file pattern matching. Supports glob patterns like "**/*.js" or "src/**/*.ts" (`*`, `?`, `**`, ' +
    '`{a,b}`, `[abc]`), matched against paths relative to `path`. Returns absolute paths sorted by ' +
    `modification time, newest first, at most ${GLOB_MAX_RESULTS}. Skips .git directories.`,
  schema: GlobInput,
  readOnly: true,
  async execute(input, ctx) {
    let base = input.path && input.path !== 'undefined' && input.path !== 'null' ? input.path : ctx.context.cwd;
    let pattern = input.pattern;
    if (pattern.startsWith('/')) {
      const split = splitStaticPrefix(pattern.slice(1));
      base = `/${split.prefix}`;
      pattern = split.rest;
    }
    const dir = await searchDir(base, ctx);
    if (!dir.ok) return toolError(dir.error);
    // Walk only below the pattern's literal directories (`src/lib/**/*.ts` starts in src/lib).
    const { prefix, rest } = splitStaticPrefix(pattern);
    // The literal part may itself be (or pass through) a symlink: the policy applies to it as well.
    const root = await resolveToolPath(path.resolve(dir.real, prefix), { context: ctx.context, fs: ctx.ops.fs });
    if (!root.ok) return toolError(root.error);
    const re = globToRegExp(rest);
    const found: { file: string; mtimeMs: number }[] = [];
    for await (const entry of walkFiles({
      fs: ctx.ops.fs,
      root: root.real,
      maxDepth: globDepth(rest),
      skipDir: (_rel, name) => name === '.git',
      signal: ctx.signal,
      onProgress: (visited) => ctx.heartbeat({ visited }),
    })) {
      if (!re.test(entry.rel)) continue;
      try {
        found.push({ file: entry.abs, mtimeMs: (await ctx.ops.fs.stat(entry.abs)).mtimeMs });
      } catch {
        // vanished while walking
      }
    }
    if (ctx.signal.aborted) return toolError('Glob was aborted before completion');
    if (found.length === 0) return toolOk('No files found', { structured: { numFiles: 0, truncated: false } });
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const truncated = found.length > GLOB_MAX_RESULTS;
    const lines = found.slice(0, GLOB_MAX_RESULTS).map((f) => f.file);
    if (truncated) lines.push(GLOB_TRUNCATED_NOTE);
    return toolOk(lines.join('\n'), { structured: { numFiles: found.length, truncated } });
  },
};
