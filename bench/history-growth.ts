/**
 * Benchmark: history bytes ÷ transcript bytes, ours vs the naive peer loop that passes the whole
 * transcript into every model activity, for 50-, 200- and 1,000-turn sessions with ~2 KB tool
 * outputs, in one run on one dev server. Target for ours: ≤ 1.5 (ARCHITECTURE.md#transcript-by-reference).
 *
 *   npx tsx bench/history-growth.ts [--turns 50,200,1000]
 *
 * The server's continue-as-new suggestion is raised so each session stays one run and the ratio
 * measures what recording costs (continue-as-new would add one carried copy of the state per
 * run). Everything else is the server's defaults, including the 2 MiB payload limit.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { turn } from '../src/testing/scripted-model';
import { startBenchStack } from './lib';
import { createNaiveActivities } from './naive/activities';
import type { naiveSession } from './naive/workflows';

/** Encoded size of a run's history, read in small pages (a naive history outgrows one gRPC message). */
async function historyBytes(
  client: Client,
  workflowId: string,
  breakdown?: Map<string, number>,
): Promise<{ bytes: number; events: number }> {
  let bytes = 0;
  let events = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId },
      maximumPageSize: 5,
      nextPageToken,
    });
    bytes += temporal.api.history.v1.History.encode(page.history ?? {}).finish().length;
    for (const e of page.history?.events ?? []) {
      const kind = temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? 'unknown';
      breakdown?.set(kind, (breakdown.get(kind) ?? 0) + temporal.api.history.v1.HistoryEvent.encode(e).finish().length);
    }
    events += page.history?.events?.length ?? 0;
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { bytes, events };
}

function fmt(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : `${(n / 1024).toFixed(0)} KiB`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '50,200,1000' }, breakdown: { type: 'boolean' } } });
  const sizes = values.turns!.split(',').map(Number);
  const { stack, model } = await startBenchStack({
    inMemory: true,
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 100_000, 'limit.historySize.suggestContinueAsNew': 50 * 1024 * 1024 },
    worker: {},
    taskQueue: 'hg-ours',
  });
  const { connection, client: agents } = stack;
  const naive = await Worker.create({
    connection,
    taskQueue: 'hg-naive',
    workflowsPath: require.resolve('./naive/workflows'),
    activities: createNaiveActivities(model.url),
  });
  const running = naive.run();
  const client = new Client({ connection: stack.clientConnection });
  const ws = mkdtempSync(path.join(tmpdir(), 'da-bench-hg-'));
  const file = path.join(ws, 'data.txt');
  writeFileSync(file, Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, '0')} ${'x'.repeat(44)}`).join('\n'));

  console.log(`history growth — ${new Date().toISOString().slice(0, 10)}, ${process.platform}, node ${process.version}`);
  console.log('turns | ours: history / transcript = ratio | naive: history / transcript = ratio');
  try {
    for (const n of sizes) {
      const reads = Array.from({ length: n - 1 }, () => turn.tool('Read', { file_path: file }));
      for (const who of ['ours', 'naive']) model.addScenario({ name: `${who}-${n}`, turns: [...reads, turn.text('done')] });

      const session = await agents.start({
        prompt: `[scenario:ours-${n}] Read the file repeatedly.`,
        cwd: ws,
        compaction: { toolResultBudgetChars: 0, enabled: false },
        loopDetection: { enabled: false },
      });
      const done = await session.result();
      if (done.subtype !== 'success') throw new Error(`our ${n}-turn session ended ${done.subtype}: ${done.errors?.join('; ')}`);
      const ourTranscript = JSON.stringify(await session.transcript()).length;
      const breakdown = values.breakdown ? new Map<string, number>() : undefined;
      const ourHistory = await historyBytes(client, session.sessionId, breakdown);
      if (breakdown) {
        for (const [kind, b] of [...breakdown].sort((a, c) => c[1] - a[1]))
          console.log(`    ${kind.padEnd(48)} ${(b / n).toFixed(0)} B/turn`);
      }

      const id = `naive-${n}-${Date.now()}`;
      let naiveCell: string;
      try {
        const out = await client.workflow.execute<typeof naiveSession>('naiveSession', {
          workflowId: id,
          taskQueue: 'hg-naive',
          args: [`[scenario:naive-${n}] Read the file repeatedly.`, ws],
        });
        const h = await historyBytes(client, id);
        const t = JSON.stringify(out.messages).length;
        naiveCell = `${fmt(h.bytes)} / ${fmt(t)} = ${(h.bytes / t).toFixed(1)}`;
      } catch (e) {
        const h = await historyBytes(client, id);
        const why = e instanceof WorkflowFailedError ? (e.cause?.message ?? e.message) : (e as Error).message;
        naiveCell = `FAILED after ${fmt(h.bytes)} of history: ${why.split('\n')[0]!.slice(0, 120)}`;
      }
      console.log(
        `${String(n).padStart(5)} | ${fmt(ourHistory.bytes)} / ${fmt(ourTranscript)} = ${(ourHistory.bytes / ourTranscript).toFixed(2)} (${ourHistory.events} events) | ${naiveCell}`,
      );
    }
  } finally {
    naive.shutdown();
    await running;
    await stack.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
