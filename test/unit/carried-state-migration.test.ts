/**
 * The carried state's migration to version 3 (fields grouped by concern): a flat state written by
 * an older worker comes out grouped with every value where the new shape keeps it, and a
 * version-3 state passes through untouched. The base is the state a real run carried across
 * continue-as-new (test/replay/histories/continue-as-new.run2.json, written as version 1).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CarriedState, LoopState } from '../../src/workflows/session/state';
import { migrateCarriedState, STATE_SCHEMA_VERSION } from '../../src/workflows/session/state';

type Flat = Record<string, unknown>;

/** The carried state recorded as the second run's input. */
function recordedCarried(): { state: Flat; recentEvents: unknown[] } {
  const file = path.join(__dirname, '../replay/histories/continue-as-new.run2.json');
  const history = JSON.parse(readFileSync(file, 'utf8')) as {
    events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[];
  };
  const payloads = history.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads;
  return JSON.parse(Buffer.from(payloads[1]!.data, 'base64').toString('utf8'));
}

/** A version-2 state with every field set: the recorded one, plus what version 2 and later features add. */
function version2(): Flat {
  const recorded = recordedCarried().state;
  return {
    ...recorded,
    schemaVersion: 2,
    turnCount: 3,
    interrupted: true,
    closed: true,
    lastResult: { type: 'result', subtype: 'success', result: 'done', num_turns: 2 },
    fileStamps: { '/w/a.txt': 1700000000123 },
    todos: [{ content: 'check', status: 'in_progress', activeForm: 'Checking' }],
    permissionDenials: [{ tool_name: 'Write', tool_use_id: 'call_9', tool_input: { file_path: '/etc/x' } }],
    abandonedAttempts: ['run-1/7/1', 'run-1/7/2'],
    warnedModels: ['mystery-model'],
    inbox: [{ text: 'and then?', id: 'm-2', turnId: 'turn-3' }],
    seenMessageIds: [
      { id: 'm-1', turnId: 'turn-2' },
      { id: 'm-2', turnId: 'turn-3' },
    ],
    userTurns: 3,
    roundsCompleted: 2,
    awaitingInput: true,
    loopHistory: [['sig-a'], ['sig-a', 'sig-b']],
    lastPromptTokens: 1234,
    lastPromptMessageCount: 4,
    pendingNotices: ['a reminder'],
    compactions: 1,
    compactedAtTurn: 2,
    turn: {
      errors: ['a failed model'],
      stopReason: 'end_turn',
      doneMessage: null,
      stopHookContinuations: 1,
      hookStop: null,
      structuredOutput: { value: { ok: true } },
      outputRetries: 1,
    },
    approvals: {
      pending: [{ requestId: 'perm-0', toolName: 'Bash', toolUseId: 'call_3', input: { command: 'ls' }, suggestions: ['Bash(ls:*)'] }],
      answers: { 'perm-0': { requestId: 'perm-0', behavior: 'allow' } },
      nextId: 1,
      sessionAllowRules: ['Read'],
    },
    hookRequests: { pending: [{ requestId: 'hook-0', event: 'PreToolUse' }], answers: {}, nextId: 1 },
    toolRequests: { pending: [], answers: { 'tool-0': { requestId: 'tool-0', content: 'ok' } }, nextId: 1 },
    settings: { sources: [], hashes: { '/w/.claude/settings.json': 'absent' }, bypassDisabled: false },
    subagents: [{ id: 'sub-1', description: 'look around', status: 'completed', costUsd: 0.01 }],
    mcpServers: [{ name: 'files', status: 'connected' }],
    workspace: { path: '/ws/s-1', base: 'abc123', kind: 'git', host: 'host-a', hostQueue: 'tools-host-a' },
    verification: { verdict: 'pass', report: { command: 'npm test', exitCode: 0 } },
    checkpoints: { run: 'run-1', list: [{ turn: 1, commit: 'def456' }], failing: 'push refused' },
    turnMarks: [{ messages: 3, uuids: ['u-1', 'u-2'] }],
    hostPin: { host: 'host-b', hostQueue: 'tools-host-b' },
  };
}

const GROUPS = {
  spend: ['usage', 'costUsd', 'apiDurationMs', 'perModel', 'abandonedAttempts', 'warnedModels'],
  context: ['lastPromptTokens', 'lastPromptMessageCount', 'compactions', 'compactedAtTurn', 'loopHistory', 'pendingNotices'],
  input: ['inbox', 'seenMessageIds', 'userTurns', 'roundsCompleted', 'awaitingInput'],
  client: ['hookRequests', 'toolRequests'],
  files: ['workspace', 'verification', 'checkpoints', 'hostPin'],
} as const satisfies { [G in keyof LoopState]?: readonly (keyof LoopState[G])[] };

/** Where version 3 keeps a version-2 field: its group, or the top. */
function groupOf(field: string): string | undefined {
  return Object.entries(GROUPS).find(([, fields]) => (fields as readonly string[]).includes(field))?.[0];
}

