/**
 * Every field of the carried state crosses continue-as-new: with a new run before every model
 * call, the session still counts cost against its budget and usage per model, keeps the model and
 * permission mode set by signals, its read-before-edit stamps (an Edit right after the boundary
 * works), its todos, its loop-detection history and its permission denials.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();

test('cost, budget, usage per model, model, permission mode, read stamps, todos, loop history and denials survive each new run', async () => {
  const cwd = h.workspace();
  const file = path.join(cwd, 'f.txt');
  const gate = path.join(cwd, 'gate');
  writeFileSync(file, 'old line\n');
  const todos = [{ content: 'edit f.txt', status: 'in_progress', activeForm: 'Editing f.txt' }];
  const usage = { prompt_tokens: 100_000, completion_tokens: 0 };
  const same = turn.tool('Bash', { command: 'echo same' }, { usage });
  const handle = await h.start(
    {
      name: 'carry-everything',
      turns: [
        turn.tools(
          [
            { name: 'Read', arguments: { file_path: file } },
            { name: 'TodoWrite', arguments: { todos } },
            { name: 'Write', arguments: { file_path: path.join(cwd, 'g.txt'), content: 'denied' } },
            { name: 'Bash', arguments: { command: `while [ ! -f '${gate}' ]; do sleep 0.05; done; echo released` } },
          ],
          { usage },
        ),
        turn.tool('Edit', { file_path: file, old_string: 'old line', new_string: 'new line' }, { usage }),
        same,
        same,
        same,
        // $0.04 (mini) + 5 × $0.01 (nano) passes the $0.085 budget with this reply: its call is not run.
        turn.tool('Bash', { command: 'echo never' }, { usage }),
      ],
    },
    {
      cwd,
      permissionMode: 'dontAsk',
      allowedTools: ['Read', 'Bash', 'TodoWrite'],
      continueAsNewEveryTurns: 1,
      maxBudgetUsd: 0.085,
    },
  );

  // While the first run's Bash waits on the gate, switch model and permission mode by signal.
  await waitFor('the gated Bash call', async () => (await handle.state()).pendingTools.some((p) => p.name === 'Bash'));
  await handle.setModel('gpt-4.1-nano');
  await handle.setPermissionMode('acceptEdits');
  await waitFor('the signals applied', async () => {
    const s = await handle.state();
    return s.model === 'gpt-4.1-nano' && s.permissionMode === 'acceptEdits';
  });
  writeFileSync(gate, '');

  const messages: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
  const result = await handle.result();

  // It really ran in several runs.
  expect((await handle.workflow.describe()).runId).not.toBe(handle.workflow.firstExecutionRunId);
  expect(existsSync(gate)).toBe(true);

  // Model: every call after the signal used it, across the new runs.
  const models = h.model.requests.filter((r) => r.scenario === 'carry-everything').map((r) => r.body.model);
  expect(models).toEqual(['gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-4.1-nano', 'gpt-4.1-nano', 'gpt-4.1-nano', 'gpt-4.1-nano']);

  // Cost and budget: the budget was reached only by the sum over all runs.
  expect(result).toMatchObject({ subtype: 'error_max_budget_usd', num_turns: 6 });
  expect(result.total_cost_usd).toBeCloseTo(0.09, 10);
  expect(result.modelUsage['gpt-4.1-mini']).toMatchObject({ inputTokens: 100_000 });
  expect(result.modelUsage['gpt-4.1-nano']).toMatchObject({ inputTokens: 500_000 });
  expect(result.modelUsage['gpt-4.1-nano']!.costUSD).toBeCloseTo(0.05, 10);
  expect(result.usage.input_tokens).toBe(600_000);

  // Permission mode and read stamps: the Edit right after the first boundary was allowed and ran.
  expect(readFileSync(file, 'utf8')).toBe('new line\n');
  // Denials: the first run's denied Write is still reported at the end.
  expect(result.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Write' })]);

  // Loop detection: the three identical calls were in three different runs.
  expect(messages.filter((m) => m.type === 'system' && m.subtype === 'loop_detected')).toHaveLength(1);

  // Todos, model and mode as the final run holds them.
  const view = await handle.state();
  expect(view).toMatchObject({ todos, model: 'gpt-4.1-nano', permissionMode: 'acceptEdits' });
});
