/**
 * A 2,000-turn session with ~2 KB tool outputs runs across several continue-as-new runs, and
 * no run's history reaches the size at which Temporal suggests continuing as new.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

const TURNS = 2_000;
const SUGGESTED_EVENTS = 4_096; // server default: limit.historyCount.suggestContinueAsNew
const SUGGESTED_BYTES = 4 * 1024 * 1024; // server default: limit.historySize.suggestContinueAsNew

const h = useHarness({}, { keepMessages: false });

test(`a ${TURNS}-turn session completes across continue-as-new runs, each run's history under the suggested size`, async () => {
  const ws = h.workspace();
  const file = path.join(ws, 'data.txt');
  writeFileSync(file, Array.from({ length: 40 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n'));
  const reads = Array.from({ length: TURNS }, () =>
    turn.tool('Read', { file_path: file }, { usage: { prompt_tokens: 2_000, completion_tokens: 20 } }),
  );
  const { handle, result } = await h.run(
    { name: 'two-thousand', turns: [...reads, turn.text('Read it 2000 times.')] },
    {
      cwd: ws,
      continueAsNewEveryTurns: 300,
      loopDetection: { enabled: false },
      compaction: { toolResultBudgetChars: 20_000, keepRecentToolResultTurns: 2 },
    },
  );
  expect(result).toMatchObject({ subtype: 'success', num_turns: TURNS + 1, result: 'Read it 2000 times.' });

  const runs: { events: number; bytes: number }[] = [];
  let runId: string | undefined = handle.workflow.firstExecutionRunId;
  while (runId) {
    const history = await h.client.client.workflow.getHandle(handle.sessionId, runId).fetchHistory();
    const events = history.events ?? [];
    const bytes = temporal.api.history.v1.History.encode(history).finish().length;
    runs.push({ events: events.length, bytes });
    runId = events[events.length - 1]!.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  expect(runs.length).toBeGreaterThanOrEqual(6);
  for (const r of runs) {
    expect(r.events).toBeLessThan(SUGGESTED_EVENTS);
    expect(r.bytes).toBeLessThan(SUGGESTED_BYTES);
  }
  expect(await handle.turnCount()).toBe(TURNS + 1);
}, 1_500_000); // a backstop: ~10 min in CI, 14–16 min with two suites at once on 2 cores
