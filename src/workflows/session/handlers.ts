/**
 * The session's signals, updates and queries (ARCHITECTURE.md#the-shape). Handlers only record intent in state;
 * the loop acts on it at its next safe point.
 */
import { CancellationScope, setHandler } from '@temporalio/workflow';
import * as api from '../../shared/api';
import { answerProblem, pendingPermissionsQuery, respondToPermissionUpdate } from '../../shared/approvals';
import { hookAnswerProblem, pendingHookRequestsQuery, recordedAnswer, respondToHookUpdate } from '../../shared/client-hooks';
import { pendingToolRequestsQuery, recordedToolAnswer, respondToToolUpdate, toolAnswerProblem } from '../../shared/client-tools';
import { PermissionMode } from '../../shared/config';
import type { EventLog, LoopState } from './state';
import { sessionTurn, usageView } from './state';
import type { CheckpointsView } from '../../shared/checkpoint';
import { jsonBytes } from '../../shared/payload';
import { apiErrorCategory } from '../../shared/sdk-shapes';
import type { ExitReason } from './turn';
import { acceptSubagentEvents } from './subagents';
import { accountAbandonedCall } from './abandoned-calls';

/** A query answer is one payload: it must stay under the 2 MiB payload limit (and 4 MiB gRPC). */
export const QUERY_PAGE_BYTES = 1024 * 1024;
const REMEMBERED_MESSAGE_IDS = 1_000;

/** What the handlers may see and touch of a running session. */
export interface SessionControl {
  readonly state: LoopState;
  readonly log: EventLog;
  readonly pending: { id: string; name: string }[];
  turnScope: CancellationScope | undefined;
  status: api.SessionStatus;
  exitReason: ExitReason | undefined;
}

