/**
 * The pure parts of hooks and durable approval: folding a hook event's runs into one verdict,
 * matching an event's matchers, and checking a permission answer before it is applied.
 */
import { answerProblem, type PendingPermission } from '../../src/shared/approvals';
import { anyMatcherMatches, foldHookRuns, type HookRun } from '../../src/shared/hooks';

const run = (over: Partial<HookRun>): HookRun => ({ hook: 'PreToolUse[Bash] #1', outcome: 'success', exitCode: 0, durationMs: 1, ...over });

describe('foldHookRuns', () => {
  test('no runs, or runs without output: an empty verdict', () => {
    expect(foldHookRuns([])).toEqual({ additionalContext: [], systemMessages: [] });
    expect(foldHookRuns([run({}), run({ outcome: 'error', error: 'exited 1' })])).toEqual({ additionalContext: [], systemMessages: [] });
  });

  test('a blocked run blocks with its reason, or names the hook; the first block wins', () => {
    expect(foldHookRuns([run({ outcome: 'blocked', exitCode: 2, blockReason: 'no rm' })]).block).toBe('no rm');
    expect(foldHookRuns([run({ outcome: 'blocked', exitCode: 2 })]).block).toBe('Blocked by hook PreToolUse[Bash] #1.');
    // An error that must stop the tool carries a block reason without the blocked outcome.
    expect(foldHookRuns([run({ outcome: 'error', blockReason: 'could not run' })]).block).toBe('could not run');
    expect(
      foldHookRuns([
        run({ outcome: 'blocked', blockReason: 'first' }),
        run({ hook: 'h2', output: { decision: 'block', reason: 'second' } }),
      ]).block,
    ).toBe('first');
  });

  test("decision 'block' blocks with its reason or the hook's name; 'approve' does not", () => {
    expect(foldHookRuns([run({ output: { decision: 'block', reason: 'why' } })]).block).toBe('why');
    expect(foldHookRuns([run({ hook: 'Stop #1', output: { decision: 'block' } })]).block).toBe('Blocked by hook Stop #1.');
    expect(foldHookRuns([run({ output: { decision: 'approve', reason: 'fine' } })]).block).toBeUndefined();
  });

  test('continue: false stops with its reason or the hook name; the first stop wins; continue: true does not', () => {
    expect(foldHookRuns([run({ output: { continue: false, stopReason: 'enough' } })]).stop).toBe('enough');
    expect(foldHookRuns([run({ hook: 'h', output: { continue: false } })]).stop).toBe('Stopped by hook h.');
    expect(
      foldHookRuns([run({ output: { continue: false, stopReason: 'a' } }), run({ output: { continue: false, stopReason: 'b' } })]).stop,
    ).toBe('a');
    expect(foldHookRuns([run({ output: { continue: true, stopReason: 'x' } })]).stop).toBeUndefined();
  });

  test('system messages and additional context collect in order; the first updatedInput wins', () => {
    const v = foldHookRuns([
      run({ output: { systemMessage: 'm1', hookSpecificOutput: { additionalContext: 'c1', updatedInput: { a: 1 } } } }),
      run({ output: { hookSpecificOutput: {} } }),
      run({ output: { systemMessage: 'm2', hookSpecificOutput: { additionalContext: 'c2', updatedInput: { a: 2 } } } }),
    ]);
    expect(v).toEqual({ additionalContext: ['c1', 'c2'], systemMessages: ['m1', 'm2'], updatedInput: { a: 1 } });
  });

  test('permission decisions: the most restrictive wins (deny > ask > allow), with its reason', () => {
    const decide = (...ds: ('allow' | 'deny' | 'ask')[]) =>
      foldHookRuns(
        ds.map((d) => run({ output: { hookSpecificOutput: { permissionDecision: d, permissionDecisionReason: `because ${d}` } } })),
      );
    expect(decide('allow')).toMatchObject({ permissionDecision: 'allow', permissionDecisionReason: 'because allow' });
    expect(decide('allow', 'ask')).toMatchObject({ permissionDecision: 'ask', permissionDecisionReason: 'because ask' });
    expect(decide('deny', 'ask', 'allow')).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'because deny' });
    expect(decide('ask', 'deny')).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'because deny' });
    expect(decide('ask', 'ask')).toMatchObject({ permissionDecision: 'ask' });
    expect(decide('ask', 'allow')).toMatchObject({ permissionDecision: 'ask', permissionDecisionReason: 'because ask' });
    // Two equally restrictive answers: the first one's reason stays.
    const twoAsks = foldHookRuns(
      ['first', 'second'].map((why) =>
        run({ output: { hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: why } } }),
      ),
    );
    expect(twoAsks).toMatchObject({ permissionDecision: 'ask', permissionDecisionReason: 'first' });
  });
});

