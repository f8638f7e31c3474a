/**
 * Read: a text file as `cat -n` would print it (line number right-aligned to 6, TAB, line).
 * A file up to the size a read without offset/limit accepts is read in one call, and sniffed and
 * split from those bytes; a bigger one (offset/limit) is scanned as a stream, so offset/limit work
 * on files far bigger than memory.
 */
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { MAX_TOOL_RESULT_CHARS } from '../../shared/tools';
import { guardViolation, openCheck } from './path-guard';
import { resolveToolPath, stampsFor } from './paths';
import { errnoCode, toolError, toolOk, type ToolDefinition } from './types';

const READ_DEFAULT_LIMIT = 2_000;
const READ_MAX_LINE_CHARS = 2_000;
const READ_MAX_FILE_BYTES = 256 * 1024;
/** Below the registry's cap, so Read itself says where to continue. */
const READ_MAX_OUTPUT_CHARS = MAX_TOOL_RESULT_CHARS - 2_000;
const BINARY_SNIFF_BYTES = 8 * 1024;

export const ReadInput = z.strictObject({
  file_path: z.string().describe('The absolute path to the file to read'),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The line number to start reading from. Only provide if the file is too large to read at once'),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('The number of lines to read. Only provide if the file is too large to read at once.'),
});
export type ReadInput = z.infer<typeof ReadInput>;

/** `cat -n` style: `     1\tline`. */
function numberLine(n: number, line: string): string {
  return `${String(n).padStart(6, ' ')}\t${line}`;
}

/**
 * Every line of a file's bytes, split on `\n` with a trailing `\r` dropped; a final newline ends
 * the last line. The bytes come as a stream's chunks, or as one chunk when the file was read whole.
 */
async function* readLines(chunks: Iterable<Buffer> | AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of chunks) {
    const parts = (rest + decoder.write(chunk)).split('\n');
    rest = parts.pop()!;
    for (const p of parts) yield p.endsWith('\r') ? p.slice(0, -1) : p;
  }
  rest += decoder.end();
  if (rest) yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}

interface Window {
  text: string;
  shown: number;
  lastShown: number;
  total: number;
  cutByBudget: boolean;
}

async function readWindow(lines: AsyncIterable<string>, start: number, limit: number): Promise<Window> {
  const out: string[] = [];
  let size = 0;
  let total = 0;
  let lastShown = start - 1;
  let cutByBudget = false;
  for await (const raw of lines) {
    total++;
    if (total < start || total >= start + limit || cutByBudget) continue;
    const line =
      raw.length > READ_MAX_LINE_CHARS
        ? `${raw.slice(0, READ_MAX_LINE_CHARS)}... [line truncated: ${raw.length - READ_MAX_LINE_CHARS} more characters]`
        : raw;
    const numbered = numberLine(total, line);
    if (size + numbered.length + 1 > READ_MAX_OUTPUT_CHARS && out.length > 0) {
      cutByBudget = true;
      continue;
    }
    out.push(numbered);
    size += numbered.length + 1;
    lastShown = total;
  }
  return { text: out.join('\n'), shown: out.length, lastShown, total, cutByBudget };
}

export const readTool: ToolDefinition<ReadInput> = {
  name: 'Read',
  description:
    'Reads a file from the local filesystem. file_path must be absolute. By default reads up to ' +
    `${READ_DEFAULT_LIMIT} lines from the start; use offset (1-based line number) and limit for long files. ` +
    `Lines longer than ${READ_MAX_LINE_CHARS} characters are cut. Output is in cat -n format (line ` +
    'number, TAB, line). Files must be read before they can be edited or overwritten.',
  schema: ReadInput,
  readOnly: true,
  async execute(input, { context, ops }) {
    const check = await resolveToolPath(input.file_path, { context, fs: ops.fs });
    if (!check.ok) return toolError(check.error);
    const denied = guardViolation(context.pathGuard, 'read', 'Read', check);
    if (denied) return toolError(denied);
    // Each open is checked again on the file it actually opened (ARCHITECTURE.md#path-rules-on-real-paths).
    const opened = openCheck(context.pathGuard, 'read', 'Read', check.requested);
    let stat;
    try {
      stat = await ops.fs.stat(check.real);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return toolError('File does not exist.');
      throw err;
    }
    if (stat.isDirectory) return toolError('EISDIR: illegal operation on a directory, read');
    if (stat.size > READ_MAX_FILE_BYTES && input.offset === undefined && input.limit === undefined) {
      return toolError(
        `File content (${Math.ceil(stat.size / 1024)}KB) exceeds maximum allowed size (${READ_MAX_FILE_BYTES / 1024}KB). ` +
          'Please use offset and limit parameters to read specific portions of the file, or use the Grep tool to ' +
          'search for specific content.',
      );
    }
    // One read where the whole file may be shown: a few file-system calls fewer than a sniff and a
    // stream. Only a regular file that has a size: /proc's report 0, and a device never ends.
    const whole = stat.isFile && stat.size > 0 && stat.size <= READ_MAX_FILE_BYTES ? await ops.fs.readFile(check.real, opened) : undefined;
    const prefix = whole ? whole.subarray(0, BINARY_SNIFF_BYTES) : await ops.fs.readPrefix(check.real, BINARY_SNIFF_BYTES, opened);
    if (prefix.includes(0)) {
      return toolError(
        `This tool cannot read binary files. The file ${check.requested} appears to be binary (it contains NUL ` +
          'bytes). Use Bash (e.g. file, xxd, strings) to inspect it.',
      );
    }
    const fileStamps = stampsFor(check, stat.mtimeMs);
    if (stat.size === 0) {
      return toolOk('<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>', {
        fileStamps,
        structured: { type: 'text', file: { filePath: check.requested, numLines: 0, startLine: 1, totalLines: 0 } },
      });
    }
    const start = input.offset && input.offset > 0 ? input.offset : 1;
    const limit = input.limit ?? READ_DEFAULT_LIMIT;
    const win = await readWindow(readLines(whole ? [whole] : ops.fs.readChunks(check.real, opened)), start, limit);
    const structured = {
      type: 'text',
      file: { filePath: check.requested, numLines: win.shown, startLine: start, totalLines: win.total },
    };
    if (win.shown === 0) {
      return toolOk(
        `<system-reminder>Warning: the file exists but is shorter than the provided offset (${input.offset ?? start}). ` +
          `The file has ${win.total} lines.</system-reminder>`,
        { fileStamps, structured },
      );
    }
    let text = win.text;
    if (win.lastShown < win.total) {
      const why = win.cutByBudget ? ` (output limited to ${READ_MAX_OUTPUT_CHARS} characters)` : '';
      text +=
        `\n\n(Showing lines ${start}-${win.lastShown} of ${win.total}${why}. ` +
        `Call Read with offset=${win.lastShown + 1} to read more.)`;
    }
    return toolOk(text, { fileStamps, structured });
  },
};
