/**
 * The permission seam: a pure decision per tool call with Claude Code's rule syntax and modes.
 * The pieces live in ./permissions/: rules (parsing), bash-split (compound commands), paths
 * (gitignore-style path rules), decide (the decision), settings (settings files and hooks).
 */
import type { PermissionMode } from './config';
import { EDIT_TOOLS, evaluatePermission, type PermissionDecision, type Workspace } from './permissions/decide';
import { parseRules } from './permissions/rules';

export * from './permissions/rules';
export * from './permissions/decide';
export interface PermissionInput {
  toolName: string;
  readOnly: boolean;
  mode: PermissionMode;
  allowedTools: readonly string[];
  disallowedTools: readonly string[];
  askTools?: readonly string[];
  /**
   * The call's input. Without it, `Tool(specifier)` deny and ask rules for this tool apply (they
   * cannot be checked, and unknown never runs unasked) and such allow rules do not.
   */
  toolInput?: unknown;
  workspace?: Workspace;
  /** Absolute paths the call touches with symlinks resolved (see PermissionRequest.paths). */
  paths?: readonly string[];
}

/**
 * Decide from rule strings (parsed on each call; they were validated with the session config).
 * Throws PermissionRuleError for a rule that does not parse.
 */
export function decide(input: PermissionInput): PermissionDecision {
  const decision = evaluatePermission({
    toolName: input.toolName,
    input: input.toolInput,
    readOnly: input.readOnly,
    mode: input.mode,
    rules: parseRules({ allow: input.allowedTools, deny: input.disallowedTools, ask: input.askTools }),
    workspace: input.workspace ?? {},
    paths: input.paths,
  });
  if (input.toolInput !== undefined || decision.reason !== 'noRule' || decision.behavior === 'allow') return decision;
  // A caller that passes no input gets the answers it got before rules had specifiers: acceptEdits
  // approves edits (the tools' own path policy keeps them inside cwd and additionalDirectories),
  // and the message does not complain about the input it did not pass.
  if (input.mode === 'acceptEdits' && EDIT_TOOLS.has(input.toolName)) return { behavior: 'allow', reason: 'mode', matched: [] };
  const message =
    `Permission to use ${input.toolName} has not been granted. ` +
    `Allow it with allowedTools: ["${input.toolName}"] or a permissionMode such as acceptEdits or bypassPermissions.`;
  return { ...decision, message };
}
