import { checkpointsOn, startConfig } from '../../src/shared/batch';
import {
  ConfigError,
  parseSessionConfig,
  PermissionMode,
  SessionConfigFields,
  SessionStartFlags,
  SessionUserOptions,
  START_FLAGS,
} from '../../src/shared/config';
import { JobError, parseJob } from '../../src/shared/batch';

const base = { prompt: 'p', cwd: '/w' };

function configError(input: unknown): ConfigError {
  try {
    parseSessionConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).name).toBe('ConfigError');
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

test('every default', () => {
  expect(parseSessionConfig(base)).toEqual({
    prompt: 'p',
    model: 'gpt-4.1-mini',
    maxOutputTokens: 16_384,
    allowedTools: [],
    disallowedTools: [],
    askTools: [],
    cwd: '/w',
    additionalDirectories: [],
    permissionMode: 'default',
    env: {},
    includePartialMessages: false,
    interactive: false,
    requireDoneTool: false,
    retry: { maxAttempts: 5, initialIntervalMs: 1_000, maximumIntervalMs: 60_000 },
    heartbeatTimeoutMs: 3_000,
    idleTimeoutMs: 86_400_000,
    hooks: {},
    settingSources: [],
    maxStopHookContinuations: 3,
    finalSummary: false,
    searchAttributes: true,
    workspaceHostTimeoutMs: 120_000,
    loopDetection: { enabled: true, threshold: 3, window: 10 },
    compaction: { enabled: true, threshold: 0.8, keepRecentTurns: 4, keepRecentToolResultTurns: 3, summaryMaxTokens: 8_192 },
    platform: 'linux',
    forkSession: false,
    maxSubagentDepth: 2,
  });
});

test('resumeAtTurn goes with resume and forkSession, never alone', () => {
  expect(parseSessionConfig({ ...base, resume: 's1', forkSession: true, resumeAtTurn: 3 }).resumeAtTurn).toBe(3);
  for (const extra of [{ resume: 's1' }, { forkSession: true }, {}]) {
    expect(() => parseSessionConfig({ ...base, ...extra, resumeAtTurn: 3 })).toThrow(/resumeAtTurn: goes with resume and forkSession/);
  }
  expect(() => parseSessionConfig({ ...base, workspaceHostTimeoutMs: 10 })).toThrow(/workspaceHostTimeoutMs/);
});

test('the permission modes', () => {
  expect(PermissionMode.options).toEqual(['default', 'acceptEdits', 'bypassPermissions', 'plan', 'dontAsk']);
});

test('a system prompt is a string or a preset with an optional append, nothing else', () => {
  expect(parseSessionConfig({ ...base, systemPrompt: 'Be terse.' }).systemPrompt).toBe('Be terse.');
  expect(parseSessionConfig({ ...base, systemPrompt: { type: 'preset', preset: 'claude_code', append: 'X' } }).systemPrompt).toEqual({
    type: 'preset',
    preset: 'claude_code',
    append: 'X',
  });
  expect(configError({ ...base, systemPrompt: { type: 'custom' } }).field).toBe('systemPrompt');
  expect(configError({ ...base, systemPrompt: { type: 'preset', extra: 1 } }).field).toBe('systemPrompt.extra');
});

describe('bounds: the lowest accepted value, and the value just past it', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['prompt', { prompt: 'x' }, { prompt: '' }],
    ['model', { model: 'm' }, { model: '' }],
    ['fallbackModel', { fallbackModel: 'm' }, { fallbackModel: '' }],
    ['maxTurns', { maxTurns: 1 }, { maxTurns: 0 }],
    ['maxTurns', { maxTurns: 1 }, { maxTurns: 1.5 }],
    ['maxBudgetUsd', { maxBudgetUsd: 0.01 }, { maxBudgetUsd: 0 }],
    ['maxThinkingTokens', { maxThinkingTokens: 0 }, { maxThinkingTokens: -1 }],
    ['maxOutputTokens', { maxOutputTokens: 1 }, { maxOutputTokens: 0 }],
    ['retry.maxAttempts', { retry: { maxAttempts: 1 } }, { retry: { maxAttempts: 0 } }],
    ['retry.maxAttempts', { retry: { maxAttempts: 100 } }, { retry: { maxAttempts: 101 } }],
    ['retry.initialIntervalMs', { retry: { initialIntervalMs: 1 } }, { retry: { initialIntervalMs: 0 } }],
    ['retry.maximumIntervalMs', { retry: { maximumIntervalMs: 1 } }, { retry: { maximumIntervalMs: 0 } }],
    ['heartbeatTimeoutMs', { heartbeatTimeoutMs: 1_000 }, { heartbeatTimeoutMs: 999 }],
    ['idleTimeoutMs', { idleTimeoutMs: 1 }, { idleTimeoutMs: 0 }],
    ['continueAsNewEveryTurns', { continueAsNewEveryTurns: 1 }, { continueAsNewEveryTurns: 0 }],
    ['loopDetection.threshold', { loopDetection: { threshold: 2 } }, { loopDetection: { threshold: 1 } }],
    ['loopDetection.window', { loopDetection: { window: 2 } }, { loopDetection: { window: 1 } }],
    ['sessionId', { sessionId: 's' }, { sessionId: '' }],
    ['resume', { resume: 's' }, { resume: '' }],
    ['toolsTaskQueue', { toolsTaskQueue: 'q' }, { toolsTaskQueue: '' }],
    ['permissionMode', { permissionMode: 'dontAsk' }, { permissionMode: 'auto' }],
    ['env.A', { env: { A: '1' } }, { env: { A: 1 } }],
  ])('%s', (field, ok, bad) => {
    expect(() => parseSessionConfig({ ...base, ...ok })).not.toThrow();
    expect(configError({ ...base, ...bad }).field).toBe(field);
  });

  test('upper bounds are not lower bounds: large values pass', () => {
    expect(
      parseSessionConfig({ ...base, maxTurns: 10_000, heartbeatTimeoutMs: 600_000, loopDetection: { threshold: 50, window: 500 } }),
    ).toMatchObject({
      maxTurns: 10_000,
      heartbeatTimeoutMs: 600_000,
      loopDetection: { enabled: true, threshold: 50, window: 500 },
    });
  });
});

