/**
 * The session's durable state: one JSON-safe object (no Map/Set/classes) with a schema
 * version, so it can be carried through continue-as-new and read back by a newer worker.
 *
 * Past 300 lines because the shape, its migration from older versions, the event log and the
 * result built from it must change together.
 */
import type { Verdict, VerifyReport, WorkspaceReport } from '../../shared/workspace';
import type { CheckpointRecord, TurnMark } from '../../shared/checkpoint';
import type { McpServerState } from '../../shared/mcp';
import type { SessionConfig, PermissionMode } from '../../shared/config';
import type { SessionUsage, SubagentRecord, TodoItem, UserInput } from '../../shared/api';
import { toUuid, type ModelUsageEntry, type NewEvent, type ResultMessage, type SessionEvent } from '../../shared/events';
import { addUsage, emptyUsage, tokenCounts, type AssistantReply, type Message, type Usage } from '../../shared/messages';
import type { ToolSpec } from '../../shared/tools';
import type { PendingPermission, PermissionAnswer } from '../../shared/approvals';
import type { HookAnswer, PendingHookRequest } from '../../shared/client-hooks';
import type { PendingToolRequest, ToolAnswer } from '../../shared/client-tools';
import type { SessionSettings } from '../../shared/hooks';
import { normalizePath } from '../../shared/tools';
import { sdkModelUsage, sdkToolInput, sdkUsage } from '../../shared/sdk-shapes';
import type { ExitReason } from './turn';
import { resultSubtype } from './turn';
import { SCHEMA_VERSIONS } from '../../shared/compat';

/**
 * Version of the carried state's shape. A newer worker migrates older versions on start
 * (`migrateCarriedState`); a version it does not know fails the workflow task loudly, so an
 * older worker in a rolling deploy leaves the session to a newer one instead of misreading it.
 *
 * 1: first shape. 2: `turn` (error notes, stop reason, done message) moved into the state;
 * `approvals` (pending permission requests, their answers, rules added by `always`); `settings`.
 * 3: the flat fields grouped by concern (`spend`, `context`, `input`, `client`, `files`).
 */
export const STATE_SCHEMA_VERSION = SCHEMA_VERSIONS.carriedSessionState.current;

/**
 * What the current user turn has gathered for its result. Lives in the carried state because a
 * run may continue-as-new between two model calls of one turn.
 */
export interface TurnRecord {
  /** Notes for the result's `errors` (a failed model before its fallback, a failed summary…). */
  errors: string[];
  stopReason: ResultMessage['stop_reason'];
  /** The TaskComplete message or final summary, when there is one: the result's text. */
  doneMessage: string | null;
  /** Consecutive times a Stop hook kept this turn going. */
  stopHookContinuations: number;
  /** A hook answered `continue: false`: the turn ends after the current step, with this reason. */
  hookStop: string | null;
  /** With `outputFormat`: the last final reply that matched the schema, as the result's `structured_output`. */
  structuredOutput?: { value: unknown };
  /** With `outputFormat`: final replies this turn that did not match, each answered with a retry. */
  outputRetries?: number;
}

export function newTurnRecord(): TurnRecord {
  return { errors: [], stopReason: null, doneMessage: null, stopHookContinuations: 0, hookStop: null };
}

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
  /** Next event sequence number; continues across runs. */
  nextSeq: number;
  /** Set once the worker's tools are known (first run); carried so later runs need no activity. */
  systemPrompt: string;
  tools: ToolSpec[];
  interrupted: boolean;
  closed: boolean;
  lastResult: ResultMessage | null;
  /** The search attribute values last written (see search-attributes.ts). */
  indexed: { status: string; model: string; turns: number };
  turn: TurnRecord;
  /**
   * One mark per turn, counted across resumes (`turnMarks.length` is the session's turn number):
   * where the turn ends in `messages` and its events' uuids. Absent in sessions started before them.
   */
  turnMarks?: TurnMark[];
  /** Read-before-edit stamps: normalised path → mtime (ms) when last read or written. */
  fileStamps: Record<string, number>;
  todos: TodoItem[];
  permissionDenials: { tool_name: string; tool_use_id: string; tool_input: unknown }[];
  /** null: a session started before settings were loaded (or its recorded history). */
  settings: SessionSettings | null;
  /** Subagents started by `Task` (ARCHITECTURE.md#subagents); absent in states carried by older workers. */
  subagents?: SubagentRecord[];
  /** The MCP servers' status from the last listing (ARCHITECTURE.md#mcp); absent without servers. */
  mcpServers?: McpServerState[];
  /** What the session has spent: tokens, cost, API time, per model. */
  spend: SpendState;
  /** What the context holds and what goes before the next model call (context/). */
  context: ContextState;
  /** The user's messages: the inbox of an interactive session and its turn counts (user-input.ts). */
  input: InputState;
  /** Durable human approval (ARCHITECTURE.md#durable-approval). */
  approvals: Approvals;
  /** Requests waiting for the client's answer: callback hooks and client tools. */
  client: ClientRequests;
  /** The session's folder, where its tools run, its checkpoints and its verdict. */
  files: FilesState;
}

