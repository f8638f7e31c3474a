/**
 * The permission step of a tool call: rules and mode decide (a pure function in
 * shared/permissions); an "ask" becomes a durable pending request that waits — through worker
 * crashes, deploys and days — for any client's answer (ARCHITECTURE.md#durable-approval).
 * Only that call waits: the turn's other read-only calls go on.
 */
import { ActivityFailure, condition, isCancellation, patched } from '@temporalio/workflow';
import { isHostLostFailure } from './checkpoints';
import type { PendingPermission, PermissionAnswer } from '../../shared/approvals';
import type { ToolUseBlock } from '../../shared/messages';
import { evaluatePermission, parseRules, type PermissionDecision, type PermissionRules } from '../../shared/permissions';
import type { PathGuard, ToolSpec } from '../../shared/tools';
import type { CallFacts, InspectCallInput } from '../../shared/permissions/facts';
import { ruleCoversTool } from '../../shared/permissions/rules';
import { EDIT_TOOLS, READ_TOOLS } from '../../shared/permissions/decide';
import type { HookVerdict } from '../../shared/hooks';
import type { EventLog, LoopState } from './state';
import { invalidCallReason } from './tool-calls';
import { PATCHES } from '../../shared/compat';
import {
  approvalInputInvalidText,
  DEFAULT_DENY_MESSAGE,
  HOOK_DENIED,
  hookAsksText,
  neverAsksText,
  permissionCheckFailedText,
  permissionTimeoutText,
} from '../../shared/model-texts';

export interface GateDeps {
  state: LoopState;
  log: EventLog;
  now(): number;
  /** Called when the set of pending requests changes (the session's status follows it). */
  onApprovalsChanged(): void;
  /** The `inspectToolCall` activity (absent in callers that decide on the input alone). */
  inspect?(input: InspectCallInput): Promise<CallFacts>;
}

export type GateResult =
  | {
      allowed: true;
      input: unknown;
      /** What the tools host found out about the call, when the decision needed it. */
      facts?: CallFacts;
      /** A person (or canUseTool) approved this call: ask rules and protected files no longer hold it back. */
      approved?: boolean;
    }
  | { allowed: false; message: string };

const FILE_TOOLS = new Set([...EDIT_TOOLS, ...READ_TOOLS]);

/** The session's rules: its options, what settings files added, and answers given with `always`. */
function sessionRules(state: LoopState): PermissionRules {
  const cfg = state.config;
  const fromFiles = state.settings ?? { allow: [], deny: [], ask: [] };
  return parseRules({
    allow: [...fromFiles.allow, ...cfg.allowedTools, ...state.approvals.sessionAllowRules],
    deny: [...fromFiles.deny, ...cfg.disallowedTools],
    ask: [...fromFiles.ask, ...cfg.askTools],
  });
}

/**
 * Whether the decision depends on what only the tools host can see: a Bash line's commands (rules
 * name commands; an ask needs them for its suggestions) or a file tool's real path (path rules,
 * settings files the session reads).
 */
function needsFacts(state: LoopState, tool: string, rules: PermissionRules): boolean {
  const mode = state.permissionMode;
  const has = (list: 'allow' | 'deny' | 'ask', kind: 'bash' | 'path') =>
    rules[list].some((r) => r.kind === kind && ruleCoversTool(r, tool));
  if (tool === 'Bash') {
    if (has('deny', 'bash') || has('ask', 'bash')) return true;
    if (mode === 'bypassPermissions' || mode === 'plan') return false;
    return mode !== 'dontAsk' || has('allow', 'bash');
  }
  if (!FILE_TOOLS.has(tool)) return false;
  return has('deny', 'path') || has('ask', 'path') || has('allow', 'path') || (EDIT_TOOLS.has(tool) && mode !== 'bypassPermissions');
}

/** Facts from the tools host, or why they could not be had (the call is then denied: unchecked is not allowed). */
async function callFacts(deps: GateDeps, call: ToolUseBlock, rules: PermissionRules): Promise<{ facts?: CallFacts; failed?: string }> {
  const { state } = deps;
  if (!deps.inspect || !needsFacts(state, call.name, rules) || !patched(PATCHES.permissionCallFacts.id)) return {};
  // Bash is inspected by a local activity, and no `patched()` may first be asked right after one
  // (docs/REPLAY.md#local-activities-and-patches): decide the approval patch now, with this one.
  patched(PATCHES.durableApproval.id);
  try {
    const facts = await deps.inspect({
      toolName: call.name,
      input: call.input,
      cwd: state.config.cwd,
      settingSources: state.config.settingSources,
      settingsFile: state.config.settingsFile,
      hooks: state.config.hooks,
    });
    return { facts };
  } catch (e) {
    // A lost host that could not be replaced ends the session (ARCHITECTURE.md#checkpoints).
    if (isCancellation(e) || isHostLostFailure(e)) throw e;
    const cause = e instanceof ActivityFailure ? (e.cause?.message ?? e.message) : String(e);
    return { failed: permissionCheckFailedText(call.name, cause) };
  }
}