describe('error messages', () => {
  test('a relative path is named as such, in cwd and in additionalDirectories', () => {
    expect(configError({ ...base, cwd: 'w/' }).message).toBe('invalid session config: cwd: must be an absolute path');
    const e = configError({ ...base, additionalDirectories: ['/a', 'b/'] });
    expect(e.message).toBe('invalid session config: additionalDirectories.1: must be an absolute path');
    expect(e.field).toBe('additionalDirectories.1');
  });

  test('unknown options: all named, the first as the field; nested ones with their path', () => {
    const e = configError({ ...base, maxTurn: 3, permisionMode: 'plan' });
    expect(e.message).toBe("invalid session config: maxTurn: unknown options 'maxTurn', 'permisionMode'");
    expect(e.field).toBe('maxTurn');
    const nested = configError({ ...base, retry: { maxAttempt: 2 } });
    expect(nested.message).toBe("invalid session config: retry.maxAttempt: unknown option 'maxAttempt'");
    expect(nested.field).toBe('retry.maxAttempt');
  });

  test('a problem with the whole input is reported at (root)', () => {
    expect(configError(null).message).toBe('invalid session config: (root): Invalid input: expected object, received null');
  });

  test('a missing prompt is named', () => {
    expect(configError({ cwd: '/w' }).message).toBe('invalid session config: prompt: Invalid input: expected string, received undefined');
  });
});

describe('compaction options', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['threshold', { threshold: 0.95 }, { threshold: 0.96 }],
    ['threshold', { threshold: 0.01 }, { threshold: 0 }],
    ['keepRecentTurns', { keepRecentTurns: 0 }, { keepRecentTurns: -1 }],
    ['keepRecentTokens', { keepRecentTokens: 1 }, { keepRecentTokens: 0 }],
    ['contextWindow', { contextWindow: 1 }, { contextWindow: 0 }],
    ['toolResultBudgetChars', { toolResultBudgetChars: 0 }, { toolResultBudgetChars: -1 }],
    ['keepRecentToolResultTurns', { keepRecentToolResultTurns: 0 }, { keepRecentToolResultTurns: -1 }],
    ['summaryModel', { summaryModel: 'm' }, { summaryModel: '' }],
    ['summaryMaxTokens', { summaryMaxTokens: 1 }, { summaryMaxTokens: 0 }],
  ])('%s: the lowest or highest accepted value, and the value just past it', (field, ok, bad) => {
    expect(() => parseSessionConfig({ ...base, compaction: ok })).not.toThrow();
    expect(configError({ ...base, compaction: bad }).field).toBe(`compaction.${field}`);
  });

  test('counts and names are not capped', () => {
    expect(
      parseSessionConfig({ ...base, compaction: { keepRecentTurns: 40, keepRecentToolResultTurns: 12, summaryModel: 'claude-sonnet-4-5' } })
        .compaction,
    ).toMatchObject({ keepRecentTurns: 40, keepRecentToolResultTurns: 12, summaryModel: 'claude-sonnet-4-5' });
  });
});

test('checkpoints: on for a workspace, off for a plain folder, unless asked; startConfig says which outright', () => {
  const plain = parseSessionConfig(base);
  const ws = parseSessionConfig({ prompt: 'p', workspace: { copy: '/t' } });
  expect([checkpointsOn(plain), checkpointsOn(ws)]).toEqual([false, true]);
  expect(checkpointsOn({ ...plain, checkpoints: true })).toBe(true);
  expect(checkpointsOn({ ...ws, checkpoints: false })).toBe(false);
  expect([startConfig(plain).checkpoints, startConfig(ws).checkpoints]).toEqual([false, true]);
});

test("the user's options and the start flags split the start input's fields, which stays one flat object", () => {
  const user = Object.keys(SessionUserOptions.shape);
  const flags = Object.keys(SessionStartFlags.shape);
  expect([...START_FLAGS].sort()).toEqual(
    ['batchId', 'envDropped', 'searchAttributesAtStart', 'setupAtOnce', 'setupInOneCall', 'startedAt', 'subagent'].sort(),
  );
  expect(user.filter((k) => flags.includes(k))).toEqual([]);
  expect(Object.keys(SessionConfigFields.shape).sort()).toEqual([...user, ...flags].sort());
  // A start input with both kinds parses as one object: the wire shape of recorded histories.
  const c = parseSessionConfig({ prompt: 'p', cwd: '/w', batchId: 'b', setupInOneCall: true, startedAt: '2026-01-01T00:00:00Z' });
  expect({ batchId: c.batchId, setupInOneCall: c.setupInOneCall, model: c.model }).toEqual({
    batchId: 'b',
    setupInOneCall: true,
    model: 'gpt-4.1-mini',
  });
});

test.each(START_FLAGS.map((f) => [f]))('a batch job line may not set the start flag %s: refused by name', (flag) => {
  expect(() => parseJob({ prompt: 'hi', cwd: '/w', [flag]: true }, { index: 1, batchId: 'b', platform: 'linux' })).toThrow(JobError);
  expect(() => parseJob({ prompt: 'hi', cwd: '/w', [flag]: true }, { index: 1, batchId: 'b', platform: 'linux' })).toThrow(
    `${flag}: not allowed in a batch job`,
  );
});