interface SpendState {
  usage: Usage;
  costUsd: number;
  apiDurationMs: number;
  perModel: Record<string, ModelUsageEntry>;
  /** Abandoned model call attempts already counted (`runId/activityId/attempt`, the latest 100; abandoned-calls.ts). */
  abandonedAttempts?: string[];
  /** Models whose unknown price was warned about: once per session each. */
  warnedModels: string[];
}

interface ContextState {
  /** Prompt tokens the provider reported for the last call, and how many messages it covered. */
  lastPromptTokens: number;
  lastPromptMessageCount: number;
  compactions: number;
  /** Marks before this turn point into messages compaction replaced: a fork starts at or after it. */
  compactedAtTurn?: number;
  /** Tool-call signatures of recent turns, for loop detection. */
  loopHistory: string[][];
  /** Set when a pending warning (loop detection, done-tool reminder) goes before the next call. */
  pendingNotices: string[];
}

interface InputState {
  /** Interactive sessions: follow-up messages not yet taken, ids already accepted, and flags. */
  inbox: (UserInput & { turnId: string })[];
  seenMessageIds: { id: string; turnId: string }[];
  userTurns: number;
  /** User turns answered with a result (rounds), for `maxRounds`. */
  roundsCompleted: number;
  awaitingInput: boolean;
}

interface ClientRequests {
  /**
   * Callback hooks waiting for the client's answer (ARCHITECTURE.md#callback-hooks): absent until a
   * session with `clientHooks` first asks.
   */
  hookRequests?: HookRequests;
  /**
   * Calls of client tools waiting for the client's answer (ARCHITECTURE.md#client-mcp-tools):
   * absent until a session with `clientTools` first asks.
   */
  toolRequests?: ToolRequests;
}

interface FilesState {
  /**
   * A session with a `workspace`, once its folder is made: where, and the tools host its tools
   * are pinned to from then on; then what the agent changed (ARCHITECTURE.md#workspaces).
   */
  workspace?: WorkspaceState;
  /** The `verify` command's outcome, once it has run. */
  verification?: { verdict: Verdict; report: VerifyReport };
  /**
   * Per-turn workspace checkpoints (ARCHITECTURE.md#checkpoints): absent in sessions started
   * before them (or their recorded histories) and with `checkpoints: false`.
   */
  checkpoints?: CheckpointsState;
  /** A plain-folder session restored on another tools host after its own was lost: pinned there. */
  hostPin?: { host: string; hostQueue: string };
}

interface CheckpointsState {
  /** The session's first run id: names this run's refs (a resume under the same id is another). */
  run: string;
  list: CheckpointRecord[];
  /** Why the last checkpoint could not be made or pushed; cleared by the next that is. */
  failing?: string;
}

/** The session's turn number across resumes, when it keeps turn marks. */
export function sessionTurn(state: LoopState): number {
  return state.turnMarks?.length ?? state.turnCount;
}

export interface WorkspaceState {
  path: string;
  base: string;
  kind: 'git' | 'copy';
  host: string;
  /** Set when the folder was restored on this host from a checkpoint after its first host was lost. */
  restoredFrom?: { turn: number; commit: string; lostHost: string };
  /** The task queue only that host polls. */
  hostQueue: string;
  /** Set when the agent has ended and the diff was taken. */
  report?: WorkspaceReport;
}

/** Durable human approval (ARCHITECTURE.md#durable-approval). */
interface Approvals {
  pending: PendingPermission[];
  /** Answers received and not yet taken by the waiting call, by request id. */
  answers: Record<string, PermissionAnswer>;
  nextId: number;
  /** Allow rules added by answers given with `always`. */
  sessionAllowRules: string[];
}

/** Hook requests to the client: pending, and answers received but not yet taken by the waiting hook. */
interface HookRequests {
  pending: PendingHookRequest[];
  answers: Record<string, HookAnswer>;
  nextId: number;
}

/** Tool calls sent to the client: pending, and answers received but not yet taken by the waiting call. */
interface ToolRequests {
  pending: PendingToolRequest[];
  answers: Record<string, ToolAnswer>;
  nextId: number;
}

function noApprovals(): Approvals {
  return { pending: [], answers: {}, nextId: 0, sessionAllowRules: [] };
}