export function installHandlers(s: SessionControl): void {
  const { state, log } = s;
  setHandler(api.interruptSignal, () => {
    state.interrupted = true;
    s.turnScope?.cancel();
  });
  setHandler(api.setModelSignal, (model) => {
    if (typeof model !== 'string' || model.length === 0) {
      log.emit({ type: 'system', subtype: 'warning', message: `setModel ignored: invalid model ${JSON.stringify(model)}` });
      return;
    }
    if (model === state.model) return;
    log.emit({ type: 'system', subtype: 'model_changed', model, previous_model: state.model, reason: 'set_model' });
    state.model = model;
  });
  setHandler(api.setPermissionModeSignal, (mode) => {
    const parsed = PermissionMode.safeParse(mode);
    if (!parsed.success) {
      log.emit({ type: 'system', subtype: 'warning', message: `setPermissionMode ignored: unknown mode ${JSON.stringify(mode)}` });
      return;
    }
    if (parsed.data === 'bypassPermissions' && state.settings?.bypassDisabled) {
      log.emit({
        type: 'system',
        subtype: 'warning',
        message: 'setPermissionMode ignored: bypassPermissions is disabled by a settings file (disableBypassPermissionsMode)',
      });
      return;
    }
    state.permissionMode = parsed.data;
  });
  setHandler(api.subagentEventsSignal, (batch) => acceptSubagentEvents(state, log, batch));
  setHandler(api.setMaxThinkingTokensSignal, (tokens) => {
    state.maxThinkingTokens = typeof tokens === 'number' && tokens >= 0 ? tokens : null;
  });
  setHandler(api.abandonedCallSignal, (n) => accountAbandonedCall(state, log, n));
  setHandler(api.apiRetrySignal, (n) => {
    log.emit({
      type: 'system',
      subtype: 'api_retry',
      attempt: n.attempt,
      max_retries: n.maxRetries,
      retry_delay_ms: n.retryDelayMs,
      error_status: n.errorStatus,
      error: apiErrorCategory(n.errorStatus),
      error_message: n.error,
      ...(typeof n.reason === 'string' ? { reason: n.reason } : {}),
    });
  });

  const turnRunning = () => s.status === 'running' || s.status === 'waiting_for_approval';
  const accept = (input: api.UserInput): { turnId: string; duplicate: boolean } => {
    const seen = input.id ? state.input.seenMessageIds.find((m) => m.id === input.id) : undefined;
    if (seen) return { turnId: seen.turnId, duplicate: true };
    // A steer joins the running turn; anything else starts a turn of its own.
    const steer = input.steer === true && turnRunning();
    const turnId = steer ? `turn-${state.input.userTurns}` : `turn-${++state.input.userTurns}`;
    state.input.inbox.push({ text: input.text, ...(input.id ? { id: input.id } : {}), turnId, ...(steer ? { steer: true } : {}) });
    if (input.id) {
      state.input.seenMessageIds.push({ id: input.id, turnId });
      if (state.input.seenMessageIds.length > REMEMBERED_MESSAGE_IDS) state.input.seenMessageIds.shift();
    }
    return { turnId, duplicate: false };
  };
  setHandler(api.sendMessageUpdate, (input) => accept(input), {
    validator: (input) => {
      if (!input || typeof input.text !== 'string' || input.text.trim() === '')
        throw new Error('sendMessage: `text` must be a non-empty string');
      if (input.id !== undefined && typeof input.id !== 'string') throw new Error('sendMessage: `id` must be a string');
      if (input.steer !== undefined && typeof input.steer !== 'boolean') throw new Error('sendMessage: `steer` must be a boolean');
      if (!state.config.interactive && !(input.steer === true && turnRunning())) {
        throw new Error(
          input.steer
            ? 'sendMessage: nothing to steer: this one-shot session is not running a turn'
            : 'sendMessage: this session is not interactive (start it with interactive: true); a running turn can be steered with steer: true',
        );
      }
      const dup = input.id !== undefined && state.input.seenMessageIds.some((m) => m.id === input.id);
      if ((state.closed || s.status === 'completed') && !dup) throw new Error('sendMessage: the session is closed');
    },
  });
  setHandler(api.userMessageSignal, (input) => {
    const canTake = state.config.interactive || (input?.steer === true && turnRunning());
    if (!canTake || state.closed || typeof input?.text !== 'string' || !input.text.trim()) {
      log.emit({
        type: 'system',
        subtype: 'warning',
        message: 'userMessage ignored: the session is not interactive (and no turn is running to steer), is closed, or the text is empty',
      });
      return;
    }
    accept(input);
  });
  setHandler(api.closeSignal, () => {
    state.closed = true;
  });

  setHandler(
    respondToPermissionUpdate,
    (answer) => {
      const approvals = state.approvals;
      const request = approvals.pending.find((p) => p.requestId === answer.requestId)!;
      approvals.answers[answer.requestId] = answer;
      const rulesAdded =
        answer.behavior === 'allow' && answer.always ? request.suggestions.filter((r) => !approvals.sessionAllowRules.includes(r)) : [];
      approvals.sessionAllowRules.push(...rulesAdded);
      // The SDK's `interrupt: true`: the denied call gets its answer, then the turn stops.
      if (answer.behavior === 'deny' && answer.interrupt) state.interrupted = true;
      log.emit({
        type: 'system',
        subtype: 'permission_resolved',
        request_id: answer.requestId,
        tool_use_id: request.toolUseId,
        behavior: answer.behavior,
        rules_added: rulesAdded,
      });
      return { applied: true as const, rulesAdded };
    },
    {
      validator: (answer) => {
        // Answered but not yet taken by the waiting call counts as answered.
        const open = state.approvals.pending.filter((p) => state.approvals.answers[p.requestId] === undefined);
        const problem = answerProblem(answer, open);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(pendingPermissionsQuery, () => state.approvals.pending.filter((p) => state.approvals.answers[p.requestId] === undefined));

  // Callback hooks (ARCHITECTURE.md#callback-hooks): the answer is taken by the hook waiting for it.
  const openHookRequests = () =>
    (state.client.hookRequests?.pending ?? []).filter((p) => state.client.hookRequests!.answers[p.requestId] === undefined);
  setHandler(
    respondToHookUpdate,
    (answer) => {
      state.client.hookRequests!.answers[answer.requestId] = recordedAnswer(answer);
      return { applied: true as const };
    },
    {
      validator: (answer) => {
        const problem = hookAnswerProblem(answer, openHookRequests());
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(pendingHookRequestsQuery, openHookRequests);

  // Client tools (ARCHITECTURE.md#client-mcp-tools): the answer is taken by the call waiting for it.
  const openToolRequests = () =>
    (state.client.toolRequests?.pending ?? []).filter((p) => state.client.toolRequests!.answers[p.requestId] === undefined);
  setHandler(
    respondToToolUpdate,
    (answer) => {
      state.client.toolRequests!.answers[answer.requestId] = recordedToolAnswer(answer);
      return { applied: true as const };
    },
    {
      validator: (answer) => {
        const problem = toolAnswerProblem(answer, openToolRequests());
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(pendingToolRequestsQuery, openToolRequests);

  setHandler(api.usageQuery, () => usageView(state));
  setHandler(api.turnCountQuery, () => state.turnCount);
  setHandler(api.sessionViewQuery, () => ({
    status: s.status,
    exitReason: s.exitReason,
    model: state.model,
    permissionMode: state.permissionMode,
    maxThinkingTokens: state.maxThinkingTokens,
    turnCount: state.turnCount,
    pendingTools: [...s.pending],
    todos: state.todos,
    messageCount: state.messages.length,
    pendingPermissions: state.approvals.pending,
    subagents: state.subagents ?? [],
    ...(state.mcpServers ? { mcpServers: state.mcpServers } : {}),
  }));
  setHandler(api.eventsQuery, (opts) => {
    const events = byteBoundedPage(log.page(opts?.after, opts?.limit ?? 1000));
    const last = events.length ? events[events.length - 1]!.seq : (opts?.after ?? -1);
    return { events, nextSeq: last, done: s.status === 'completed' && last >= state.nextSeq - 1 };
  });
  setHandler(api.settingsQuery, () => state.settings);
  setHandler(api.checkpointsQuery, () => checkpointsView(state));
  setHandler(api.turnMarksQuery, () => state.turnMarks ?? []);
  setHandler(api.turnOfMessageQuery, (uuid) => {
    const i = (state.turnMarks ?? []).findIndex((m) => m.uuids.includes(uuid));
    return i < 0 ? null : i + 1;
  });
  setHandler(api.transcriptQuery, (opts) => {
    const start = opts?.start ?? 0;
    return byteBoundedPage(state.messages.slice(start, start + (opts?.limit ?? state.messages.length)));
  });
  // The newest event's seq lets a live stream be shown after the events before its call (ARCHITECTURE.md#live-tokens).
  setHandler(api.promptQuery, (args) => ({ ...promptPage(state, args), lastSeq: state.nextSeq - 1 }));
}

/** One page of the prompt; the whole answer (system prompt and tools included) fits `maxBytes`. */
export function promptPage(
  state: Pick<LoopState, 'systemPrompt' | 'tools' | 'messages'>,
  { upTo, start, maxBytes, withTools }: { upTo: number; start: number; maxBytes: number; withTools: boolean },
): api.PromptPage {
  const system = state.systemPrompt;
  const tools = withTools ? state.tools : [];
  const budget = Math.min(maxBytes, QUERY_PAGE_BYTES) - jsonBytes(system) - jsonBytes(tools) - 64;
  return { system, tools, messages: byteBoundedPage(state.messages.slice(start, upTo), Math.max(budget, 1)), start, total: upTo };
}

/** Trim a page so its JSON stays under `maxBytes` (always at least one item). */
export function byteBoundedPage<T>(items: T[], maxBytes = QUERY_PAGE_BYTES): T[] {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += jsonBytes(items[i]);
    if (bytes > maxBytes && i > 0) return items.slice(0, i);
  }
  return items;
}

/** The `checkpoints` query (ARCHITECTURE.md#checkpoints). */
function checkpointsView(state: LoopState): CheckpointsView {
  const cp = state.files.checkpoints;
  return {
    turns: sessionTurn(state),
    checkpoints: cp?.list ?? [],
    ...(cp?.failing !== undefined ? { failing: cp.failing } : {}),
    ...(state.context.compactedAtTurn !== undefined ? { compactedAtTurn: state.context.compactedAtTurn } : {}),
    ...(state.config.cwd !== '' ? { path: state.config.cwd } : {}),
  };
}
