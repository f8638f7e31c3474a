/** The core tools (Claude Code's names, inputs and texts), their registry and their seams. */
export * from './types';
export * from './ops';
export * from './env';
export * from './paths';
export { builtinTools, createToolRegistry } from './registry';
export { lastCommandName, BASH_INTERRUPTED_MESSAGE } from './bash';
export { globToRegExp } from './glob-match';
