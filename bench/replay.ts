/**
 * Benchmark 9 — what replaying a long session costs a worker: the time to rebuild a run's state
 * from its history, which a worker pays when it picks up a session after a crash or a cache
 * eviction, and to answer a query on a closed run. Our session (one `Read` per turn, zero-latency
 * scripted model) against the bare loop (`bench/bare/`, two no-op activities per iteration), both
 * recorded on the same dev server with the same number of turns, then each replayed in this
 * process with the SDK's replayer, rounds alternating.
 *
 *   npx tsx bench/replay.ts [--turns 300] [--rounds 3]
 *
 * Also printed: promises created in workflow code per turn during the replay (those of the
 * workflow's own realm, whose Promise is not this process's): the SDK's promise hook captures a
 * stack trace for each (ARCHITECTURE.md#the-turn; ARCHITECTURE.md#shared-libraries says where the
 * other per-workflow costs go).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { promiseHooks } from 'node:v8';
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { turn } from '../src/testing/scripted-model';
import { bundleSessionWorkflows } from '../src/worker/bundle';
import { quietBundlerLogger } from '../src/testing/workflow-modules';
import { bareActivities } from './bare/activities';
import type { bareLoop } from './bare/workflows';
import { load, machine, median, startBenchStack, table } from './lib';

type History = temporal.api.history.v1.IHistory;

async function record(turns: number): Promise<{ ours: History; bare: History }> {
  const { stack, model, dir } = await startBenchStack({ worker: {} });
  const bareWorkers = await Promise.all([
    Worker.create({ connection: stack.connection, taskQueue: 'bare', workflowsPath: require.resolve('./bare/workflows') }),
    Worker.create({ connection: stack.connection, taskQueue: 'bare-model', activities: bareActivities }),
    Worker.create({ connection: stack.connection, taskQueue: 'bare-tools', activities: bareActivities }),
  ]);
  const running = bareWorkers.map((w) => w.run());
  try {
    const file = path.join(dir, 'data.txt');
    writeFileSync(file, Array.from({ length: 40 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n'));
    model.addScenario({
      name: 'replay',
      turns: [...Array.from({ length: turns }, () => turn.tool('Read', { file_path: file })), turn.text('done')],
    });
    const h = await stack.client.start({
      prompt: '[scenario:replay] Read it repeatedly.',
      cwd: dir,
      permissionMode: 'bypassPermissions',
      continueAsNewEveryTurns: turns + 10, // one run: the whole session is one history
      loopDetection: { enabled: false },
    });
    const result = await h.result();
    if (result.subtype !== 'success' || result.num_turns !== turns + 1)
      throw new Error(`session ended ${result.subtype} after ${result.num_turns} turns`);
    const ours = await h.workflow.fetchHistory();
    const client = new Client({ connection: stack.clientConnection });
    const b = await client.workflow.start<typeof bareLoop>('bareLoop', {
      taskQueue: 'bare',
      workflowId: `bare-replay-${Date.now()}`,
      args: [turns + 1, false],
    });
    await b.result();
    return { ours, bare: await b.fetchHistory() };
  } finally {
    for (const w of bareWorkers) w.shutdown();
    await Promise.all(running);
    await stack.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } } });
  const turns = Number(values.turns);
  const rounds = Number(values.rounds);
  const loadBefore = load();
  const histories = await record(turns);
  const bundles = {
    ours: await bundleSessionWorkflows({ logger: quietBundlerLogger }),
    bare: await bundleWorkflowCode({ workflowsPath: require.resolve('./bare/workflows'), logger: quietBundlerLogger }),
  };
  let promises = 0;
  const stopHook = promiseHooks.onInit((promise) => {
    if ((promise as Promise<unknown>).constructor !== Promise) promises++;
  });
  const ms = { ours: [] as number[], bare: [] as number[] };
  const perTurnPromises = { ours: [] as number[], bare: [] as number[] };
  try {
    // One replay each first, left out: the first replay also loads the bundle into a new context.
    for (let round = 0; round <= rounds; round++) {
      for (const kind of ['ours', 'bare'] as const) {
        promises = 0;
        const t0 = process.hrtime.bigint();
        // The worker's sink for prompt offers (not called on replay, but it must exist).
        const sinks = { prompts: { offer: { fn: () => undefined } } };
        await Worker.runReplayHistory({ workflowBundle: bundles[kind], replayName: `${kind}-${round}`, sinks }, histories[kind]);
        if (round === 0) continue;
        ms[kind].push(Number(process.hrtime.bigint() - t0) / 1e6);
        perTurnPromises[kind].push(promises / (turns + 1));
      }
    }
  } finally {
    stopHook();
  }
  const events = (k: 'ours' | 'bare') => histories[k].events?.length ?? 0;
  console.log(`\n## 9. Replay of a ${turns}-turn run (${rounds} replays each, after one left out)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after`);
  console.log(
    table([
      ['loop', 'events', 'median replay', 'per event', 'per turn', 'promises per turn'],
      ...(['ours', 'bare'] as const).map((k) => [
        k === 'ours' ? 'agent session (Read per turn)' : 'bare: 2 no-op activities',
        String(events(k)),
        `${median(ms[k]).toFixed(0)} ms`,
        `${(median(ms[k]) / events(k)).toFixed(2)} ms`,
        `${(median(ms[k]) / (turns + 1)).toFixed(2)} ms`,
        median(perTurnPromises[k]).toFixed(0),
      ]),
    ]),
  );
  console.log(`ours / bare per turn: ${(median(ms.ours) / median(ms.bare)).toFixed(2)}×`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
