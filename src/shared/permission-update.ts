/**
 * The SDK's `PermissionUpdate`: what a `canUseTool` answer or a hook's permission suggestion may
 * change. Shared by the client (permissions) and the hook types, which both speak it.
 */
import type { PermissionMode } from './permission-mode';

export interface PermissionRuleValue {
  toolName: string;
  ruleContent?: string;
}

type PermissionBehavior = 'allow' | 'deny' | 'ask';
type PermissionUpdateDestination = 'userSettings' | 'projectSettings' | 'localSettings' | 'session' | 'cliArg';

/** The SDK's shape. A non-empty `updatedPermissions` answer adds the request's suggested rules to the session. */
export type PermissionUpdate =
  | {
      type: 'addRules' | 'replaceRules' | 'removeRules';
      rules: PermissionRuleValue[];
      behavior: PermissionBehavior;
      destination: PermissionUpdateDestination;
    }
  | { type: 'setMode'; mode: PermissionMode | 'auto'; destination: PermissionUpdateDestination }
  | { type: 'addDirectories' | 'removeDirectories'; directories: string[]; destination: PermissionUpdateDestination };