test('a version-2 state with every field set comes out grouped, every value where version 3 keeps it', () => {
  const v2 = version2();
  const before = structuredClone(v2);
  const recentEvents = [{ type: 'system', subtype: 'init', seq: 8 }];
  const migrated = migrateCarriedState({ state: v2, recentEvents } as unknown as CarriedState);
  const v3 = migrated.state as unknown as Record<string, Flat>;

  expect(migrated.recentEvents).toEqual(recentEvents);
  expect(v3.schemaVersion).toBe(3);
  // The grouped fields, written out: nothing left at the top, nothing lost.
  expect(v3.spend).toStrictEqual({
    usage: before.usage,
    costUsd: before.costUsd,
    apiDurationMs: before.apiDurationMs,
    perModel: before.perModel,
    abandonedAttempts: ['run-1/7/1', 'run-1/7/2'],
    warnedModels: ['mystery-model'],
  });
  expect(v3.context).toStrictEqual({
    lastPromptTokens: 1234,
    lastPromptMessageCount: 4,
    compactions: 1,
    compactedAtTurn: 2,
    loopHistory: [['sig-a'], ['sig-a', 'sig-b']],
    pendingNotices: ['a reminder'],
  });
  expect(v3.input).toStrictEqual({
    inbox: before.inbox,
    seenMessageIds: before.seenMessageIds,
    userTurns: 3,
    roundsCompleted: 2,
    awaitingInput: true,
  });
  expect(v3.client).toStrictEqual({ hookRequests: before.hookRequests, toolRequests: before.toolRequests });
  expect(v3.files).toStrictEqual({
    workspace: before.workspace,
    verification: before.verification,
    checkpoints: before.checkpoints,
    hostPin: before.hostPin,
  });

  // Every version-2 field, one by one, at its new place with its value; and no other field.
  const places: string[] = [];
  for (const [field, value] of Object.entries(before)) {
    if (field === 'schemaVersion') continue;
    const group = groupOf(field);
    expect({ field, value: group ? v3[group]![field] : v3[field] }).toStrictEqual({ field, value });
    places.push(group ? `${group}.${field}` : field);
  }
  const after = Object.entries(v3).flatMap(([k, v]) => (k in GROUPS ? Object.keys(v).map((f) => `${k}.${f}`) : [k]));
  expect(after.filter((p) => p !== 'schemaVersion').sort()).toEqual(places.sort());
  // JSON-safe as before: no `undefined` put anywhere.
  expect(JSON.parse(JSON.stringify(v3))).toStrictEqual(v3);
});

test('optional fields absent in version 2 stay absent in version 3', () => {
  const v2 = version2();
  for (const f of [
    'abandonedAttempts',
    'compactedAtTurn',
    'hookRequests',
    'toolRequests',
    'workspace',
    'verification',
    'checkpoints',
    'hostPin',
  ])
    delete v2[f];
  const v3 = migrateCarriedState({ state: v2, recentEvents: [] } as unknown as CarriedState).state;
  expect(v3.client).toStrictEqual({});
  expect(v3.files).toStrictEqual({});
  expect('abandonedAttempts' in v3.spend).toBe(false);
  expect('compactedAtTurn' in v3.context).toBe(false);
});

test('the recorded version-1 state goes through version 2 to 3', () => {
  const recorded = recordedCarried();
  const before = structuredClone(recorded.state);
  const { state } = migrateCarriedState(recorded as unknown as CarriedState);
  expect(state.schemaVersion).toBe(STATE_SCHEMA_VERSION);
  expect(state).toMatchObject({
    messages: before.messages,
    turnCount: 2,
    nextSeq: 9,
    turn: { errors: [], stopReason: null, doneMessage: null, stopHookContinuations: 0, hookStop: null },
    approvals: { pending: [], answers: {}, nextId: 0, sessionAllowRules: [] },
    settings: null,
    spend: { usage: before.usage, costUsd: before.costUsd, apiDurationMs: 8, perModel: before.perModel, warnedModels: [] },
    context: {
      lastPromptTokens: before.lastPromptTokens,
      lastPromptMessageCount: before.lastPromptMessageCount,
      compactions: 0,
      loopHistory: before.loopHistory,
    },
    // A one-shot session not waiting for input: its first user turn is the round in progress.
    input: { inbox: [], seenMessageIds: [], userTurns: 1, roundsCompleted: 0, awaitingInput: false },
    client: {},
    files: {},
  });
  expect(state).not.toHaveProperty('usage');
  expect(state).not.toHaveProperty('inbox');
});

test('a version-3 state passes through unchanged', () => {
  const v3 = migrateCarriedState({ state: version2(), recentEvents: [] } as unknown as CarriedState);
  const copy = structuredClone(v3);
  const again = migrateCarriedState(v3);
  expect(again).toBe(v3);
  expect(again).toStrictEqual(copy);
});
