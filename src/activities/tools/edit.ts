/** Edit: exact string replacement in a file that was Read first and is unchanged since. */
import * as path from 'node:path';
import { z } from 'zod';
import { checkFreshness, statTarget } from './freshness';
import { guardViolation, openCheck } from './path-guard';
import { resolveToolPath, stampsFor } from './paths';
import { toolError, toolOk, type ToolDefinition } from './types';

export const EditInput = z.strictObject({
  file_path: z.string().describe('The absolute path to the file to modify'),
  old_string: z.string().describe('The text to replace'),
  new_string: z.string().describe('The text to replace it with (must be different from old_string)'),
  replace_all: z.boolean().default(false).describe('Replace all occurrences of old_string (default false)'),
});
export type EditInput = z.infer<typeof EditInput>;

function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** The success message of an edit already applied to `content`, or undefined if it is not. */
function editLanded(content: string, input: EditInput): string | undefined {
  const { old_string: oldString, new_string: newString } = input;
  if (oldString === '') return content === newString ? `The file ${input.file_path} has been updated successfully.` : undefined;
  if (newString === '' || !content.includes(newString) || content.includes(oldString)) return undefined;
  return input.replace_all
    ? `The file ${input.file_path} has been updated. All occurrences of '${oldString}' were successfully replaced with '${newString}'.`
    : `The file ${input.file_path} has been updated successfully.`;
}

export const editTool: ToolDefinition<EditInput> = {
  name: 'Edit',
  description:
    'Performs an exact string replacement in a file. The file must have been read with Read first. ' +
    'old_string must match the file exactly (whitespace included) and exactly once, unless replace_all ' +
    'is true; add surrounding context to make it unique. An empty old_string creates a new file.',
  schema: EditInput,
  readOnly: false,
  async execute(input, { context, ops, attempt }) {
    const { old_string: oldString, new_string: newString } = input;
    if (oldString === newString) {
      return toolError('No changes to make: old_string and new_string are exactly the same.');
    }
    const check = await resolveToolPath(input.file_path, { context, fs: ops.fs });
    if (!check.ok) return toolError(check.error);
    const denied = guardViolation(context.pathGuard, 'write', 'Edit', check);
    if (denied) return toolError(denied);
    // Each open is checked again on the file it actually opened (ARCHITECTURE.md#path-rules-on-real-paths).
    const opened = openCheck(context.pathGuard, 'write', 'Edit', check.requested);
    const stat = await statTarget(ops.fs, check.real);
    if (attempt > 1 && stat !== null && !stat.isDirectory) {
      // A retry after a lost worker whose first attempt landed: the new text is there and the old
      // is gone, so the edit happened (ARCHITECTURE.md#side-effects-reported-as-unknown).
      const landed = editLanded((await ops.fs.readFile(check.real, opened)).toString('utf8'), input);
      if (landed !== undefined && !checkFreshness(stat, context.readStamp).ok) {
        return toolOk(landed, {
          fileStamps: stampsFor(check, stat.mtimeMs),
          structured: { filePath: check.requested, replaceAll: input.replace_all, replacements: 1 },
        });
      }
    }
    if (stat === null && oldString !== '') return toolError('File does not exist.');
    if (stat !== null && oldString === '' && stat.size > 0) {
      return toolError('Cannot create new file - file already exists.');
    }
    const fresh = checkFreshness(stat, context.readStamp);
    if (!fresh.ok) return toolError(fresh.error);

    let updated: string;
    let replacements = 1;
    if (stat === null || oldString === '') {
      updated = newString;
    } else {
      const content = (await ops.fs.readFile(check.real, opened)).toString('utf8');
      replacements = countOccurrences(content, oldString);
      if (replacements === 0) return toolError(`String to replace not found in file.\nString: ${oldString}`);
      if (replacements > 1 && !input.replace_all) {
        return toolError(
          `Found ${replacements} matches of the string to replace, but replace_all is false. To replace all ` +
            'occurrences, set replace_all to true. To replace only one occurrence, please provide more context ' +
            `to uniquely identify the instance.\nString: ${oldString}`,
        );
      }
      const at = content.indexOf(oldString);
      updated = input.replace_all
        ? content.split(oldString).join(newString)
        : content.slice(0, at) + newString + content.slice(at + oldString.length);
    }
    if (stat === null) await ops.fs.mkdir(path.dirname(check.real));
    await ops.fs.writeFile(check.real, updated, opened);
    const after = await ops.fs.stat(check.real);
    const content =
      stat === null
        ? `File created successfully at: ${check.requested}`
        : input.replace_all
          ? `The file ${check.requested} has been updated. All occurrences of '${oldString}' were successfully replaced with '${newString}'.`
          : `The file ${check.requested} has been updated successfully.`;
    return toolOk(content, {
      fileStamps: stampsFor(check, after.mtimeMs),
      structured: { filePath: check.requested, replaceAll: input.replace_all, replacements },
    });
  },
};
