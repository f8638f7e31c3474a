/** Grep: ripgrep when it is installed, a JS fallback otherwise; both print the same text. */
import { z } from 'zod';
import { runJsGrep } from './grep-js';
import { runRipgrep } from './grep-rg';
import { VCS_DIRS, type GrepHits, type GrepLine, type GrepQuery } from './grep-types';
import { deniedResult } from './glob';
import { guardViolation, leftOutNote, readDenied, searchExclusions } from './path-guard';
import { resolveToolPath } from './paths';
import { plural, toolError, toolOk, type ToolDefinition } from './types';

const GREP_DEFAULT_HEAD_LIMIT = 250;
const GREP_MAX_COLUMNS = 500;

const contentOnly = 'Requires output_mode: "content", ignored otherwise.';
export const GrepInput = z.strictObject({
  pattern: z.string().min(1).describe('The regular expression pattern to search for in file contents'),
  path: z.string().optional().describe('File or directory to search in (rg PATH). Defaults to current working directory.'),
  glob: z.string().optional().describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe(
      'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), ' +
        '"files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports ' +
        'head_limit). Defaults to "files_with_matches".',
    ),
  '-B': z.number().int().min(0).optional().describe(`Number of lines to show before each match (rg -B). ${contentOnly}`),
  '-A': z.number().int().min(0).optional().describe(`Number of lines to show after each match (rg -A). ${contentOnly}`),
  '-C': z.number().int().min(0).optional().describe(`Number of lines to show before and after each match (rg -C). ${contentOnly}`),
  '-n': z.boolean().optional().describe(`Show line numbers in output (rg -n). ${contentOnly} Defaults to true.`),
  '-i': z.boolean().optional().describe('Case insensitive search (rg -i)'),
  type: z.string().optional().describe('File type to search (rg --type). Common types: js, ts, py, rust, go, java, etc.'),
  head_limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes. ' +
        `Defaults to ${GREP_DEFAULT_HEAD_LIMIT}.`,
    ),
  multiline: z
    .boolean()
    .optional()
    .describe('Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.'),
});
export type GrepInput = z.infer<typeof GrepInput>;

/** Claude Code's reading of `glob`: whitespace- or comma-separated, except inside braces. */
function splitGlobs(glob: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (glob ?? '').split(/\s+/).filter(Boolean)) {
    if (raw.includes('{') && raw.includes('}')) out.push(raw);
    else out.push(...raw.split(',').filter(Boolean));
  }
  return out;
}

function cutColumns(text: string): string {
  return text.length > GREP_MAX_COLUMNS ? `${text.slice(0, GREP_MAX_COLUMNS)} [... omitted end of long line]` : text;
}

/** rg's own layout: `path:N:text` for matches, `path-N-text` for context, `--` between groups. */
function formatContentLines(files: { file: string; lines: GrepLine[] }[], opts: { lineNumbers: boolean; context: boolean }): string[] {
  const out: string[] = [];
  let prev: { file: string; n: number } | undefined;
  for (const { file, lines } of files) {
    for (const l of lines) {
      if (opts.context && prev && (prev.file !== file || l.n !== prev.n + 1)) out.push('--');
      const sep = l.match ? ':' : '-';
      out.push(opts.lineNumbers ? `${file}${sep}${l.n}${sep}${cutColumns(l.text)}` : `${file}${sep}${cutColumns(l.text)}`);
      prev = { file, n: l.n };
    }
  }
  return out;
}

const moreNote = (shown: number, what: string) =>
  `(Showing the first ${shown} ${what} (head_limit=${shown}). Raise head_limit, or narrow pattern, path, glob or type, to see the rest.)`;

async function format(hits: GrepHits, input: GrepInput, head: number, context: boolean, stat: (f: string) => Promise<number>) {
  if (hits.mode === 'files_with_matches') {
    if (hits.files.length === 0) return toolOk('No files found', { structured: { mode: hits.mode, numFiles: 0 } });
    const withTimes = await Promise.all(hits.files.map(async (file) => ({ file, mtimeMs: await stat(file) })));
    withTimes.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const total = withTimes.length;
    let text = `Found ${plural(total, 'file')}\n${withTimes
      .slice(0, head)
      .map((f) => f.file)
      .join('\n')}`;
    if (total > head) text += `\n\n${moreNote(head, `of ${total} files`)}`;
    return toolOk(text, { structured: { mode: hits.mode, numFiles: total } });
  }
  if (hits.mode === 'count') {
    const total = hits.counts.reduce((s, c) => s + c.count, 0);
    const lines = hits.counts.map((c) => `${c.file}:${c.count}`);
    let text = lines.slice(0, head).join('\n') || 'No matches found';
    if (lines.length > head) text += `\n\n${moreNote(head, `of ${lines.length} files`)}`;
    text += `\n\nFound ${total} total ${total === 1 ? 'occurrence' : 'occurrences'} across ${plural(hits.counts.length, 'file')}.`;
    return toolOk(text, { structured: { mode: hits.mode, numFiles: hits.counts.length, numMatches: total } });
  }
  const lines = formatContentLines(hits.files, { lineNumbers: input['-n'] ?? true, context });
  if (lines.length === 0) return toolOk('No matches found', { structured: { mode: hits.mode, numLines: 0 } });
  let text = lines.slice(0, head).join('\n');
  if (lines.length > head || hits.more) text += `\n\n${moreNote(head, 'lines')}`;
  return toolOk(text, { structured: { mode: hits.mode, numLines: Math.min(head, lines.length) } });
}

