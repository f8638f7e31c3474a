/**
 * The sessions recorded into the replay corpus (scripts/record-histories.ts) — one per shape of
 * history the session workflow can produce — and the names the replay test requires.
 *
 * A scenario is a function of its workspace (tool calls name absolute paths), optionally driven
 * from outside while it runs (interrupt, signals, follow-up messages), and says which result it
 * must end with: a recording that ends otherwise is an error, never saved.
 */
import path from 'node:path';
import { turn, type ScenarioInput, type ScriptedModel } from '../../src/testing/scripted-model';
import type { SessionHandle } from '../../src/client/client';
import type { SessionOptions } from '../../src/shared/config';

export interface DriveContext {
  handle: SessionHandle;
  model: ScriptedModel;
  /** Resolves once the scripted model has been asked for `turnIndex` of this scenario. */
  requestFor(turnIndex: number): Promise<void>;
}

export interface ReplayScenario {
  name: string;
  /** What the history exercises, for docs/REPLAY.md and failure messages. */
  covers: string;
  /** Files written into the workspace before the session starts. */
  files?: Record<string, string>;
  /** The session's scenario first (its name is `name`), then any side scenarios (summaries). */
  scenarios(ws: string): ScenarioInput[];
  options?: Partial<SessionOptions>;
  drive?(ctx: DriveContext): Promise<void>;
  expect: { subtype: string; exit_reason?: string };
  /** Runs recorded: 1, or more for a session that continues-as-new (files `<name>.run<k>.json`). */
  runs?: number;
}

const slow = { chunk_delay_ms: 150 };

