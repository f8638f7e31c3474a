/**
 * The paths that only the server's limits reach: continue-as-new because the server suggests it
 * (no `continueAsNewEveryTurns`), and the payload guard that shrinks a carried state too big for
 * one payload. Runs on a dev server of its own whose history suggestion is set low.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { isTrimmedPlaceholder } from '../../src/shared/trim-tool-results';
import type { ToolResultBlock } from '../../src/shared/messages';
import { useHarness, type Harness } from '../helpers/harness';

const h = useHarness(
  {},
  { devServer: { ui: false, dbFile: ':memory:', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 80 } } },
);

async function runCount(h: Harness, sessionId: string): Promise<number> {
  let n = 0;
  for await (const _ of h.client.client.workflow.list({ query: `WorkflowId = '${sessionId}'` })) n++;
  return n;
}

test('a session continues as new when the server suggests it, and loses nothing', async () => {
  const steps = Array.from({ length: 12 }, (_, i) => turn.tool('Bash', { command: `echo step ${i}` }));
  const { handle, messages, result } = await h.run({ name: 'suggested', turns: [...steps, turn.text('all done')] }, {});
  expect(result).toMatchObject({ subtype: 'success', num_turns: 13, result: 'all done' });
  expect(await runCount(h, handle.sessionId)).toBeGreaterThan(1);
  expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i));
  expect(await handle.transcript()).toHaveLength(26);
});

test('the payload guard trims old tool output when the carried state would not fit one payload', async () => {
  const cwd = h.workspace();
  // 2,000 lines of 120 characters: each Read result is cut to 100,000 characters.
  const file = path.join(cwd, 'big.txt');
  writeFileSync(file, Array.from({ length: 2_000 }, (_, i) => `${String(i).padStart(6, '0')} ${'x'.repeat(113)}`).join('\n'));
  const eightReads = turn.tools(Array.from({ length: 8 }, () => ({ name: 'Read', arguments: { file_path: file } })));
  // Three turns of eight 100 KB results: 2.4 MB, over the 1.5 MiB guard and the server's 2 MiB blob limit.
  const { handle, result } = await h.run(
    { name: 'guard', turns: [eightReads, eightReads, eightReads, turn.text('read it all')] },
    { cwd, continueAsNewEveryTurns: 3, compaction: { toolResultBudgetChars: 0 } },
  );
  expect(result).toMatchObject({ subtype: 'success', result: 'read it all' });
  // This server suggests continue-as-new early, so the run may end after the second turn (carrying
  // 1.6 MB) or the third (2.4 MB): either way the carried state was over the guard's 1.5 MiB.
  expect(await runCount(h, handle.sessionId)).toBeGreaterThan(1);
  const transcript = await handle.transcript();
  const results = transcript.flatMap((m) =>
    Array.isArray(m.content) ? m.content.filter((b): b is ToolResultBlock => b.type === 'tool_result') : [],
  );
  expect(results).toHaveLength(24);
  // The oldest turn's results were shed first; the most recent turn's are intact.
  expect(results.slice(0, 8).every((r) => isTrimmedPlaceholder(r.content))).toBe(true);
  expect(results.slice(16).every((r) => r.content.length > 90_000)).toBe(true);
});
