/**
 * The permission seam: a pure decision per tool call (REFERENCE "Permissions"). Rules are bare
 * tool names for now; `Tool(specifier)` rules, hooks and asking a person build on this.
 */
import type { PermissionMode } from './config';

export type PermissionDecision =
  | { behavior: 'allow' }
  | { behavior: 'deny'; message: string }
  | { behavior: 'ask'; message: string };

export interface PermissionInput {
  toolName: string;
  readOnly: boolean;
  mode: PermissionMode;
  allowedTools: readonly string[];
  disallowedTools: readonly string[];
}

const EDIT_TOOLS = new Set(['Write', 'Edit', 'NotebookEdit']);

/** Rule name of `Bash(npm test)` is `Bash`; a bare `Bash` rule matches every Bash call. */
function ruleTool(rule: string): string {
  const open = rule.indexOf('(');
  return (open === -1 ? rule : rule.slice(0, open)).trim();
}

function matches(rules: readonly string[], toolName: string): boolean {
  return rules.some((r) => ruleTool(r) === toolName && !r.includes('('));
}

/** Order: deny rules → mode → allow rules → read-only → ask (first match wins; deny wins even in bypass). */
export function decide(input: PermissionInput): PermissionDecision {
  const { toolName, readOnly, mode } = input;
  if (matches(input.disallowedTools, toolName)) {
    return { behavior: 'deny', message: `Permission to use ${toolName} has been denied by a disallowedTools rule.` };
  }
  if (mode === 'bypassPermissions') return { behavior: 'allow' };
  if (mode === 'plan' && !readOnly) {
    return {
      behavior: 'deny',
      message: `${toolName} was not run: the session is in plan mode, where only read-only tools run. Present the plan instead.`,
    };
  }
  if (matches(input.allowedTools, toolName)) return { behavior: 'allow' };
  if (readOnly) return { behavior: 'allow' };
  if (mode === 'acceptEdits' && EDIT_TOOLS.has(toolName)) return { behavior: 'allow' };
  const message =
    `Permission to use ${toolName} has not been granted. ` +
    `Allow it with allowedTools: ["${toolName}"] or a permissionMode such as acceptEdits or bypassPermissions.`;
  return mode === 'dontAsk' ? { behavior: 'deny', message } : { behavior: 'ask', message };
}
