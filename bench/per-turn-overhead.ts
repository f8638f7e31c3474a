/**
 * Benchmark 1 — per-turn overhead: median ms per turn of an agent session (zero-latency scripted
 * model, one read-only tool per turn) against a bare workflow running two no-op activities per
 * iteration, on the same dev server and in the same process; plus the bare loop whose first
 * activity reads its input by query, as our model call reads its prompt (DESIGN D1).
 *
 *   npx tsx bench/per-turn-overhead.ts [--rounds 5] [--turns 40]
 *
 * A turn is measured in the history, between the server timestamps of consecutive model-call
 * activities being scheduled; rounds alternate the three loops so drift hits all alike, and the
 * first round is a warm-up left out of the figures. Target: ours ≤ 1.3 × bare.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { DurableAgentClient } from '../src/client/client';
import { startScriptedModel, turn } from '../src/testing/scripted-model';
import { createWorker } from '../src/worker/worker';
import { bareActivities } from './bare/activities';
import type { bareLoop } from './bare/workflows';
import { dispatchWaits, gaps, load, machine, median, ms, percentile, quietRuntime, runTimes, scheduledTimes, startBenchServer, table } from './lib';

export async function perTurnOverhead(opts: { rounds: number; turns: number }): Promise<void> {
  quietRuntime();
  const loadBefore = load();
  const { server, dir } = await startBenchServer();
  const model = await startScriptedModel({ scenarios: [], keepMessages: false });
  const connection = await NativeConnection.connect({ address: server.address });
  const ours = await createWorker({ connection, model: { baseURL: model.url, apiKey: 'bench' }, log: () => undefined });
  const bareWorkers = await Promise.all([
    Worker.create({ connection, taskQueue: 'bare', workflowsPath: require.resolve('./bare/workflows') }),
    Worker.create({ connection, taskQueue: 'bare-model', activities: bareActivities }),
    Worker.create({ connection, taskQueue: 'bare-tools', activities: bareActivities }),
  ]);
  const running = [ours.run(), ...bareWorkers.map((w) => w.run())];
  const clientConnection = await Connection.connect({ address: server.address });
  const agents = await DurableAgentClient.connect({ connection: clientConnection });
  const client = new Client({ connection: clientConnection });

  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  model.addScenario({
    name: 'overhead',
    turns: [...Array.from({ length: opts.turns }, () => turn.tool('Read', { file_path: path.join(ws, 'notes.txt') })), turn.text('done')],
  });

  const perTurn: Record<'ours' | 'bare' | 'bareQuery', number[]> = { ours: [], bare: [], bareQuery: [] };
  const wall: Record<keyof typeof perTurn, number[]> = { ours: [], bare: [], bareQuery: [] };
  // Where a turn's time goes: activity executions (started → completed) and dispatch waits.
  const parts = { callModel: [] as number[], runTool: [] as number[], modelStep: [] as number[], toolStep: [] as number[], modelStepQuery: [] as number[] };
  const waits: Record<keyof typeof perTurn, number[]> = { ours: [], bare: [], bareQuery: [] };
  try {
    for (let round = 0; round <= opts.rounds; round++) {
      const warmUp = round === 0;
      {
        const t0 = Date.now();
        const h = await agents.start({ prompt: '[scenario:overhead] Read it repeatedly.', cwd: ws, permissionMode: 'bypassPermissions' });
        const result = await h.result();
        if (result.subtype !== 'success') throw new Error(`session ended ${result.subtype}: ${JSON.stringify(result.errors)}`);
        const events = (await h.workflow.fetchHistory()).events ?? [];
        if (!warmUp) {
          perTurn.ours.push(...gaps(scheduledTimes(events, 'callModel')));
          wall.ours.push((Date.now() - t0) / (opts.turns + 1));
          parts.callModel.push(...runTimes(events, 'callModel'));
          parts.runTool.push(...runTimes(events, 'runTool'));
          waits.ours.push(...dispatchWaits(events));
        }
        model.reset();
      }
      for (const kind of ['bare', 'bareQuery'] as const) {
        const t0 = Date.now();
        const h = await client.workflow.start<typeof bareLoop>('bareLoop', {
          taskQueue: 'bare',
          workflowId: `${kind}-${round}`,
          args: [opts.turns + 1, kind === 'bareQuery'],
        });
        await h.result();
        const events = (await h.fetchHistory()).events ?? [];
        if (!warmUp) {
          perTurn[kind].push(...gaps(scheduledTimes(events, 'modelStep')));
          wall[kind].push((Date.now() - t0) / (opts.turns + 1));
          parts[kind === 'bare' ? 'modelStep' : 'modelStepQuery'].push(...runTimes(events, 'modelStep'));
          if (kind === 'bare') parts.toolStep.push(...runTimes(events, 'toolStep'));
          waits[kind].push(...dispatchWaits(events));
        }
      }
    }
  } finally {
    ours.shutdown();
    for (const w of bareWorkers) w.shutdown();
    await Promise.all(running);
    await connection.close();
    await clientConnection.close();
    await model.close();
    await server.stop();
  }

  const bare = median(perTurn.bare);
  const row = (name: string, k: keyof typeof perTurn) => [
    name,
    ms(median(perTurn[k])),
    ms(percentile(perTurn[k], 90)),
    ms(median(wall[k])),
    `${(median(perTurn[k]) / bare).toFixed(2)}×`,
  ];
  console.log(`\n## 1. Per-turn overhead (${opts.rounds} rounds × ${opts.turns} turns, after a warm-up round)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after`);
  console.log('server: temporal dev server (SQLite file, 1 task-queue partition); all workers and the scripted model in this process');
  console.log(
    table([
      ['loop', 'median/turn', 'p90/turn', 'wall/turn', 'vs bare'],
      row('agent session (scripted model, Read per turn)', 'ours'),
      row('bare: 2 no-op activities', 'bare'),
      row('bare + query from the 1st activity', 'bareQuery'),
    ]),
  );
  console.log('\nwhere the time goes (medians, server timestamps):');
  console.log(
    table([
      ['', 'ours', 'bare', 'bare + query'],
      ['task dispatch wait (scheduled → started)', ms(median(waits.ours)), ms(median(waits.bare)), ms(median(waits.bareQuery))],
      ['model step run (started → completed)', `${ms(median(parts.callModel))} callModel`, ms(median(parts.modelStep)), ms(median(parts.modelStepQuery))],
      ['tool step run (started → completed)', `${ms(median(parts.runTool))} runTool`, ms(median(parts.toolStep)), ms(median(parts.toolStep))],
    ]),
  );
  const ratio = median(perTurn.ours) / bare;
  console.log(`target ≤ 1.30× bare: ${ratio <= 1.3 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}×)`);
}

if (require.main === module) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, turns: { type: 'string', default: '40' } } });
  perTurnOverhead({ rounds: Number(values.rounds), turns: Number(values.turns) }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