/**
 * What the server holds for a session when its first run begins: the start's search attributes
 * when its starter set them (`searchAttributesAtStart`), else nothing. A config field rather than
 * `patched()`: each patch in a new session upserts `TemporalChangeVersion`, the very write this saves.
 */
function indexedAtStart(config: SessionConfig): LoopState['indexed'] {
  return config.searchAttributes && config.searchAttributesAtStart
    ? { status: 'running', model: config.model, turns: 0 }
    : { status: '', model: '', turns: -1 };
}

/** What continue-as-new carries: the state plus the tail of the event log for slow readers. */
export interface CarriedState {
  state: LoopState;
  recentEvents: SessionEvent[];
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
    nextSeq: 0,
    systemPrompt: '',
    tools: [],
    interrupted: false,
    closed: false,
    lastResult: null,
    indexed: indexedAtStart(config),
    turn: newTurnRecord(),
    turnMarks: [],
    fileStamps: {},
    todos: [],
    permissionDenials: [],
    settings: null,
    subagents: [],
    spend: { usage: emptyUsage(), costUsd: 0, apiDurationMs: 0, perModel: {}, warnedModels: [] },
    context: { lastPromptTokens: 0, lastPromptMessageCount: 0, compactions: 0, loopHistory: [], pendingNotices: [] },
    input: { inbox: [], seenMessageIds: [], userTurns: 1, roundsCompleted: 0, awaitingInput: false },
    approvals: noApprovals(),
    client: {},
    files: {},
  };
}

/** The flat shape of versions 1 and 2: every field at the top. */
type FlatState = Omit<LoopState, 'spend' | 'context' | 'input' | 'client' | 'files'> &
  SpendState &
  ContextState &
  InputState &
  ClientRequests &
  FilesState;

/** Version 1 → 2: the turn record, approvals and settings, which version 1 did not carry. */
function fromVersion1(state: FlatState): FlatState {
  return {
    ...state,
    schemaVersion: 2,
    turn: newTurnRecord(),
    approvals: noApprovals(),
    settings: null,
    roundsCompleted: state.userTurns - (state.awaitingInput ? 0 : 1),
  };
}

/** Version 2 → 3: the flat fields grouped by concern; every value kept as it was. */
function fromVersion2(state: FlatState): LoopState {
  const {
    usage,
    costUsd,
    apiDurationMs,
    perModel,
    abandonedAttempts,
    warnedModels,
    lastPromptTokens,
    lastPromptMessageCount,
    compactions,
    compactedAtTurn,
    loopHistory,
    pendingNotices,
    inbox,
    seenMessageIds,
    userTurns,
    roundsCompleted,
    awaitingInput,
    hookRequests,
    toolRequests,
    workspace,
    verification,
    checkpoints,
    hostPin,
    ...core
  } = state;
  return {
    ...core,
    schemaVersion: 3,
    spend: { usage, costUsd, apiDurationMs, perModel, ...defined({ abandonedAttempts }), warnedModels },
    context: { lastPromptTokens, lastPromptMessageCount, compactions, ...defined({ compactedAtTurn }), loopHistory, pendingNotices },
    input: { inbox, seenMessageIds, userTurns, roundsCompleted, awaitingInput },
    client: defined({ hookRequests, toolRequests }),
    files: defined({ workspace, verification, checkpoints, hostPin }),
  };
}

/** The fields that are set: an absent optional field stays absent rather than becoming `undefined`. */
function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Bring a carried state written by an older worker to the current shape, one version at a time.
 * Throws (failing the workflow task, which Temporal retries) on a version this code does not know.
 */
export function migrateCarriedState(carried: CarriedState): CarriedState {
  const version = (carried.state as { schemaVersion: unknown }).schemaVersion;
  if (version === STATE_SCHEMA_VERSION) return carried;
  if (version === 1 || version === 2) {
    const flat = carried.state as unknown as FlatState;
    return { ...carried, state: fromVersion2(version === 1 ? fromVersion1(flat) : flat) };
  }
  throw new Error(
    `Carried session state has schemaVersion ${JSON.stringify(version)}, which this worker does not know (it reads 1..${STATE_SCHEMA_VERSION}). ` +
      'A newer worker wrote it: deploy that version on this task queue; the session waits until one picks it up.',
  );
}

/** An append-only log of SDK messages, kept in memory and served by the `events` query. */
export class EventLog {
  readonly events: SessionEvent[];
  /** Called with every event emitted (a subagent forwards its events to its parent). */
  onEmit: ((e: SessionEvent) => void) | undefined;
  constructor(
    private readonly state: LoopState,
    private readonly newUuid: () => string,
    carried: SessionEvent[] = [],
  ) {
    this.events = [...carried];
  }