describe('anyMatcherMatches', () => {
  test('an absent, null, empty or * matcher matches everything, even no value', () => {
    for (const m of [undefined, null, '', '*']) expect(anyMatcherMatches([m], undefined)).toBe(true);
  });
  test('a named matcher matches its tool (exactly, or as a regex), never a missing value', () => {
    expect(anyMatcherMatches(['Bash'], 'Bash')).toBe(true);
    expect(anyMatcherMatches(['Bash'], 'Read')).toBe(false);
    expect(anyMatcherMatches(['Edit|Write'], 'Write')).toBe(true);
    expect(anyMatcherMatches(['Bash'], undefined)).toBe(false);
    expect(anyMatcherMatches(['Read', 'Bash'], 'Bash')).toBe(true);
  });
  test('no matchers: nothing matches', () => {
    expect(anyMatcherMatches([], 'Bash')).toBe(false);
    expect(anyMatcherMatches(undefined, 'Bash')).toBe(false);
  });
});

describe('answerProblem', () => {
  const pending: PendingPermission[] = [
    { requestId: 'perm-1', toolName: 'Bash', toolUseId: 't1', input: {}, message: 'm', suggestions: [], requestedAtMs: 0 },
    { requestId: 'perm-2', toolName: 'Write', toolUseId: 't2', input: {}, message: 'm', suggestions: [], requestedAtMs: 0 },
  ];
  test('a valid answer to a pending request: no problem', () => {
    expect(answerProblem({ requestId: 'perm-2', behavior: 'allow' }, pending)).toBeNull();
    expect(answerProblem({ requestId: 'perm-1', behavior: 'deny', message: 'no' }, pending)).toBeNull();
    expect(answerProblem({ requestId: 'perm-1', behavior: 'allow', updatedInput: { command: 'ls' } }, pending)).toBeNull();
  });
  test('each malformed field is named', () => {
    expect(answerProblem(null, pending)).toBe('respondToPermission: the answer must be an object');
    expect(answerProblem('allow', pending)).toBe('respondToPermission: the answer must be an object');
    expect(answerProblem({ behavior: 'allow' }, pending)).toBe('respondToPermission: `requestId` must be a non-empty string');
    expect(answerProblem({ requestId: 1, behavior: 'allow' }, pending)).toBe('respondToPermission: `requestId` must be a non-empty string');
    expect(answerProblem({ requestId: '', behavior: 'allow' }, pending)).toBe(
      'respondToPermission: `requestId` must be a non-empty string',
    );
    expect(answerProblem({ requestId: 'perm-1', behavior: 'yes' }, pending)).toBe(
      "respondToPermission: `behavior` must be 'allow' or 'deny'",
    );
    expect(answerProblem({ requestId: 'perm-1', behavior: 'deny', message: 3 }, pending)).toBe(
      'respondToPermission: `message` must be a string',
    );
    for (const updatedInput of [null, 'ls', ['ls']]) {
      expect(answerProblem({ requestId: 'perm-1', behavior: 'allow', updatedInput }, pending)).toBe(
        'respondToPermission: `updatedInput` must be an object',
      );
    }
  });
  test('an unknown or answered id names what is pending', () => {
    expect(answerProblem({ requestId: 'perm-9', behavior: 'allow' }, pending)).toBe(
      'respondToPermission: no pending permission request perm-9 (pending: perm-1, perm-2); it may have been answered already',
    );
    expect(answerProblem({ requestId: 'perm-1', behavior: 'allow' }, [])).toBe(
      'respondToPermission: no pending permission request perm-1 (none is pending); it may have been answered already',
    );
  });
});
