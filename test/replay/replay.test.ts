/**
 * The replay corpus: histories recorded from real sessions (scripts/record-histories.ts) are
 * replayed against today's workflow code. A change that would break a running session — a new
 * command, a reordered activity, a changed timer — fails here as a nondeterminism error. Such a
 * change goes behind `patched()` (docs/REPLAY.md); re-recording is not the fix.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../helpers/harness';
import { historyFromJSON } from './history-json';
import { historyFileNames } from './scenarios';

const DIR = path.join(__dirname, 'histories');

test('the corpus holds every scenario listed in test/replay/scenarios.ts, and nothing else', () => {
  const present = existsSync(DIR)
    ? readdirSync(DIR)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  expect(present).toEqual(historyFileNames().sort());
});

test('every recorded history replays on the current workflow code without nondeterminism', async () => {
  const files = historyFileNames().filter((f) => existsSync(path.join(DIR, f)));
  expect(files.length).toBeGreaterThan(0);
  const histories = files.map((file) => ({
    workflowId: file.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8'))),
  }));
  const failures: string[] = [];
  let replayed = 0;
  for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
    replayed++;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.name}: ${r.error.message.split('\n').slice(0, 6).join('\n')}`);
  }
  expect(failures).toEqual([]);
  expect(replayed).toBe(files.length);
}, 120_000);

test('the replay fails on a history the code would not produce (the check above is not vacuous)', async () => {
  const json = JSON.parse(readFileSync(path.join(DIR, 'simple-text.json'), 'utf8')) as {
    events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[];
  };
  const scheduled = json.events.find((e) => e.activityTaskScheduledEventAttributes)!;
  scheduled.activityTaskScheduledEventAttributes!.activityType.name = 'somethingElse';
  const results = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
    { workflowId: 'tampered', history: historyFromJSON(json) },
  ])) {
    results.push(r);
  }
  expect(results).toHaveLength(1);
  expect(results[0]!.error?.name).toBe('DeterminismViolationError');
}, 60_000);
