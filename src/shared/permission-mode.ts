import { z } from 'zod';
import { sharedSchema } from './shared-schema';

/** Claude Code's permission modes (ARCHITECTURE.md#durable-approval). Its own module so the settings schema and the session config can both use it without importing each other. */
export const PermissionMode = sharedSchema('permissionMode.PermissionMode', () =>
  z.enum(['default', 'acceptEdits', 'bypassPermissions', 'plan', 'dontAsk']),
);
export type PermissionMode = z.infer<typeof PermissionMode>;