  /** The newest events, at most `maxBytes` of JSON: what a new run keeps for slow readers. */
  tail(maxCount: number, maxBytes: number): SessionEvent[] {
    const out: SessionEvent[] = [];
    let bytes = 0;
    for (let i = this.events.length - 1; i >= 0 && out.length < maxCount; i--) {
      bytes += JSON.stringify(this.events[i]).length;
      if (bytes > maxBytes) break;
      out.unshift(this.events[i]!);
    }
    return out;
  }

  emit(e: NewEvent): SessionEvent {
    const msg = { ...e, uuid: toUuid(this.newUuid()), session_id: this.state.sessionId, seq: this.state.nextSeq++ } as SessionEvent;
    this.events.push(msg);
    this.onEmit?.(msg);
    return msg;
  }

  /** Events with seq > after (all when after is undefined). */
  page(after: number | undefined, limit: number): SessionEvent[] {
    const from = after === undefined ? 0 : this.events.findIndex((e) => e.seq > after);
    if (from === -1) return [];
    return this.events.slice(from, from + limit);
  }
}

/** Add one reply's tokens and cost to the running totals. */
export function accountReply(state: LoopState, reply: AssistantReply): void {
  addUsage(state.spend.usage, reply.usage);
  state.spend.costUsd += reply.costUsd;
  state.spend.apiDurationMs += reply.durationMs;
  // `costUSD`: the SDK's spelling, because `perModel` is copied into the result's `modelUsage`.
  const m = (state.spend.perModel[reply.model] ??= {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: 0,
    contextWindow: reply.contextWindow,
    costBasis: reply.costBasis,
  });
  addUsage(m, tokenCounts(reply.usage));
  m.costUSD += reply.costUsd;
}

export function usageView(state: LoopState): SessionUsage {
  const perModel: SessionUsage['perModel'] = {};
  for (const [model, m] of Object.entries(state.spend.perModel)) {
    perModel[model] = {
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cacheReadInputTokens: m.cacheReadInputTokens,
      cacheCreationInputTokens: m.cacheCreationInputTokens,
      costUsd: m.costUSD,
      costBasis: m.costBasis,
      ...(m.abandonedCalls ? { abandonedCalls: { ...m.abandonedCalls } } : {}),
    };
  }
  return {
    inputTokens: state.spend.usage.input_tokens,
    outputTokens: state.spend.usage.output_tokens,
    cacheReadInputTokens: state.spend.usage.cache_read_input_tokens,
    cacheCreationInputTokens: state.spend.usage.cache_creation_input_tokens,
    costUsd: state.spend.costUsd,
    perModel,
  };
}

export function recordFileStamps(state: LoopState, stamps: { path: string; mtimeMs: number }[] | undefined): void {
  for (const s of stamps ?? []) state.fileStamps[normalizePath(s.path)] = s.mtimeMs;
}

function lastAssistantText(state: LoopState): string {
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

/** The result's `workspace`, `verdict` and `verify` (ARCHITECTURE.md#workspaces). */
export function workspaceFields(state: LoopState): Pick<ResultMessage, 'workspace' | 'verdict' | 'verify'> {
  return {
    ...(state.files.workspace?.report ? { workspace: state.files.workspace.report } : {}),
    // `verdict` is null when the command did not run (the session could not start).
    ...(state.config.verify !== undefined ? { verdict: state.files.verification?.verdict ?? null } : {}),
    ...(state.files.verification ? { verify: state.files.verification.report } : {}),
  };
}

export function buildResult(state: LoopState, opts: { exit: ExitReason; nowMs: number }): NewEvent & { type: 'result' } {
  const { errors, stopReason, doneMessage } = state.turn;
  const resultText = doneMessage ?? undefined;
  const subtype = resultSubtype(opts.exit);
  const base = {
    type: 'result' as const,
    is_error: subtype !== 'success',
    num_turns: state.turnCount,
    duration_ms: opts.nowMs - state.startedAtMs,
    duration_api_ms: state.spend.apiDurationMs,
    total_cost_usd: state.spend.costUsd,
    usage: sdkUsage(state.spend.usage),
    modelUsage: sdkModelUsage(state.spend.perModel, state.config.maxOutputTokens),
    permission_denials: state.permissionDenials.map((d) => ({ ...d, tool_input: sdkToolInput(d.tool_input) })),
    stop_reason: stopReason,
    exit_reason: opts.exit,
  };
  const workspace = workspaceFields(state);
  // The SDK's success and error results are separate types: `result` on success, `errors` otherwise.
  if (subtype === 'success') {
    const structured = state.turn.structuredOutput ? { structured_output: state.turn.structuredOutput.value } : {};
    return { ...base, ...workspace, subtype, result: resultText ?? lastAssistantText(state), ...structured };
  }
  return { ...base, ...workspace, subtype, errors: [...errors], ...(resultText !== undefined ? { result: resultText } : {}) };
}
