/**
 * The session's durable state: one JSON-safe object (no Map/Set/classes) with a schema
 * version, so it can be carried through continue-as-new and read back by a newer worker.
 */
import type { SessionConfig, PermissionMode } from '../shared/config';
import type { SessionUsage, TodoItem, UserInput } from '../shared/api';
import type { ModelUsageEntry, NewEvent, ResultMessage, SDKMessage } from '../shared/events';
import { emptyUsage, type AssistantReply, type Message, type Usage } from '../shared/messages';
import type { ToolSpec } from '../shared/tools';
import { normalizePath } from '../shared/tools';
import type { ExitReason } from './decide';
import { resultSubtype } from './decide';

export const STATE_SCHEMA_VERSION = 1;

export interface LoopState {
  schemaVersion: number;
  sessionId: string;
  config: SessionConfig;
  startedAtMs: number;
  messages: Message[];
  turnCount: number;
  model: string;
  permissionMode: PermissionMode;
  maxThinkingTokens: number | null;
  usage: Usage;
  costUsd: number;
  apiDurationMs: number;
  perModel: Record<string, ModelUsageEntry>;
  /** Read-before-edit stamps: normalised path → mtime (ms) when last read or written. */
  fileStamps: Record<string, number>;
  todos: TodoItem[];
  permissionDenials: ResultMessage['permission_denials'];
  interrupted: boolean;
  /** Next event sequence number; continues across runs. */
  nextSeq: number;
  warnedModels: string[];
  /** Set once the worker's tools are known (first run); carried so later runs need no activity. */
  systemPrompt: string;
  tools: ToolSpec[];
  /** Interactive sessions: follow-up messages not yet taken, ids already accepted, and flags. */
  inbox: (UserInput & { turnId: string })[];
  seenMessageIds: { id: string; turnId: string }[];
  userTurns: number;
  awaitingInput: boolean;
  closed: boolean;
  lastResult: ResultMessage | null;
  /** Tool-call signatures of recent turns, for loop detection. */
  loopHistory: string[][];
  /** Prompt tokens the provider reported for the last call, and how many messages it covered. */
  lastPromptTokens: number;
  lastPromptMessageCount: number;
  /** Set when a pending warning (loop detection, done-tool reminder) goes before the next call. */
  pendingNotices: string[];
  compactions: number;
  /** The search attribute values last written (see search-attributes.ts). */
  indexed: { status: string; model: string; turns: number };
}

/** What continue-as-new carries: the state plus the tail of the event log for slow readers. */
export interface CarriedState {
  state: LoopState;
  recentEvents: SDKMessage[];
}

export function initialState(config: SessionConfig, sessionId: string, nowMs: number): LoopState {
  return {
    schemaVersion: STATE_SCHEMA_VERSION,
    sessionId,
    config,
    startedAtMs: nowMs,
    messages: [{ role: 'user', content: config.prompt }],
    turnCount: 0,
    model: config.model,
    permissionMode: config.permissionMode,
    maxThinkingTokens: config.maxThinkingTokens ?? null,
    usage: emptyUsage(),
    costUsd: 0,
    apiDurationMs: 0,
    perModel: {},
    fileStamps: {},
    todos: [],
    permissionDenials: [],
    interrupted: false,
    nextSeq: 0,
    warnedModels: [],
    systemPrompt: '',
    tools: [],
    inbox: [],
    seenMessageIds: [],
    userTurns: 1,
    awaitingInput: false,
    closed: false,
    lastResult: null,
    loopHistory: [],
    lastPromptTokens: 0,
    lastPromptMessageCount: 0,
    pendingNotices: [],
    compactions: 0,
    indexed: { status: '', model: '', turns: -1 },
  };
}

/** An append-only log of SDK messages, kept in memory and served by the `events` query. */
export class EventLog {
  readonly events: SDKMessage[];
  constructor(
    private readonly state: LoopState,
    private readonly newUuid: () => string,
    carried: SDKMessage[] = [],
  ) {
    this.events = [...carried];
  }