export const grepTool: ToolDefinition<GrepInput> = {
  name: 'Grep',
  description:
    'Searches file contents with a regular expression (ripgrep syntax), e.g. "log.*Error" or "function\\s+\\w+". ' +
    'Filter files with glob (e.g. "*.js", "**/*.tsx") or type (e.g. "js", "py"). output_mode "files_with_matches" ' +
    '(default) lists files, newest first; "content" shows matching lines; "count" shows matches per file. ' +
    'Hidden files are searched; version-control folders are not. Use multiline for patterns that span lines.',
  schema: GrepInput,
  readOnly: true,
  async execute(input, ctx) {
    const { ops } = ctx;
    const given = input.path ?? ctx.context.cwd;
    const check = await resolveToolPath(given, { context: ctx.context, fs: ops.fs, allowRelative: true });
    if (!check.ok) return toolError(check.error);
    const guard = ctx.context.pathGuard;
    const denied = guardViolation(guard, 'read', 'Grep', check);
    if (denied) return toolError(denied);
    let rootIsDir: boolean;
    try {
      rootIsDir = (await ops.fs.stat(check.real)).isDirectory;
    } catch {
      return toolError(`Path does not exist: ${given}`);
    }
    const mode = input.output_mode ?? 'files_with_matches';
    const content = mode === 'content';
    const before = content ? (input['-C'] ?? input['-B'] ?? 0) : 0;
    const after = content ? (input['-C'] ?? input['-A'] ?? 0) : 0;
    const head = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
    const query: GrepQuery = {
      pattern: input.pattern,
      root: check.real,
      rootIsDir,
      // Read rules' folders last, so no glob of the model's can bring them back (rg: the last match wins).
      globs: [...splitGlobs(input.glob), ...VCS_DIRS.map((d) => `!${d}`), ...(rootIsDir ? searchExclusions(guard, check.real) : [])],
      ...(guard ? { excluded: (abs: string) => readDenied(guard, abs) } : {}),
      type: input.type,
      ignoreCase: input['-i'] ?? false,
      multiline: input.multiline ?? false,
      mode,
      before,
      after,
      maxEntries: head + 1,
      signal: ctx.signal,
      onProgress: (visited) => ctx.heartbeat({ visited }),
    };
    const run = ops.ripgrep ? await runRipgrep(ops.ripgrep, query, ops) : await runJsGrep(ops.fs, query);
    if (ctx.signal.aborted) return toolError('Grep was aborted before completion');
    if (!run.ok) return toolError(run.error);
    const { hits, leftOut } = guard ? await withoutDenied(run.hits, (f) => deniedResult(ctx, f)) : { hits: run.hits, leftOut: 0 };
    const mtime = (f: string) =>
      ops.fs.stat(f).then(
        (s) => s.mtimeMs,
        () => 0,
      );
    const out = await format(hits, input, head, before + after > 0, mtime);
    return leftOut > 0 ? { ...out, content: `${out.content}\n\n${leftOutNote(leftOut)}` } : out;
  },
};

/** Every result checked on its real path (ARCHITECTURE.md#path-rules-on-real-paths); what a Read rule forbids is left out and counted. */
async function withoutDenied(hits: GrepHits, denied: (file: string) => Promise<boolean>): Promise<{ hits: GrepHits; leftOut: number }> {
  const files =
    hits.mode === 'files_with_matches'
      ? hits.files
      : hits.mode === 'count'
        ? hits.counts.map((c) => c.file)
        : hits.files.map((f) => f.file);
  const out = new Set<string>();
  for (const f of new Set(files)) if (await denied(f)) out.add(f);
  if (out.size === 0) return { hits, leftOut: 0 };
  const keep = (f: string) => !out.has(f);
  const kept: GrepHits =
    hits.mode === 'files_with_matches'
      ? { mode: hits.mode, files: hits.files.filter(keep) }
      : hits.mode === 'count'
        ? { mode: hits.mode, counts: hits.counts.filter((c) => keep(c.file)) }
        : { mode: hits.mode, files: hits.files.filter((f) => keep(f.file)), more: hits.more };
  return { hits: kept, leftOut: out.size };
}
