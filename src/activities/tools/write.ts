/** Write: create or overwrite a file. An existing file must have been Read first and be unchanged. */
import * as path from 'node:path';
import { z } from 'zod';
import { checkFreshness, statTarget } from './freshness';
import { guardViolation, openCheck } from './path-guard';
import { resolveToolPath, stampsFor } from './paths';
import { toolError, toolOk, type ToolDefinition } from './types';

export const WriteInput = z.strictObject({
  file_path: z.string().describe('The absolute path to the file to write (must be absolute, not relative)'),
  content: z.string().describe('The content to write to the file'),
});
export type WriteInput = z.infer<typeof WriteInput>;

export const writeTool: ToolDefinition<WriteInput> = {
  name: 'Write',
  description:
    'Writes a file to the local filesystem, creating parent directories as needed and overwriting an ' +
    'existing file. An existing file must have been read with Read first, and not changed since. ' +
    'Prefer Edit for changes to existing files.',
  schema: WriteInput,
  readOnly: false,
  async execute(input, { context, ops, attempt }) {
    const check = await resolveToolPath(input.file_path, { context, fs: ops.fs });
    if (!check.ok) return toolError(check.error);
    const denied = guardViolation(context.pathGuard, 'write', 'Write', check);
    if (denied) return toolError(denied);
    // Each open is checked again on the file it actually opened (ARCHITECTURE.md#path-rules-on-real-paths).
    const opened = openCheck(context.pathGuard, 'write', 'Write', check.requested);
    const stat = await statTarget(ops.fs, check.real);
    const fresh = checkFreshness(stat, context.readStamp);
    if (!fresh.ok) {
      // A retry after a lost worker whose first attempt landed: the exact content is on disk, so
      // the write happened (ARCHITECTURE.md#side-effects-reported-as-unknown).
      // With no read stamp the first attempt can only have created the file (an unread existing file
      // is refused), so the retry reports what that attempt would have.
      if (attempt > 1 && stat && !stat.isDirectory && (await ops.fs.readFile(check.real, opened)).toString('utf8') === input.content) {
        const created = context.readStamp === undefined;
        return toolOk(
          created ? `File created successfully at: ${check.requested}` : `The file ${check.requested} has been updated successfully.`,
          {
            fileStamps: stampsFor(check, stat.mtimeMs),
            structured: { type: created ? 'create' : 'update', filePath: check.requested },
          },
        );
      }
      return toolError(fresh.error);
    }
    await ops.fs.mkdir(path.dirname(check.real));
    await ops.fs.writeFile(check.real, input.content, opened);
    const after = await ops.fs.stat(check.real);
    const created = fresh.stat === null;
    return toolOk(
      created ? `File created successfully at: ${check.requested}` : `The file ${check.requested} has been updated successfully.`,
      {
        fileStamps: stampsFor(check, after.mtimeMs),
        structured: { type: created ? 'create' : 'update', filePath: check.requested },
      },
    );
  },
};