  /** The newest events, at most `maxBytes` of JSON: what a new run keeps for slow readers. */
  tail(maxCount: number, maxBytes: number): SDKMessage[] {
    const out: SDKMessage[] = [];
    let bytes = 0;
    for (let i = this.events.length - 1; i >= 0 && out.length < maxCount; i--) {
      bytes += JSON.stringify(this.events[i]).length;
      if (bytes > maxBytes) break;
      out.unshift(this.events[i]!);
    }
    return out;
  }

  emit(e: NewEvent): SDKMessage {
    const msg = { ...e, uuid: this.newUuid(), session_id: this.state.sessionId, seq: this.state.nextSeq++ } as SDKMessage;
    this.events.push(msg);
    return msg;
  }

  /** Events with seq > after (all when after is undefined). */
  page(after: number | undefined, limit: number): SDKMessage[] {
    const from = after === undefined ? 0 : this.events.findIndex((e) => e.seq > after);
    if (from === -1) return [];
    return this.events.slice(from, from + limit);
  }
}

/** Add one reply's tokens and cost to the running totals. */
export function accountReply(state: LoopState, reply: AssistantReply): void {
  const u = reply.usage;
  state.usage.input_tokens += u.input_tokens;
  state.usage.output_tokens += u.output_tokens;
  state.usage.cache_read_input_tokens += u.cache_read_input_tokens;
  state.usage.cache_creation_input_tokens += u.cache_creation_input_tokens;
  state.costUsd += reply.costUsd;
  state.apiDurationMs += reply.durationMs;
  const m = (state.perModel[reply.model] ??= {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: 0,
    contextWindow: reply.contextWindow,
    costBasis: reply.costBasis,
  });
  m.inputTokens += u.input_tokens;
  m.outputTokens += u.output_tokens;
  m.cacheReadInputTokens += u.cache_read_input_tokens;
  m.cacheCreationInputTokens += u.cache_creation_input_tokens;
  m.costUSD += reply.costUsd;
}

export function usageView(state: LoopState): SessionUsage {
  const perModel: SessionUsage['perModel'] = {};
  for (const [model, m] of Object.entries(state.perModel)) {
    perModel[model] = {
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cacheReadInputTokens: m.cacheReadInputTokens,
      cacheCreationInputTokens: m.cacheCreationInputTokens,
      costUsd: m.costUSD,
      costBasis: m.costBasis,
    };
  }
  return {
    inputTokens: state.usage.input_tokens,
    outputTokens: state.usage.output_tokens,
    cacheReadInputTokens: state.usage.cache_read_input_tokens,
    cacheCreationInputTokens: state.usage.cache_creation_input_tokens,
    costUsd: state.costUsd,
    perModel,
  };
}

export function recordFileStamps(state: LoopState, stamps: { path: string; mtimeMs: number }[] | undefined): void {
  for (const s of stamps ?? []) state.fileStamps[normalizePath(s.path)] = s.mtimeMs;
}

export function lastAssistantText(state: LoopState): string {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (m.role !== 'assistant') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content
      .filter((b) => b.type === 'text')
      .map((b) => (b as { text: string }).text)
      .join('');
  }
  return '';
}

export function buildResult(
  state: LoopState,
  opts: { exit: ExitReason; nowMs: number; stopReason: ResultMessage['stop_reason']; errors: string[]; resultText?: string },
): NewEvent & { type: 'result' } {
  const subtype = resultSubtype(opts.exit);
  const isError = subtype !== 'success';
  return {
    type: 'result',
    subtype,
    is_error: isError,
    num_turns: state.turnCount,
    duration_ms: opts.nowMs - state.startedAtMs,
    duration_api_ms: state.apiDurationMs,
    total_cost_usd: state.costUsd,
    usage: { ...state.usage },
    modelUsage: JSON.parse(JSON.stringify(state.perModel)),
    permission_denials: [...state.permissionDenials],
    ...(isError ? { errors: [...opts.errors] } : {}),
    ...(!isError || opts.resultText !== undefined ? { result: opts.resultText ?? lastAssistantText(state) } : {}),
    stop_reason: opts.stopReason,
    exit_reason: opts.exit,
  };
}