function decidePermission(
  state: LoopState,
  call: ToolUseBlock,
  spec: ToolSpec,
  facts?: CallFacts,
  rules = sessionRules(state),
): PermissionDecision {
  return evaluatePermission({
    toolName: call.name,
    input: call.input,
    readOnly: spec.readOnly,
    mode: state.permissionMode,
    rules,
    workspace: {
      cwd: state.config.cwd,
      homeDir: facts?.homeDir,
      additionalDirectories: [...state.config.additionalDirectories, ...(state.settings?.additionalDirectories ?? [])],
    },
    paths: facts?.paths,
    bash: facts?.bash,
    protectedTarget: facts?.protectedTarget,
  });
}

/**
 * The path rules a file tool re-checks at the moment it touches a path (shared/tools.ts
 * `PathGuard`): deny rules always; ask rules and protected files unless a person approved this call.
 */
export function pathGuardFor(state: LoopState, toolName: string, gate: GateResult & { allowed: true }): PathGuard | undefined {
  if (!FILE_TOOLS.has(toolName)) return undefined;
  const rules = sessionRules(state);
  const patterns = (tool: 'Read' | 'Edit') =>
    (gate.approved ? [rules.deny] : [rules.deny, rules.ask]).flatMap((list) =>
      list.flatMap((r) => (r.kind === 'path' && ruleCoversTool(r, tool) ? [r.pattern] : [])),
    );
  const noRead = patterns('Read');
  const noEdit = EDIT_TOOLS.has(toolName) ? patterns('Edit') : [];
  const protectedFiles =
    EDIT_TOOLS.has(toolName) && !gate.approved && state.permissionMode !== 'bypassPermissions' ? (gate.facts?.protectedFiles ?? []) : [];
  if (noRead.length === 0 && noEdit.length === 0 && protectedFiles.length === 0) return undefined;
  return {
    noRead,
    noEdit,
    protectedFiles,
    bases: { cwd: state.config.cwd, ...(gate.facts?.homeDir ? { homeDir: gate.facts.homeDir } : {}) },
  };
}

/**
 * `hook`: what PreToolUse hooks answered. Deny rules win over a hook's `allow`; a hook's `deny`
 * or `ask` wins over the rules' allow.
 */
export async function permissionGate(deps: GateDeps, call: ToolUseBlock, spec: ToolSpec, hook?: HookVerdict): Promise<GateResult> {
  const { state } = deps;
  if (hook?.permissionDecision === 'deny') return deny(deps, call, hook.permissionDecisionReason || HOOK_DENIED);
  const rules = sessionRules(state);
  const { facts, failed } = await callFacts(deps, call, rules);
  if (failed) return deny(deps, call, failed);
  const decision = withHookDecision(decidePermission(state, call, spec, facts, rules), hook, state.permissionMode === 'dontAsk');
  if (decision.behavior === 'allow') return { allowed: true, input: call.input, facts };
  if (decision.behavior === 'ask' && patched(PATCHES.durableApproval.id)) {
    const answer = await askPerson(deps, call, decision);
    if (answer.behavior === 'deny') return deny(deps, call, answer.message ?? DEFAULT_DENY_MESSAGE);
    // An input changed with the approval was not inspected: its tool re-checks deny rules itself, and it
    // was approved as given.
    if (answer.updatedInput === undefined) return { allowed: true, input: call.input, facts, approved: true };
    const invalid = invalidCallReason({ ...call, input: answer.updatedInput }, [spec]);
    return invalid
      ? deny(deps, call, approvalInputInvalidText(invalid))
      : { allowed: true, input: answer.updatedInput, facts, approved: true };
  }
  return deny(deps, call, decision.message);
}

function withHookDecision(decision: PermissionDecision, hook: HookVerdict | undefined, dontAsk: boolean): PermissionDecision {
  if (!hook?.permissionDecision || decision.behavior === 'deny') return decision;
  const reason = hook.permissionDecisionReason;
  if (hook.permissionDecision === 'allow') return { behavior: 'allow', reason: 'rule', matched: [] };
  // 'ask'
  const message = hookAsksText(reason);
  if (dontAsk) return { behavior: 'deny', message: neverAsksText(message), reason: 'rule', matched: [] };
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
      message: permissionTimeoutText(id, state.config.permissionTimeoutMs, call.name),
    }
  );
}
