/**
 * Fleet chaos (ARCHITECTURE.md#rate-limits): a batch of jobs against one scripted model that
 * answers 429 (with `retry-after`) beyond a concurrency limit, run twice on the same workspaces:
 *
 *  1. fault-free, with rate limiting off — the reference transcripts, and the 429s an unlimited
 *     fleet gets;
 *  2. with limiting on and no caps configured (the workers learn the limit), or with a fleet
 *     cap (`DURABLE_AGENT_FLEET_MAX_CONCURRENT`, divided among the workers by the limiter
 *     workflow), worker processes SIGKILLed and restarted every `killEveryMs`, and the dev server
 *     SIGKILLed and restarted once.
 *
 * Shared by test/chaos/fleet.test.ts (small) and bench/fleet-chaos.ts (100 jobs); both check the
 * same things: every job finishes with the fault-free transcript, no Bash command ran twice, and
 * the share of model calls answered 429.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { turn, type TurnInput } from '../../src/testing/scripted-model';
import { submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { sessionIdFor, type BatchProgress } from '../../src/shared/batch';
import type { ContentBlock, Message } from '../../src/shared/messages';
import {
  compareTranscripts,
  isUnknownOutcome,
  sleep,
  startCluster,
  toolResultsById,
  transcriptThroughRestarts,
  type Cluster,
} from './chaos';
import { scenarioTag } from './harness';

export interface FleetChaosOptions {
  jobs: number;
  concurrency: number;
  /** The scripted model's concurrency limit (429 beyond it). */
  modelLimit: number;
  /** The chaos run's `DURABLE_AGENT_FLEET_MAX_CONCURRENT` (none: no caps, the workers learn the limit). */
  fleetCap?: number;
  workers: number;
  killEveryMs: number;
  /** Stop killing after this many kills (default: kill until the batch is done). */
  maxKills?: number;
  /** Which kill also restarts the dev server. */
  serverRestartAtKill: number;
  /**
   * The scripted model's wait between stream chunks (default 40 ms, a reply of ~20 chunks in
   * under a second). Longer makes each call hold a provider slot as long as a real one does.
   */
  chunkDelayMs?: number;
  log?: (line: string) => void;
}

export interface PhaseFigures {
  seconds: number;
  /** Model requests that reached the script, plus those answered 429 by the limit. */
  modelCalls: number;
  rateLimited: number;
  peakConcurrent: number;
}

export interface FleetChaosReport {
  faultFree: PhaseFigures;
  chaos: PhaseFigures & { kills: number; serverStarts: number; unknownOutcomes: number; fleetCap: number | undefined };
  finished: { faultFree: number; chaos: number };
  /** Transcript differences and Bash commands run twice (must be empty). */
  problems: string[];
  /** Jobs the fault-free run (limiting off) did not finish: no reference to compare with. */
  incomparable: string[];
  crashes: Cluster['crashes'];
}

const bashCall = (i: number, k: number) => ({
  name: 'Bash',
  arguments: { command: `echo j${i}-b${k} >> ran.log && sleep 0.2 && echo ok j${i}-b${k}` },
});

