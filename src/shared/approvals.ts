/**
 * Durable human approval (ARCHITECTURE.md#durable-approval): a permission "ask" is a pending
 * request held in the workflow's state, answered by any client through a validated update. No
 * worker and no client has to stay alive while a person decides.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** A tool call waiting for a person's answer. */
export interface PendingPermission {
  /** Short and unique within the session (`perm-1`, `perm-2`, …): what `durable-agent approve` takes. */
  requestId: string;
  toolName: string;
  toolUseId: string;
  input: unknown;
  /** Why it asks: the ask rule that matched, or that no rule allows the call in this mode. */
  message: string;
  /** Allow rules that would cover this call: what an `always` answer adds to the session. */
  suggestions: string[];
  requestedAtMs: number;
}

export interface PermissionAnswer {
  requestId: string;
  behavior: 'allow' | 'deny';
  /** deny: what the model is told (default: the user denied it). */
  message?: string;
  /** allow: run the tool with this input instead (validated against the tool's schema again). */
  updatedInput?: Record<string, unknown>;
  /** allow: add the request's suggested allow rules to the session, so the like is not asked again. */
  always?: boolean;
  /** deny: also interrupt the turn, as the SDK's `interrupt: true`. */
  interrupt?: boolean;
}

/** Answer a pending request. Rejected (nothing applied) for an unknown or already-answered id. */
export const respondToPermissionUpdate = defineUpdate<{ applied: true; rulesAdded: string[] }, [PermissionAnswer]>('respondToPermission');
export const pendingPermissionsQuery = defineQuery<PendingPermission[]>('pendingPermissions');

/** Why an answer cannot be applied, or null. Pure: the update's validator and clients share it. */
export function answerProblem(answer: unknown, pending: readonly PendingPermission[]): string | null {
  if (!answer || typeof answer !== 'object') return 'respondToPermission: the answer must be an object';
  const a = answer as Partial<PermissionAnswer>;
  if (typeof a.requestId !== 'string' || !a.requestId) return 'respondToPermission: `requestId` must be a non-empty string';
  if (a.behavior !== 'allow' && a.behavior !== 'deny') return "respondToPermission: `behavior` must be 'allow' or 'deny'";
  if (a.message !== undefined && typeof a.message !== 'string') return 'respondToPermission: `message` must be a string';
  if (a.updatedInput !== undefined && (a.updatedInput === null || typeof a.updatedInput !== 'object' || Array.isArray(a.updatedInput))) {
    return 'respondToPermission: `updatedInput` must be an object';
  }
  if (!pending.some((p) => p.requestId === a.requestId)) {
    const ids = pending.map((p) => p.requestId);
    return `respondToPermission: no pending permission request ${a.requestId} (${ids.length ? `pending: ${ids.join(', ')}` : 'none is pending'}); it may have been answered already`;
  }
  return null;
}
