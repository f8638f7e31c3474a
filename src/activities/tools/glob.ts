/** Glob: files whose path (relative to `path`) matches a glob, newest first. */
import * as path from 'node:path';
import { z } from 'zod';
import { globDepth, globToRegExp, splitStaticPrefix } from './glob-match';
import { guardViolation, leftOutNote, readDenied } from './path-guard';
import { realpathDeep, resolveToolPath } from './paths';
import { toolError, toolOk, type ToolDefinition, type ToolExecContext } from './types';
import { walkFiles } from './walk';

const GLOB_MAX_RESULTS = 100;
const GLOB_TRUNCATED_NOTE = '(Results are truncated. Consider using a more specific path or pattern.)';

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

/** Searching needs a directory: the base `path` checked against the policy and the Read rules, or an error text. */
async function searchDir(
  dir: string,
  ctx: ToolExecContext,
  tool = 'Glob',
): Promise<{ ok: true; real: string } | { ok: false; error: string }> {
  const check = await resolveToolPath(dir, { context: ctx.context, fs: ctx.ops.fs, allowRelative: true });
  if (!check.ok) return check;
  const denied = guardViolation(ctx.context.pathGuard, 'read', tool, check);
  if (denied) return { ok: false, error: denied };
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
    const guard = ctx.context.pathGuard;
    const rootDenied = guardViolation(guard, 'read', 'Glob', root);
    if (rootDenied) return toolError(rootDenied);
    const re = globToRegExp(rest);
    const found: { file: string; mtimeMs: number }[] = [];
    let leftOut = 0;
    for await (const entry of walkFiles({
      fs: ctx.ops.fs,
      root: root.real,
      maxDepth: globDepth(rest),
      // Folders Read rules forbid are not listed at all (ARCHITECTURE.md#path-rules-on-real-paths).
      skipDir: (rel, name) => name === '.git' || readDenied(guard, `${root.real}/${rel}`),
      signal: ctx.signal,
      onProgress: (visited) => ctx.heartbeat({ visited }),
    })) {
      if (!re.test(entry.rel)) continue;
      if (guard && (await deniedResult(ctx, entry.abs))) {
        leftOut++;
        continue;
      }
      try {
        found.push({ file: entry.abs, mtimeMs: (await ctx.ops.fs.stat(entry.abs)).mtimeMs });
      } catch {
        // vanished while walking
      }
    }
    if (ctx.signal.aborted) return toolError('Glob was aborted before completion');
    const note = leftOut > 0 ? `\n${leftOutNote(leftOut)}` : '';
    if (found.length === 0) return toolOk(`No files found${note}`, { structured: { numFiles: 0, truncated: false } });
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const truncated = found.length > GLOB_MAX_RESULTS;
    const lines = found.slice(0, GLOB_MAX_RESULTS).map((f) => f.file);
    if (truncated) lines.push(GLOB_TRUNCATED_NOTE);
    return toolOk(lines.join('\n') + note, { structured: { numFiles: found.length, truncated } });
  },
};

/**
 * A search result (Glob's or Grep's) a Read rule forbids, on the path found or on its real path:
 * the walk follows no symlink, but a folder swapped for one mid-walk would lead elsewhere.
 * A result whose real path cannot be resolved is left out too.
 */
export async function deniedResult(ctx: ToolExecContext, file: string): Promise<boolean> {
  const guard = ctx.context.pathGuard;
  if (!guard) return false;
  if (readDenied(guard, file)) return true;
  let real: string;
  try {
    real = await realpathDeep(ctx.ops.fs, file);
  } catch {
    return true;
  }
  return real !== file && readDenied(guard, real);
}