export async function runFleetChaos(o: FleetChaosOptions): Promise<FleetChaosReport> {
  const log = o.log ?? (() => undefined);
  const c = await startCluster({ slots: o.workers, sharedModel: true });
  try {
    const model = c.slots[0]!.model;
    model.setMaxConcurrent(o.modelLimit);
    const ws = (i: number) => path.join(c.dir, `ws-${i}`);
    const id = (i: number) => `job-${String(i).padStart(3, '0')}`;
    for (let i = 0; i < o.jobs; i++) c.addScenario(scenario(i, ws(i), id(i), o.chunkDelayMs ?? 40));
    const jobsFile = path.join(c.dir, 'jobs.jsonl');
    writeFileSync(
      jobsFile,
      Array.from({ length: o.jobs }, (_, i) =>
        JSON.stringify({
          id: id(i),
          prompt: `${scenarioTag(id(i))} Work through the plan.`,
          cwd: ws(i),
          model: 'gpt-4.1-mini',
          permissionMode: 'bypassPermissions',
          heartbeatTimeoutMs: 5_000,
          retry: { maxAttempts: 40, initialIntervalMs: 500, maximumIntervalMs: 2_000 },
        }),
      ).join('\n'),
    );
    const prepare = () => {
      for (let i = 0; i < o.jobs; i++) {
        rmSync(ws(i), { recursive: true, force: true });
        mkdirSync(ws(i), { recursive: true });
      }
    };
    const spawnAll = (env: NodeJS.ProcessEnv) => Promise.all(c.slots.map((s) => c.spawn(s.index, undefined, env)));
    const stopAll = () => Promise.all(c.slots.map((s) => s.worker?.kill()));
    const runBatch = async (batchId: string) => {
      await submitBatch(c.client, readJobsFile(jobsFile, { batchId, cwd: c.dir }), { batchId, concurrency: o.concurrency });
      return resultThroughRestarts(c, batchId);
    };
    const figures = (t0: number): PhaseFigures => ({
      seconds: (Date.now() - t0) / 1000,
      modelCalls: model.requests.length + model.rateLimited,
      rateLimited: model.rateLimited,
      peakConcurrent: model.peakConcurrent,
    });

    // 1. Fault-free, limiting off.
    prepare();
    await spawnAll({ DURABLE_AGENT_MODEL_RATE_LIMIT: '0' });
    let t0 = Date.now();
    const free = await runBatch(`free-${Date.now().toString(36)}`);
    const faultFree = figures(t0);
    // One at a time, as the chaos run's are read below: each is a query a worker answers by
    // replaying the closed session, and 100 at once outlast the server's query timeout.
    const expected: Awaited<ReturnType<typeof transcriptThroughRestarts>>[] = [];
    for (let i = 0; i < o.jobs; i++) expected.push(await transcriptThroughRestarts(await c.client.get(sessionIdFor(free.batchId, id(i)))));
    log(`[fleet-chaos] fault-free: ${JSON.stringify(faultFree)}`);
    await stopAll();
    model.reset();

    // 2. Limiting on, no caps (learned) or a fleet cap; kills and a server restart.
    prepare();
    const env: NodeJS.ProcessEnv = o.fleetCap ? { DURABLE_AGENT_FLEET_MAX_CONCURRENT: String(o.fleetCap) } : {};
    await spawnAll(env);
    t0 = Date.now();
    const batchId = `chaos-${Date.now().toString(36)}`;
    let done = false;
    const finished = runBatch(batchId).finally(() => (done = true));
    finished.catch(() => undefined);
    for (let n = 0; !done; n++) {
      await Promise.race([sleep(o.killEveryMs), finished.catch(() => undefined)]);
      if (done) break;
      if (o.maxKills !== undefined && c.kills.length >= o.maxKills) {
        await finished.catch(() => undefined);
        break;
      }
      const live = c.liveSlots();
      if (live.length > 0) await c.kill(live[n % live.length]!);
      if (c.kills.length === o.serverRestartAtKill) await c.server.restart({ downMs: 1_000 });
      await Promise.all(c.slots.filter((s) => !s.worker?.alive).map((s) => c.spawn(s.index, undefined, env)));
      log(`[fleet-chaos] kill ${c.kills.length} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
    const chaosProgress = await finished;
    const chaosFigures = figures(t0);

    const problems: string[] = [];
    const incomparable: string[] = [];
    let unknownOutcomes = 0;
    for (let i = 0; i < o.jobs; i++) {
      // A job the run without limiting did not finish (its calls ran out of retries in the 429 storm) has no reference.
      if (!finishedScenario(expected[i]!, i)) {
        incomparable.push(id(i));
        continue;
      }
      const handle = await c.client.get(sessionIdFor(batchId, id(i)));
      const transcript = await transcriptThroughRestarts(handle);
      const diff = compareTranscripts(expected[i]!, transcript);
      problems.push(...diff.mismatches.map((m) => `${id(i)}: ${m}`));
      unknownOutcomes += diff.unknownOutcome.length;
      problems.push(...bashRunCounts(transcript, path.join(ws(i), 'ran.log')).map((p) => `${id(i)}: ${p}`));
    }
    return {
      faultFree,
      chaos: { ...chaosFigures, kills: c.kills.length, serverStarts: c.server.starts, unknownOutcomes, fleetCap: o.fleetCap },
      finished: { faultFree: free.progress.completed, chaos: chaosProgress.progress.completed },
      problems,
      incomparable,
      crashes: [...c.crashes],
    };
  } finally {
    await c.close();
  }
}

const finalText = (i: number) => `Job ${i} is complete.`;

/** Whether a transcript reached the scenario's final answer. */
function finishedScenario(transcript: Message[], i: number): boolean {
  const last = transcript[transcript.length - 1];
  return last?.role === 'assistant' && JSON.stringify(last.content).includes(finalText(i));
}

/** Each Bash command's token in ran.log: once if reported normally, at most once if reported unknown. */
function bashRunCounts(transcript: Message[], ranLog: string): string[] {
  const log = existsSync(ranLog) ? readFileSync(ranLog, 'utf8') : '';
  const results = toolResultsById(transcript);
  const out: string[] = [];
  for (const m of transcript) {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content as ContentBlock[]) {
      if (b.type !== 'tool_use' || b.name !== 'Bash') continue;
      const token = /echo (j\d+-b\d+) >>/.exec((b.input as { command: string }).command)![1]!;
      const runs = log.split('\n').filter((l) => l === token).length;
      const unknown = isUnknownOutcome(results.get(b.id)!);
      if (unknown ? runs > 1 : runs !== 1) out.push(`Bash ${token} ran ${runs}× but its result says ${unknown ? 'unknown' : 'done'}`);
    }
  }
  return out;
}

function scenario(i: number, ws: string, name: string, chunkDelayMs: number) {
  const file = path.join(ws, 'out.txt');
  const calls = [
    [bashCall(i, 0)],
    [{ name: 'Write', arguments: { file_path: file, content: `job ${i} output\nsecond line\n` } }],
    [{ name: 'Read', arguments: { file_path: file } }],
    [{ name: 'Edit', arguments: { file_path: file, old_string: 'second line', new_string: 'SECOND LINE' } }],
    [bashCall(i, 4)],
  ];
  const text = (k: number) => `Step ${k} of job ${i}: working through the plan one careful step at a time, checking each result.`;
  const turns: TurnInput[] = calls.map((cs, k) => turn.tools(cs, { text: text(k), chunk_delay_ms: chunkDelayMs }));
  turns.push(turn.text(finalText(i), { chunk_delay_ms: chunkDelayMs }));
  return { name, turns };
}

/** The coordinator's result, retried while the dev server restarts. */
async function resultThroughRestarts(c: Cluster, batchId: string): Promise<{ batchId: string; progress: BatchProgress }> {
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    try {
      return { batchId, progress: (await c.client.client.workflow.getHandle(batchId).result()) as BatchProgress };
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await sleep(500);
    }
  }
}
