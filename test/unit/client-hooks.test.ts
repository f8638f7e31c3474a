/**
 * Callback hooks without a server (ARCHITECTURE.md#callback-hooks): the declaration's validation,
 * the SDK hook input built for each event, the `respondToHook` validator, what an answer (or no
 * answer) counts as, and the client side — what a callback's return value is sent as, callbacks
 * called in order, one answer per request, nothing sent by a client that went away.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { parseSessionConfig } from '../../src/shared/config';
import { parseJob } from '../../src/shared/batch';
import {
  clientHookRuns,
  hookAnswerProblem,
  matchingClientHooks,
  recordedAnswer,
  sdkHookInput,
  type HookAnswer,
  type PendingHookRequest,
} from '../../src/shared/client-hooks';
import { foldHookRuns } from '../../src/shared/hooks';
import {
  callbackResult,
  firstCallback,
  hookResponder,
  runCallbacks,
  type HookRequestLike,
  type HookSession,
} from '../../src/client/hook-callbacks';

const base = { prompt: 'x', cwd: '/w' };

describe('the clientHooks declaration', () => {
  test('is validated like other config, naming the field', () => {
    expect(
      parseSessionConfig({ ...base, clientHooks: { PreToolUse: [{ matcher: 'Bash|Write', hooks: 2, timeout: 5 }] } }).clientHooks,
    ).toEqual({
      PreToolUse: [{ matcher: 'Bash|Write', hooks: 2, timeout: 5 }],
    });
    const bad: [unknown, string][] = [
      [{ Notification: [{ hooks: 1 }] }, "clientHooks.Notification: unknown hook event 'Notification'"],
      [{ PreToolUse: [{ hooks: 0 }] }, 'clientHooks.PreToolUse.0.hooks:'],
      [{ PreToolUse: [{ hooks: 1, timeout: -1 }] }, 'clientHooks.PreToolUse.0.timeout:'],
      [{ PreToolUse: [{ hooks: 1, matcher: '(' }] }, 'clientHooks.PreToolUse.0.matcher: not a valid regular expression'],
      [{ PreToolUse: [{ hooks: 1, run: 'x' }] }, "clientHooks.PreToolUse.0.run: unknown option 'run'"],
      [{ PostToolUse: [{ hooks: 1, onFailure: 'block' }] }, "clientHooks.PostToolUse.0.onFailure: 'block' guards nothing on PostToolUse"],
      [{ Stop: [] }, 'clientHooks.Stop:'],
    ];
    for (const [clientHooks, message] of bad) expect(() => parseSessionConfig({ ...base, clientHooks })).toThrow(message);
    // The SDK ignores onFailure on Stop: accepted, not refused.
    expect(() => parseSessionConfig({ ...base, clientHooks: { Stop: [{ hooks: 1, onFailure: 'block' }] } })).not.toThrow();
  });

  test('a batch job cannot have one: nobody would answer', () => {
    expect(() =>
      parseJob({ prompt: 'x', cwd: '/w', clientHooks: { Stop: [{ hooks: 1 }] } }, { index: 1, batchId: 'b', platform: 'linux' }),
    ).toThrow('clientHooks: not allowed in a batch job: callback hooks are answered by the program that called query()');
  });

  test('matchers match as settings files do', () => {
    const hooks = { PreToolUse: [{ matcher: 'Bash', hooks: 1 }, { hooks: 1 }, { matcher: '^Wr', hooks: 1 }, { matcher: '*', hooks: 1 }] };
    expect(matchingClientHooks(hooks, 'PreToolUse', 'Write')).toEqual([1, 2, 3]);
    expect(matchingClientHooks(hooks, 'PreToolUse', 'Bash')).toEqual([0, 1, 3]);
    expect(matchingClientHooks(hooks, 'Stop', undefined)).toEqual([]);
    expect(matchingClientHooks(undefined, 'Stop', undefined)).toEqual([]);
  });
});

describe('the SDK hook input', () => {
  const where = { sessionId: 's-1', cwd: '/w', permissionMode: 'default' };
  const common = { session_id: 's-1', transcript_path: '', cwd: '/w', permission_mode: 'default' };
  test.each([
    [
      'PreToolUse',
      { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' },
      { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' },
    ],
    [
      'PostToolUse',
      { tool_name: 'Bash', tool_input: {}, tool_use_id: 't1', tool_response: 'ok' },
      { tool_name: 'Bash', tool_input: {}, tool_use_id: 't1', tool_response: 'ok' },
    ],
    [
      'PostToolUseFailure',
      { tool_name: 'Bash', tool_input: {}, tool_use_id: 't1', error: 'boom' },
      { tool_name: 'Bash', tool_input: {}, tool_use_id: 't1', error: 'boom' },
    ],
    ['UserPromptSubmit', { prompt: 'hi' }, { prompt: 'hi' }],
    ['SessionStart', { source: 'resume' }, { source: 'resume' }],
    ['SessionEnd', { reason: 'closed' }, { reason: 'prompt_input_exit' }],
    ['SessionEnd', { reason: 'max_turns' }, { reason: 'other' }],
    ['Stop', { stop_hook_active: true }, { stop_hook_active: true }],
    ['SubagentStart', { agent_id: 'c-1', agent_type: 'reviewer' }, { agent_id: 'c-1', agent_type: 'reviewer' }],
    [
      'SubagentStop',
      { agent_id: 'c-1', agent_type: 'reviewer', stop_hook_active: false },
      { agent_id: 'c-1', agent_type: 'reviewer', stop_hook_active: false, agent_transcript_path: '' },
    ],
    ['PreCompact', { trigger: 'manual' }, { trigger: 'manual', custom_instructions: null }],
  ] as const)('%s', (event, payload, fields) => {
    expect(sdkHookInput(where, event, payload)).toEqual({ ...common, hook_event_name: event, ...fields });
  });

  test('inside a subagent: its id and agent type', () => {
    const input = sdkHookInput({ ...where, subagent: { agentId: 's-1/task/t9', agentType: 'reviewer' } }, 'Stop', {});
    expect(input).toMatchObject({ agent_id: 's-1/task/t9', agent_type: 'reviewer', stop_hook_active: false });
  });
});

const request = (over: Partial<PendingHookRequest> = {}): PendingHookRequest => ({
  requestId: 'hook-1',
  event: 'PreToolUse',
  matcherIndex: 0,
  input: sdkHookInput({ sessionId: 's', cwd: '/w', permissionMode: 'default' }, 'PreToolUse', { tool_name: 'Bash' }),
  callbacks: 2,
  timeoutMs: 60_000,
  requestedAtMs: 0,
  ...over,
});

describe('respondToHook', () => {
  test('rejects what cannot be applied, naming why', () => {
    const pending = [request()];
    const problem = (a: unknown) => hookAnswerProblem(a, pending);
    expect(problem(null)).toBe('respondToHook: the answer must be an object');
    expect(problem({ results: [] })).toBe('respondToHook: `requestId` must be a non-empty string');
    expect(problem({ requestId: 'hook-9', results: [{ output: {} }] })).toBe(
      'respondToHook: no pending hook request hook-9 (pending: hook-1); it may have been answered already, or timed out',
    );
    expect(hookAnswerProblem({ requestId: 'hook-1', results: [{ output: {} }] }, [])).toMatch(/none is pending/);
    expect(problem({ requestId: 'hook-1', results: [] })).toBe(
      'respondToHook: `results` must be an array of 1 to 2 results (one per callback of the matcher)',
    );
    expect(problem({ requestId: 'hook-1', results: [{}, {}, {}] })).toMatch(/1 to 2 results/);
    expect(problem({ requestId: 'hook-1', results: [{ output: {}, error: 'x' }] })).toBe(
      'respondToHook: results[0]: must have exactly one of `output` and `error`',
    );
    expect(problem({ requestId: 'hook-1', results: [{ error: 3 }] })).toBe('respondToHook: results[0].error: must be a string');
    expect(problem({ requestId: 'hook-1', results: [{ output: {} }, { output: { decision: 'maybe' } }] })).toBe(
      'respondToHook: results[1].output: `decision`: expected one of "block", "approve"',
    );
    expect(problem({ requestId: 'hook-1', results: [{ output: { decision: 'block' } }, { error: 'threw: x' }] })).toBeNull();
  });

  test('the recorded answer keeps decision fields only, texts capped', () => {
    const answer = recordedAnswer({
      requestId: 'hook-1',
      results: [{ output: { decision: 'block', reason: 'no', suppressOutput: true } as never }, { error: 'e'.repeat(5_000) }],
    });
    expect(answer.results[0]).toEqual({ output: { decision: 'block', reason: 'no' } });
    expect((answer.results[1] as { error: string }).error).toMatch(/^e{1000}… \[4000 characters cut\]$/);
  });
});

describe('what an answer counts as', () => {
  const matcher = { matcher: 'Bash', hooks: 2 };
  test('each callback is a run folded as command hooks are: the most restrictive decision wins', () => {
    const answer: HookAnswer = {
      requestId: 'hook-1',
      results: [
        { output: { hookSpecificOutput: { permissionDecision: 'allow', additionalContext: 'a' } } },
        { output: { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no rm' } } },
      ],
    };
    const runs = clientHookRuns(request(), matcher, answer, 5);
    expect(runs.map((r) => r.hook)).toEqual(['PreToolUse[Bash] callback 1/2 (client)', 'PreToolUse[Bash] callback 2/2 (client)']);
    expect(foldHookRuns(runs)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'no rm', additionalContext: ['a'] });
  });

  test('no answer: a PreToolUse call is denied naming the hook; another event goes on (a non-blocking error)', () => {
    const [pre] = clientHookRuns(request(), matcher, undefined, 60_000);
    expect(pre).toMatchObject({ outcome: 'timeout', error: 'no client answered within 60 s' });
    expect(foldHookRuns([pre!]).block).toBe(
      'The PreToolUse callback hook PreToolUse[Bash] callbacks (client) got no answer (no client answered within 60 s), so the call was denied: a guard hook that cannot run never lets a call through.',
    );
    for (const event of ['PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionEnd'] as const) {
      const runs = clientHookRuns(request({ event, timeoutMs: 2_000 }), { hooks: 1 }, undefined, 2_000);
      expect(runs).toEqual([expect.objectContaining({ outcome: 'timeout', error: 'no client answered within 2 s' })]);
      expect(foldHookRuns(runs).block).toBeUndefined();
    }
  });

  test("a callback that failed: PreToolUse denies; UserPromptSubmit with onFailure 'block' blocks the prompt", () => {
    const failed: HookAnswer = { requestId: 'hook-1', results: [{ error: 'threw: down' }] };
    expect(foldHookRuns(clientHookRuns(request(), { hooks: 1 }, failed, 1)).block).toMatch(
      /^The PreToolUse callback hook PreToolUse callback 1\/1 \(client\) failed \(threw: down\), so the call was denied/,
    );
    const prompt = request({ event: 'UserPromptSubmit' });
    expect(foldHookRuns(clientHookRuns(prompt, { hooks: 1 }, failed, 1)).block).toBeUndefined();
    expect(foldHookRuns(clientHookRuns(prompt, { hooks: 1, onFailure: 'block' }, failed, 1)).block).toBe(
      "the callback hook UserPromptSubmit callback 1/1 (client) failed (threw: down) (onFailure: 'block')",
    );
  });
});

describe('the client side', () => {
  test('what a callback returns is sent as its decision fields, or as an error naming the field', () => {
    expect(callbackResult(undefined)).toEqual({ output: {} });
    expect(callbackResult({ async: true, asyncTimeout: 5 })).toEqual({ output: {} });
    expect(callbackResult({ continue: false, stopReason: 'enough', suppressOutput: true })).toEqual({
      output: { continue: false, stopReason: 'enough' },
    });
    expect(callbackResult({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer' } })).toEqual({
      output: { hookSpecificOutput: { hookEventName: 'PreToolUse' } },
    });
    expect(callbackResult('yes')).toEqual({ error: 'returned something other than an object' });
    expect(callbackResult({ decision: 'maybe' })).toEqual({
      error: 'returned invalid output: `decision`: expected one of "block", "approve"',
    });
  });

  test('a function among session hooks is found by event and matcher', () => {
    expect(firstCallback({ Stop: [{ hooks: [{ type: 'command', command: 'x' }] }, { hooks: [async () => ({})] }] })).toBe('hooks.Stop[1]');
    expect(firstCallback({ Stop: [{ hooks: [{ type: 'command', command: 'x' }] }] })).toBeUndefined();
    expect(firstCallback(undefined)).toBeUndefined();
  });

  const req: HookRequestLike = {
    sessionId: 's',
    requestId: 'hook-1',
    event: 'PreToolUse',
    matcherIndex: 0,
    input: request().input,
    toolUseId: 't1',
    timeoutMs: 60_000,
  };

  test('callbacks are called in order with (input, toolUseID, {signal}); one that throws is an error result', async () => {
    const calls: string[] = [];
    const results = await runCallbacks(
      [
        async (input, id, { signal }) => {
          calls.push(`1 ${input.hook_event_name} ${id} ${signal.aborted}`);
          throw new Error('down');
        },
        async () => {
          calls.push('2');
          return { decision: 'block', reason: 'r' };
        },
      ],
      req,
      new AbortController().signal,
    );
    expect(calls).toEqual(['1 PreToolUse t1 false', '2']);
    expect(results).toEqual([{ error: 'threw: down' }, { output: { decision: 'block', reason: 'r' } }]);
  });

  function fakeSession(respond: (a: HookAnswer) => Promise<unknown>): HookSession & { sent: HookAnswer[] } {
    const sent: HookAnswer[] = [];
    return {
      sessionId: 's',
      sent,
      pendingHookRequests: async () => [],
      respondToHook: async (a) => {
        sent.push(a);
        return respond(a);
      },
      isOpen: async () => true,
    };
  }

  test('the responder answers each request once, on the session that holds it; a refused answer is not an error', async () => {
    const session = fakeSession(async () => {
      throw new WorkflowUpdateFailedError('no pending hook request', undefined);
    });
    const asked: string[] = [];
    const responder = hookResponder(
      async (id) => (asked.push(id), session),
      { PreToolUse: [[async () => ({ continue: true })]] },
      new AbortController().signal,
    );
    responder.handle(req);
    responder.handle(req);
    responder.handle({ ...req, matcherIndex: 5, requestId: 'hook-2' }); // not a matcher of this client's: left alone
    await responder.settled();
    expect(asked).toEqual(['s']);
    expect(session.sent).toEqual([{ requestId: 'hook-1', results: [{ output: { continue: true } }] }]);
  });

  test('a client that goes away mid-callback sends nothing: the request stays pending for another', async () => {
    const session = fakeSession(async () => ({ applied: true }));
    const leaving = new AbortController();
    let seen: AbortSignal | undefined;
    const responder = hookResponder(
      async () => session,
      {
        PreToolUse: [
          [
            (_i, _t, { signal }) => {
              seen = signal;
              return new Promise((resolve) => signal.addEventListener('abort', () => resolve({})));
            },
          ],
        ],
      },
      leaving.signal,
    );
    responder.handle(req);
    await new Promise((r) => setImmediate(r));
    leaving.abort();
    await responder.settled();
    expect(seen?.aborted).toBe(true);
    expect(session.sent).toEqual([]);
  });
});
