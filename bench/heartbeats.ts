/**
 * Heartbeats of long model calls on a busy machine: what the server records, and whether any
 * call is timed out and made twice. One `durable-agent worker` process (every role) streams
 * `--calls` model calls of `--stream-ms` each, `--concurrent` at a time, while `--load N` CPU
 * spinners run beside it (bench/cpu-load.ts). The server's view is read by describing each
 * session every 100 ms: the pending call's attempt, its start and its last heartbeat time (server
 * clock), so each gap between two heartbeats the server recorded is measured where the timeout is
 * decided.
 *
 *   npx tsx bench/heartbeats.ts [--load 5] [--calls 8] [--stream-ms 12000] [--concurrent 2]
 *
 * Reported: heartbeats recorded per call and per streamed second (each one a server write), the
 * gaps between them (median, largest), attempts timed out, and provider requests per call (more
 * than one: the call was made, and billed, twice).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { turn } from '../src/testing/scripted-model';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from '../src/shared/config';
import { temporal } from '@temporalio/proto';
import { startCluster, type Cluster } from '../test/helpers/chaos';
import { startCpuLoad } from './cpu-load';
import { machine, median, pool, table } from './lib';

type Timestamp = temporal.api.history.v1.IHistoryEvent['eventTime'];
const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
const ms = (t: Timestamp | null | undefined): number | undefined =>
  t ? Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : undefined;

interface CallSample {
  /** Server times per attempt: its start, then each heartbeat recorded. */
  attempts: Map<number, { startedAt: number; beats: Set<number> }>;
  requests: number;
  aborted: number;
  streamedMs: number;
}

async function oneCall(c: Cluster, name: string, streamMs: number): Promise<CallSample> {
  const words = Math.max(1, Math.round(streamMs / 100));
  c.addScenario({ name, turns: [turn.text(Array.from({ length: words }, (_, i) => `w${i}`).join(' '), { chunk_delay_ms: 100 })] });
  const handle = await c.client.start({
    sessionId: name,
    prompt: `[scenario:${name}] Say it slowly.`,
    cwd: c.dir,
    permissionMode: 'bypassPermissions',
  });
  const attempts: CallSample['attempts'] = new Map();
  let done = false;
  const result = handle.result().finally(() => (done = true));
  while (!done) {
    const d = await handle.workflow.describe().catch(() => undefined);
    for (const p of d?.raw.pendingActivities ?? []) {
      if (p.activityType?.name !== 'callModel' || p.state !== STARTED) continue;
      const started = ms(p.lastStartedTime);
      if (started === undefined || !p.attempt) continue;
      const a = attempts.get(p.attempt) ?? { startedAt: started, beats: new Set<number>() };
      attempts.set(p.attempt, a);
      const beat = ms(p.lastHeartbeatTime);
      if (beat !== undefined && beat >= started) a.beats.add(beat);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await result;
  if (r.subtype !== 'success') throw new Error(`${name} ended ${r.subtype}: ${JSON.stringify(r.errors)}`);
  const requests = c.slots[0]!.model.requests.filter((q) => q.scenario === name);
  return { attempts, requests: requests.length, aborted: requests.filter((q) => q.abortedAt !== undefined).length, streamedMs: streamMs };
}

/**
 * Keep `n` short sessions running on the same worker and server until `until` settles: each turn
 * Reads a file, its model call answering after 20 ms, so the worker's main thread and the
 * server's store stay busy as with another suite of work beside the calls measured.
 */
async function background(c: Cluster, n: number, until: Promise<unknown>): Promise<number> {
  const ws = mkdtempSync(path.join(c.dir, 'bg-'));
  writeFileSync(path.join(ws, 'notes.txt'), 'alpha\nbeta\n');
  const read = turn.tool('Read', { file_path: path.join(ws, 'notes.txt') }, { delay_ms: 20 });
  c.addScenario({ name: 'bg', turns: [...Array.from({ length: 19 }, () => read), turn.text('done', { delay_ms: 20 })] });
  let stop = false;
  let sessions = 0;
  void until.finally(() => (stop = true));
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!stop) {
        const h = await c.client.start({ prompt: '[scenario:bg] Read the notes.', cwd: ws, permissionMode: 'bypassPermissions' });
        await h.result();
        sessions++;
      }
    }),
  );
  return sessions;
}

export async function heartbeats(opts: {
  load: number;
  calls: number;
  streamMs: number;
  concurrent: number;
  background: number;
}): Promise<void> {
  const c = await startCluster({ slots: 1 });
  const cpu = startCpuLoad(opts.load);
  try {
    await c.spawn(0, ['workflow', 'model', 'tools']);
    const stamp = Date.now().toString(36);
    const measured = pool(
      Array.from({ length: opts.calls }, (_, i) => `hb-${stamp}-${i}`),
      opts.concurrent,
      (name) => oneCall(c, name, opts.streamMs),
    );
    const bg =
      opts.background > 0
        ? background(
            c,
            opts.background,
            measured.catch(() => undefined),
          )
        : Promise.resolve(0);
    const samples = await measured;
    const bgSessions = await bg;
    // The first gap is the attempt's start to its first heartbeat (the deferred window); the rest, heartbeat to heartbeat.
    const firsts: number[] = [];
    const gaps: number[] = [];
    let beats = 0;
    let timedOut = 0;
    for (const s of samples) {
      timedOut += s.attempts.size - 1;
      for (const a of s.attempts.values()) {
        const times = [a.startedAt, ...[...a.beats].sort((x, y) => x - y)];
        beats += a.beats.size;
        if (times.length > 1) firsts.push(times[1]! - times[0]!);
        for (let i = 2; i < times.length; i++) gaps.push(times[i]! - times[i - 1]!);
      }
    }
    const requests = samples.reduce((n, s) => n + s.requests, 0);
    const aborted = samples.reduce((n, s) => n + s.aborted, 0);
    const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;
    console.log(
      `\n## Heartbeats under load (${opts.calls} calls of ${opts.streamMs / 1000} s, ${opts.concurrent} at a time, heartbeat timeout ${DEFAULT_HEARTBEAT_TIMEOUT_MS / 1000} s)`,
    );
    console.log(`machine: ${machine()}; ${cpu.describe()}; ${opts.background} background sessions (${bgSessions} run)`);
    console.log(
      table([
        [
          'heartbeats per call',
          'per streamed s',
          'first (median, max)',
          'then (median, max)',
          'attempts timed out',
          'requests per call',
          'aborted',
        ],
        [
          (beats / samples.length).toFixed(1),
          (beats / ((samples.length * opts.streamMs) / 1000)).toFixed(2),
          `${sec(median(firsts))}, ${sec(Math.max(...firsts))}`,
          `${sec(median(gaps))}, ${sec(Math.max(...gaps))}`,
          timedOut,
          (requests / samples.length).toFixed(2),
          aborted,
        ],
      ]),
    );
  } finally {
    await cpu.stop();
    await c.close();
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      load: { type: 'string', default: '0' },
      calls: { type: 'string', default: '8' },
      'stream-ms': { type: 'string', default: '12000' },
      concurrent: { type: 'string', default: '2' },
      background: { type: 'string', default: '0' },
    },
  });
  heartbeats({
    load: Number(values.load),
    calls: Number(values.calls),
    streamMs: Number(values['stream-ms']),
    concurrent: Number(values.concurrent),
    background: Number(values.background),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
