/**
 * The permission step of a tool call: rules and mode decide (a pure function in
 * shared/permissions); an "ask" becomes a durable pending request that waits — through worker
 * crashes, deploys and days — for any client's answer (ARCHITECTURE.md#durable-approval).
 * Only that call waits: the turn's other read-only calls go on.
 */
import { condition, patched } from '@temporalio/workflow';
import { DEFAULT_DENY_MESSAGE, type PendingPermission, type PermissionAnswer } from '../shared/approvals';
import type { ToolUseBlock } from '../shared/messages';
import { evaluatePermission, parseRules, type PermissionDecision, type PermissionRules } from '../shared/permissions';
import type { ToolSpec } from '../shared/tools';
import type { HookVerdict } from '../shared/hooks';
import type { EventLog, LoopState } from './state';
import { invalidCallReason } from './tool-calls';

export interface GateDeps {
  state: LoopState;
  log: EventLog;
  now(): number;
  /** Called when the set of pending requests changes (the session's status follows it). */
  onApprovalsChanged(): void;
}

export type GateResult = { allowed: true; input: unknown } | { allowed: false; message: string };

/** Histories recorded before durable approval answer every "ask" with a denial at once. */
const DURABLE_APPROVAL_PATCH = 'durable-approval';

/** The session's rules: its options, what settings files added, and answers given with `always`. */
export function sessionRules(state: LoopState): PermissionRules {
  const cfg = state.config;
  const fromFiles = state.settings ?? { allow: [], deny: [], ask: [] };
  return parseRules({
    allow: [...fromFiles.allow, ...cfg.allowedTools, ...state.approvals.sessionAllowRules],
    deny: [...fromFiles.deny, ...cfg.disallowedTools],
    ask: [...fromFiles.ask, ...cfg.askTools],
  });
}

export function decidePermission(state: LoopState, call: ToolUseBlock, spec: ToolSpec): PermissionDecision {
  return evaluatePermission({
    toolName: call.name,
    input: call.input,
    readOnly: spec.readOnly,
    mode: state.permissionMode,
    rules: sessionRules(state),
    workspace: {
      cwd: state.config.cwd,
      additionalDirectories: [...state.config.additionalDirectories, ...(state.settings?.additionalDirectories ?? [])],
    },
  });
}

/**
 * `hook`: what PreToolUse hooks answered. Deny rules win over a hook's `allow`; a hook's `deny`
 * or `ask` wins over the rules' allow.
 */
export async function permissionGate(deps: GateDeps, call: ToolUseBlock, spec: ToolSpec, hook?: HookVerdict): Promise<GateResult> {
  const { state } = deps;
  if (hook?.permissionDecision === 'deny') return deny(deps, call, hook.permissionDecisionReason || 'Denied by a PreToolUse hook.');
  const decision = withHookDecision(decidePermission(state, call, spec), hook, state.permissionMode === 'dontAsk');
  if (decision.behavior === 'allow') return { allowed: true, input: call.input };
  if (decision.behavior === 'ask' && patched(DURABLE_APPROVAL_PATCH)) {
    const answer = await askPerson(deps, call, decision);
    if (answer.behavior === 'deny') return deny(deps, call, answer.message ?? DEFAULT_DENY_MESSAGE);
    if (answer.updatedInput === undefined) return { allowed: true, input: call.input };
    const invalid = invalidCallReason({ ...call, input: answer.updatedInput }, [spec]);
    return invalid
      ? deny(deps, call, `The input given with the approval is not valid: ${invalid}`)
      : { allowed: true, input: answer.updatedInput };
  }
  return deny(deps, call, decision.message);
}

function withHookDecision(decision: PermissionDecision, hook: HookVerdict | undefined, dontAsk: boolean): PermissionDecision {
  if (!hook?.permissionDecision || decision.behavior === 'deny') return decision;
  const reason = hook.permissionDecisionReason;
  if (hook.permissionDecision === 'allow') return { behavior: 'allow', reason: 'rule', matched: [] };
  // 'ask'
  const message = `A PreToolUse hook asks for approval${reason ? `: ${reason}` : '.'}`;
  if (dontAsk) return { behavior: 'deny', message: `${message} permissionMode dontAsk never asks.`, reason: 'rule', matched: [] };
  return { behavior: 'ask', message, reason: 'rule', matched: [], suggestions: decision.behavior === 'ask' ? decision.suggestions : [] };
}

function deny(deps: GateDeps, call: ToolUseBlock, message: string): GateResult {
  deps.state.permissionDenials.push({ tool_name: call.name, tool_use_id: call.id, tool_input: call.input });
  deps.log.emit({ type: 'system', subtype: 'permission_denied', tool_name: call.name, tool_use_id: call.id, message });
  return { allowed: false, message };
}

/** Record a pending request and wait for its answer, the timeout, or the turn's cancellation. */
async function askPerson(
  deps: GateDeps,
  call: ToolUseBlock,
  decision: PermissionDecision & { behavior: 'ask' },
): Promise<PermissionAnswer> {
  const { state, log } = deps;
  const approvals = state.approvals;
  const request: PendingPermission = {
    requestId: `perm-${++approvals.nextId}`,
    toolName: call.name,
    toolUseId: call.id,
    input: call.input,
    message: decision.message,
    suggestions: decision.suggestions,
    requestedAtMs: deps.now(),
  };
  approvals.pending.push(request);
  log.emit({
    type: 'system',
    subtype: 'permission_request',
    request_id: request.requestId,
    tool_name: call.name,
    tool_use_id: call.id,
    tool_input: call.input,
    message: request.message,
    suggestions: request.suggestions,
  });
  deps.onApprovalsChanged();
  const id = request.requestId;
  let outcome: 'answered' | 'timeout' | 'cancelled' = 'cancelled';
  let answer: PermissionAnswer | undefined;
  try {
    const answeredBy = () => approvals.answers[id] !== undefined;
    const timeoutMs = state.config.permissionTimeoutMs;
    const answered = timeoutMs === undefined ? (await condition(answeredBy), true) : await condition(answeredBy, timeoutMs);
    outcome = answered ? 'answered' : 'timeout';
  } finally {
    answer = approvals.answers[id];
    delete approvals.answers[id];
    const at = approvals.pending.findIndex((p) => p.requestId === id);
    if (at !== -1) approvals.pending.splice(at, 1);
    if (outcome !== 'answered') {
      log.emit({
        type: 'system',
        subtype: 'permission_resolved',
        request_id: id,
        tool_use_id: call.id,
        behavior: outcome,
        rules_added: [],
      });
    }
    deps.onApprovalsChanged();
  }
  return (
    answer ?? {
      requestId: id,
      behavior: 'deny',
      message: `No answer to permission request ${id} within ${state.config.permissionTimeoutMs} ms: ${call.name} was not run.`,
    }
  );
}