export const REPLAY_SCENARIOS: ReplayScenario[] = [
  {
    name: 'simple-text',
    covers: 'one model call, end_turn',
    scenarios: () => [{ name: 'simple-text', turns: [turn.text('Hello there.')] }],
    expect: { subtype: 'success', exit_reason: 'end_turn' },
  },
  {
    name: 'tool-calls',
    covers: 'read-only calls in parallel (Read, Glob, Grep), then mutating ones in order (Bash, Write, Edit)',
    files: { 'a.txt': 'alpha\nbeta\n', 'b.txt': 'one\ntwo\n' },
    scenarios: (ws) => [
      {
        name: 'tool-calls',
        turns: [
          turn.tools([
            { name: 'Read', arguments: { file_path: path.join(ws, 'a.txt') } },
            { name: 'Read', arguments: { file_path: path.join(ws, 'b.txt') } },
            { name: 'Glob', arguments: { pattern: '*.txt' } },
            { name: 'Grep', arguments: { pattern: 'beta', output_mode: 'content' } },
          ]),
          turn.tools([
            { name: 'Bash', arguments: { command: 'echo built > out.log && cat out.log' } },
            { name: 'Write', arguments: { file_path: path.join(ws, 'c.txt'), content: 'new file\n' } },
            { name: 'Edit', arguments: { file_path: path.join(ws, 'b.txt'), old_string: 'two', new_string: 'TWO' } },
          ]),
          turn.text('Done: read, built, wrote and edited.'),
        ],
      },
    ],
    expect: { subtype: 'success' },
  },
  {
    name: 'permission-denied',
    covers: 'a mutating tool denied in default permission mode; permission_denied event',
    scenarios: () => [
      { name: 'permission-denied', turns: [turn.tool('Bash', { command: 'touch nope' }), turn.text('I was not allowed.')] },
    ],
    options: { permissionMode: 'default' },
    expect: { subtype: 'success' },
  },
  {
    name: 'permission-call-facts',
    covers:
      'inspectToolCall before the decision: Bash allowed and denied on the parse, a Read denied by a path rule, a write to a settings file refused, an allowed Write with a path guard',
    files: { 'secret.txt': 'hunter2\n' },
    scenarios: (ws) => [
      {
        name: 'permission-call-facts',
        turns: [
          turn.tools([
            { name: 'Bash', arguments: { command: 'echo ok > out.txt' } },
            { name: 'Bash', arguments: { command: 'timeout 5 rm -f out.txt' } },
            { name: 'Read', arguments: { file_path: path.join(ws, 'secret.txt') } },
            { name: 'Write', arguments: { file_path: path.join(ws, '.claude', 'settings.local.json'), content: '{}' } },
            { name: 'Write', arguments: { file_path: path.join(ws, 'ok.txt'), content: 'fine\n' } },
          ]),
          turn.text('Some calls were refused.'),
        ],
      },
    ],
    options: {
      permissionMode: 'dontAsk',
      allowedTools: ['Bash(echo:*)', 'Write', 'Read'],
      disallowedTools: ['Bash(rm:*)', 'Read(./secret.txt)'],
      settingSources: ['local'],
    },
    expect: { subtype: 'success' },
  },
  {
    name: 'checkpoints',
    covers:
      'workspace checkpoints (`checkpoints: true` in the start config, no patch marker): checkpoint 0 at start, one after each turn that ran Bash or Write, none after a read-only turn; turn marks',
    files: { 'a.txt': 'alpha\n' },
    scenarios: (ws) => [
      {
        name: 'checkpoints',
        turns: [
          turn.tool('Bash', { command: 'echo built > out.log' }),
          turn.tool('Read', { file_path: path.join(ws, 'a.txt') }),
          turn.tool('Write', { file_path: path.join(ws, 'b.txt'), content: 'new\n' }),
          turn.text('Built, read and wrote.'),
        ],
      },
    ],
    // A plain folder takes checkpoints only when asked.
    options: { permissionMode: 'bypassPermissions', checkpoints: true },
    expect: { subtype: 'success' },
  },
  {
    name: 'max-turns',
    covers: 'the turn limit ends the session with error_max_turns',
    scenarios: () => [{ name: 'max-turns', turns: [0, 1, 2].map(() => turn.tool('Glob', { pattern: '*' })) }],
    options: { maxTurns: 2 },
    expect: { subtype: 'error_max_turns' },
  },
  {
    name: 'interrupt-model',
    covers: 'interrupt signal during a streaming model call (turn scope cancelled)',
    scenarios: () => [
      { name: 'interrupt-model', turns: [turn.text('This reply is streamed slowly and never finishes because of the interrupt.', slow)] },
    ],
    async drive({ handle, requestFor }) {
      await requestFor(0);
      await handle.interrupt();
    },
    expect: { subtype: 'error_during_execution', exit_reason: 'interrupted' },
  },
  {
    name: 'interrupt-tool',
    covers: 'interrupt during a Bash command: cancelled activity, interrupted tool_result for every call',
    scenarios: () => [
      {
        name: 'interrupt-tool',
        turns: [
          turn.tools([
            { name: 'Glob', arguments: { pattern: '*' } },
            { name: 'Bash', arguments: { command: 'sleep 60' } },
          ]),
        ],
      },
    ],
    async drive({ handle }) {
      for (let i = 0; i < 600 && !(await handle.state()).pendingTools.some((p) => p.name === 'Bash'); i++) await sleep(50);
      await sleep(300);
      await handle.interrupt();
    },
    expect: { subtype: 'error_during_execution', exit_reason: 'interrupted' },
  },
  {
    name: 'model-retry-fallback',
    covers: 'retryable model failures (api_retry signals), retries exhausted, fallback model takes over',
    scenarios: () => [
      {
        name: 'model-retry-fallback',
        turns: [turn.text('From the fallback model.', { faults: [{ status: 503 }, { status: 429, headers: { 'retry-after': '0' } }] })],
      },
    ],
    options: { retry: { maxAttempts: 2, initialIntervalMs: 100, maximumIntervalMs: 100 }, fallbackModel: 'gpt-4.1-nano' },
    expect: { subtype: 'success' },
  },
  {
    name: 'model-error',
    covers: 'a non-retryable model error ends the session with an error result',
    scenarios: () => [{ name: 'model-error', turns: [turn.text('never', { faults: [{ status: 401 }] })] }],
    expect: { subtype: 'error_during_execution', exit_reason: 'model_error' },
  },
  {
    name: 'unknown-tool',
    covers: 'unknown tool and invalid arguments become error tool_results (ARCHITECTURE.md#tools-fail-as-data)',
    scenarios: () => [
      {
        name: 'unknown-tool',
        turns: [
          turn.tools([
            { name: 'Teleport', arguments: {} },
            { name: 'Read', arguments: { file_path: 42 } },
          ]),
          turn.text('Those did not work.'),
        ],
      },
    ],
    expect: { subtype: 'success' },
  },
  {
    name: 'steering',
    covers: 'setModel, setPermissionMode and setMaxThinkingTokens signals between turns; TodoWrite in the workflow',
    scenarios: () => [
      {
        name: 'steering',
        turns: [
          turn.tool(
            'TodoWrite',
            { todos: [{ content: 'Look around', status: 'in_progress', activeForm: 'Looking around' }] },
            { delay_ms: 300 },
          ),
          turn.tool('Bash', { command: 'echo allowed now' }),
          turn.text('Steered.'),
        ],
      },
    ],
    options: { permissionMode: 'default' },
    async drive({ handle, requestFor }) {
      await requestFor(0);
      await handle.setModel('gpt-4.1-nano');
      await handle.setPermissionMode('bypassPermissions');
      await handle.setMaxThinkingTokens(1024);
    },
    expect: { subtype: 'success' },
  },
  {
    name: 'interactive',
    covers: 'interactive session: sendMessage updates (one duplicate), waiting for input, close signal',
    scenarios: () => [{ name: 'interactive', turns: [turn.text('First answer.'), turn.text('Second answer.')] }],
    options: { interactive: true },
    async drive({ handle }) {
      for (let i = 0; i < 600 && (await handle.state()).status !== 'waiting_for_input'; i++) await sleep(50);
      await handle.send('A follow-up question.', { id: 'm2' });
      await handle.send('A follow-up question.', { id: 'm2' });
      for (let i = 0; i < 600 && (await handle.turnCount()) < 2; i++) await sleep(50);
      for (let i = 0; i < 600 && (await handle.state()).status !== 'waiting_for_input'; i++) await sleep(50);
      await handle.close();
    },
    expect: { subtype: 'success' },
  },
  {
    name: 'callback-hooks',
    covers:
      'callback hooks (clientHooks): hook requests answered by respondToHook updates — PreToolUse allow and deny, PostToolUse context — and a UserPromptSubmit request left to time out',
    scenarios: () => [
      {
        name: 'callback-hooks',
        turns: [turn.tool('Bash', { command: 'echo allowed' }), turn.tool('Bash', { command: 'rm -rf nothing' }), turn.text('Hooked.')],
      },
    ],
    options: {
      clientHooks: {
        UserPromptSubmit: [{ hooks: 1, timeout: 1 }],
        PreToolUse: [{ matcher: 'Bash', hooks: 1 }],
        PostToolUse: [{ hooks: 1 }],
      },
    },
    async drive({ handle }) {
      // The client's part: answer each PreToolUse and PostToolUse request; leave UserPromptSubmit to its timeout.
      const answered = new Set<string>();
      while (await handle.isOpen()) {
        for (const p of await handle.pendingHookRequests().catch(() => [])) {
          if (p.event === 'UserPromptSubmit' || answered.has(p.requestId)) continue;
          answered.add(p.requestId);
          const command = String((p.input as { tool_input?: { command?: string } }).tool_input?.command);
          const output =
            p.event === 'PostToolUse'
              ? { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'Checked by the client.' } }
              : {
                  hookSpecificOutput: {
                    hookEventName: 'PreToolUse',
                    permissionDecision: command.startsWith('rm') ? ('deny' as const) : ('allow' as const),
                  },
                };
          await handle.respondToHook({ requestId: p.requestId, results: [{ output }] });
        }
        await sleep(50);
      }
    },
    expect: { subtype: 'success' },
  },
  {
    name: 'continue-as-new',
    covers: 'continue-as-new between turns (continueAsNewEveryTurns), the carried state read back by the next run',
    scenarios: () => [
      {
        name: 'continue-as-new',
        turns: [turn.tool('Bash', { command: 'echo one' }), turn.tool('Bash', { command: 'echo two' }), turn.text('Across two runs.')],
      },
    ],
    options: { continueAsNewEveryTurns: 2 },
    runs: 2,
    expect: { subtype: 'success' },
  },
  {
    name: 'compaction',
    covers: 'proactive compaction: the summarize activity and the compact boundary',
    scenarios: () => [
      {
        name: 'compaction',
        turns: [0, 1, 2, 3].map((i) =>
          turn.tool(
            'Bash',
            { command: `echo step ${i}` },
            { usage: { prompt_tokens: [1000, 2000, 3000, 8500][i]!, completion_tokens: 10 } },
          ),
        ),
      },
      { name: 'compaction-summaries', turns: [turn.text('[scenario:compaction-after] Ran steps 0 and 1.')] },
      { name: 'compaction-after', turns: [turn.text('unused'), turn.text('unused'), turn.text('All four steps ran.')] },
    ],
    options: { compaction: { contextWindow: 10_000, threshold: 0.8, keepRecentTurns: 2, summaryModel: 'scripted/compaction-summaries' } },
    expect: { subtype: 'success' },
  },
  {
    name: 'subagents',
    covers: 'two Task calls in one turn: a child workflow, its events by signal, and an unknown agent as an error result',
    scenarios: () => [
      {
        name: 'subagents',
        turns: [
          turn.tools([
            {
              name: 'Task',
              arguments: { description: 'count', prompt: '[scenario:subagents-child] Count the files.', subagent_type: 'helper' },
            },
            { name: 'Task', arguments: { description: 'nothing', prompt: 'x', subagent_type: 'no-such-agent' } },
          ]),
          turn.text('The helper counted.'),
        ],
      },
      { name: 'subagents-child', turns: [turn.tool('Bash', { command: 'ls | wc -l' }), turn.text('There are some files.')] },
    ],
    options: { agents: { helper: { description: 'Counts things', prompt: 'You count things.', tools: ['Bash'] } } },
    expect: { subtype: 'success' },
  },
];

/** Every history file the corpus must hold. */
export function historyFileNames(): string[] {
  return REPLAY_SCENARIOS.flatMap((s) =>
    (s.runs ?? 1) === 1 ? [`${s.name}.json`] : Array.from({ length: s.runs! }, (_, k) => `${s.name}.run${k + 1}.json`),
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
