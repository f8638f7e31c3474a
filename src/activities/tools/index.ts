/** The core tools (Claude Code's names, inputs and texts), their registry and their seams. */
export * from './types';
export * from './ops';
export * from './env';
export * from './paths';
export { builtinTools, createToolRegistry, formatInputError, toolSpec } from './registry';
export {
  bashTool,
  BashInput,
  lastCommandName,
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_TIMEOUT_MS,
  BASH_MAX_OUTPUT_CHARS,
  BASH_INTERRUPTED_MESSAGE,
} from './bash';
export { readTool, ReadInput, READ_DEFAULT_LIMIT, READ_MAX_FILE_BYTES, READ_MAX_LINE_CHARS } from './read';
export { writeTool, WriteInput } from './write';
export { editTool, EditInput } from './edit';
export { globTool, GlobInput, GLOB_MAX_RESULTS } from './glob';
export { grepTool, GrepInput, GREP_DEFAULT_HEAD_LIMIT } from './grep';
export { globToRegExp } from './glob-match';
