/**
 * Benchmark 17 — host loss: the time from losing a session's tools host to the session running
 * again on another host from its last checkpoint (docs/ARCHITECTURE.md#checkpoints).
 *
 *   npx tsx bench/host-loss.ts [--reps 2] [--host-timeouts default,10000]
 *
 * As test/workspace/host-loss.test.ts: two `durable-agent worker --roles tools` processes act as
 * two hosts on one machine, each under `unshare --mount --uts` with its own folder bound at the
 * same workspaces root and its own host name; the workflow and model workers run in this process.
 * Host A makes the session's `{copy}` workspace (a template of a few files), runs turn 1's Bash
 * command (checkpointed and pushed to a bare remote), then turn 2's, which blocks on a gate; host
 * B joins; host A is SIGKILLed and its folder deleted, the gate opened. The session finds the host
 * gone, restores the folder on B from checkpoint 1, runs turn 2's command again there and asks
 * the model for turn 3.
 *
 * Per rep, for `workspaceHostTimeoutMs` at its default (2 min) and at 10 s (heartbeatTimeoutMs at
 * its default), times after the kill (`Date.now()` just before it; the server is on this machine,
 * so its history timestamps are on the same clock): the `workspace_restored` event appended (the
 * workflow task that emitted it completing, and its arrival on the client's event stream), the
 * re-run Bash activity completing on B, and the next model call starting. And what bounds them:
 * the first schedule-to-start timeout of the pinned-host call, the `hostAlive` checks (a host that
 * polled in the last 75 s, POLLER_FRESH_MS, is busy, not lost) and the restore activity itself.
 * A benchmark: it prints figures and asserts nothing about time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { turn } from '../src/testing/scripted-model';
import { checkpointsQuery } from '../src/shared/api';
import type { SessionEvent } from '../src/shared/events';
import { POLLER_FRESH_MS } from '../src/workflows/session/checkpoints';
import { spawnToolsHost, type WorkerProcess } from '../test/helpers/chaos';
import { eventMs, load, machine, median, startBenchStack, table } from './lib';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Stack = Awaited<ReturnType<typeof startBenchStack>>;

interface Setting {
  name: string;
  /** undefined: the default (2 min). */
  workspaceHostTimeoutMs?: number;
}

interface Sample {
  /** Host A's last poll of its queue (as the server saw it), before the kill: ≤ 0. */
  lastPollMs: number;
  /** The first schedule-to-start timeout of a call to host A. */
  firstTimeoutMs: number;
  /** `hostAlive` checks, and how many said "still polling". */
  checks: number;
  alive: number;
  /** The `hostAlive` check that found the host lost completing. */
  lostMs: number;
  /** restoreWorkspace: scheduled → started, scheduled → completed. */
  restoreWaitMs: number;
  restoreMs: number;
  /** The workflow task that emitted `workspace_restored` completing; the event reaching the client. */
  restoredMs: number;
  restoredStreamMs: number;
  /** The re-run Bash activity completing on host B. */
  bashDoneMs: number;
  /** The next model call starting. */
  modelStartedMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const typeOf = (e: HistoryEvent) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;

/** Each activity of the history: its type, queue and the times of its events, in schedule order. */
interface Activity {
  type: string;
  queue: string;
  scheduled: number;
  started?: number;
  closed?: number;
  outcome?: 'completed' | 'failed' | 'timed_out' | 'cancelled';
  timeoutType?: string;
  result?: unknown;
}

function activities(events: HistoryEvent[]): Activity[] {
  const byId = new Map<string, Activity>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      byId.set(String(e.eventId), { type: typeOf(e)!, queue: s.taskQueue?.name ?? '', scheduled: eventMs(e) });
      continue;
    }
    const id = String(
      e.activityTaskStartedEventAttributes?.scheduledEventId ??
        e.activityTaskCompletedEventAttributes?.scheduledEventId ??
        e.activityTaskFailedEventAttributes?.scheduledEventId ??
        e.activityTaskTimedOutEventAttributes?.scheduledEventId ??
        e.activityTaskCanceledEventAttributes?.scheduledEventId ??
        '',
    );
    const a = byId.get(id);
    if (!a) continue;
    if (e.activityTaskStartedEventAttributes) a.started = eventMs(e);
    else {
      a.closed = eventMs(e);
      if (e.activityTaskCompletedEventAttributes) {
        a.outcome = 'completed';
        const p = e.activityTaskCompletedEventAttributes.result?.payloads?.[0];
        try {
          a.result = p ? defaultPayloadConverter.fromPayload(p) : undefined;
        } catch {
          a.result = undefined; // an encoded payload (a codec in the environment): not needed for the times
        }
      } else if (e.activityTaskFailedEventAttributes) a.outcome = 'failed';
      else if (e.activityTaskCanceledEventAttributes) a.outcome = 'cancelled';
      else {
        a.outcome = 'timed_out';
        const f = e.activityTaskTimedOutEventAttributes?.failure;
        const t = f?.timeoutFailureInfo?.timeoutType ?? f?.cause?.timeoutFailureInfo?.timeoutType;
        a.timeoutType = t === undefined || t === null ? undefined : temporal.api.enums.v1.TimeoutType[t].replace(/^TIMEOUT_TYPE_/, '');
      }
    }
  }
  return [...byId.values()].sort((x, y) => x.scheduled - y.scheduled);
}

class Bench {
  private readonly base = realpathSync(mkdtempSync('/var/tmp/da-bench-hostloss-'));
  /** The workspaces root: the same path on every host, a different folder behind it on each. */
  private readonly root = path.join(this.base, 'root');
  private readonly hosts: WorkerProcess[] = [];
  private n = 0;

  constructor(private readonly s: Stack) {
    mkdirSync(this.root, { recursive: true });
  }

  /** A tools worker as host `name`: its own folder bound at the root, its own host name. */
  private async host(name: string, env: Record<string, string>): Promise<WorkerProcess & { dir: string }> {
    const dir = path.join(this.base, name);
    mkdirSync(dir, { recursive: true });
    const w = spawnToolsHost({
      address: this.s.stack.address,
      modelUrl: this.s.model.url,
      taskQueue: this.s.stack.taskQueue,
      name,
      dir,
      root: this.root,
      env,
    });
    this.hosts.push(w);
    await w.ready;
    return Object.assign(w, { dir });
  }

  /** A small project: a few files. */
  private template(): string {
    const dir = path.join(this.base, `template-${this.n}`);
    mkdirSync(path.join(dir, 'src'), { recursive: true });
    writeFileSync(path.join(dir, 'README'), 'a project\n');
    writeFileSync(path.join(dir, 'package.json'), '{ "name": "p", "version": "1.0.0" }\n');
    for (let i = 0; i < 4; i++) writeFileSync(path.join(dir, 'src', `m${i}.ts`), `export const m${i} = ${i};\n`);
    return dir;
  }

  /** Host A's pollers of `queue` (activity tasks): the latest poll the server saw, in ms. */
  private async lastPoll(queue: string): Promise<number> {
    const svc = this.s.stack.clientConnection.workflowService;
    const res = await svc.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    const times = (res.pollers ?? []).map(
      (p) => Number(p.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime?.nanos ?? 0) / 1e6),
    );
    return Math.max(...times);
  }

  async rep(setting: Setting): Promise<Sample> {
    const n = this.n++;
    const tag = `${n}-${Math.random().toString(36).slice(2, 6)}`;
    const remote = path.join(this.base, `remote-${n}.git`);
    execFileSync('git', ['init', '--quiet', '--bare', remote]);
    const env = { DURABLE_AGENT_CHECKPOINT_REMOTE: remote };
    // Names of their own per rep: a host's queue is named after it, and a lost host must stay lost.
    const a = await this.host(`host-a-${tag}`, env);
    const started = path.join(this.base, `started-${n}`);
    const gateFile = path.join(this.base, `gate-${n}`);
    const name = `host-loss-${tag}`;
    this.s.model.addScenario({
      name,
      turns: [
        turn.tool('Bash', { command: 'echo one > a.txt' }),
        // Runs on host A until it is killed; runs again on host B after the restore.
        turn.tool('Bash', {
          command: `echo two > b.txt && touch ${started} && while [ ! -e ${gateFile} ]; do sleep 0.05; done && echo three > c.txt`,
        }),
        turn.text('done'),
      ],
    });
    const handle = await this.s.stack.client.start({
      model: 'gpt-4.1-mini',
      permissionMode: 'bypassPermissions',
      prompt: `[scenario:${name}] Do the task.`,
      workspace: { copy: this.template() },
      ...(setting.workspaceHostTimeoutMs !== undefined ? { workspaceHostTimeoutMs: setting.workspaceHostTimeoutMs } : {}),
    });
    const messages: SessionEvent[] = [];
    let restoredArrival = NaN;
    const reading = (async () => {
      for await (const m of handle.messages({ pollMs: 50 })) {
        if (m.type === 'system' && m.subtype === 'workspace_restored') restoredArrival = Date.now();
        messages.push(m);
      }
    })();
    // Host B joins once the folder is made on A (only A served the provisioning).
    let checkpoints = 0;
    await waitFor(() => {
      void handle.workflow.query(checkpointsQuery).then(
        (v) => (checkpoints = v.checkpoints.length),
        () => undefined,
      );
      return checkpoints > 0;
    }, 'checkpoint 0');
    const b = await this.host(`host-b-${tag}`, env);
    await waitFor(() => existsSync(started), 'the second command to start on host A');
    const before = (await handle.workflow.fetchHistory()).events ?? [];
    const queueA = activities(before).find((x) => x.type === 'runTool')!.queue;
    const lastPollA = await this.lastPoll(queueA);
    const killedAt = Date.now();
    await a.kill();
    rmSync(path.join(a.dir, 'sessions'), { recursive: true, force: true });
    writeFileSync(gateFile, '');
    await reading;
    const result = messages[messages.length - 1]!;
    if (result.type !== 'result' || result.subtype !== 'success') throw new Error(`${name} ended ${JSON.stringify(result)}`);
    const restoredEvent = messages.find((m) => m.type === 'system' && m.subtype === 'workspace_restored') as
      { lost_host: string; host: string; turn: number } | undefined;
    if (!restoredEvent || restoredEvent.host !== b.name || restoredEvent.turn !== 1)
      throw new Error(`${name}: not restored on ${b.name} from turn 1: ${JSON.stringify(restoredEvent)}`);
    await b.stop();

    const events = (await handle.workflow.fetchHistory()).events ?? [];
    const acts = activities(events);
    const restore = acts.find((x) => x.type === 'restoreWorkspace' && x.outcome === 'completed');
    if (!restore) throw new Error(`${name}: no completed restoreWorkspace`);
    const firstTimeout = acts.find((x) => x.queue === queueA && x.outcome === 'timed_out' && x.timeoutType === 'SCHEDULE_TO_START');
    const checks = acts.filter((x) => x.type === 'hostAlive');
    const lost = checks.filter((x) => x.result === false).at(-1) ?? checks.at(-1);
    const bash = acts.find((x) => x.type === 'runTool' && x.scheduled >= restore.closed! && x.outcome === 'completed');
    const model = acts.find((x) => x.type === 'callModel' && bash && x.scheduled >= bash.closed!);
    // The workflow task that took in the restore's result emitted the event: the first one completed after it.
    const wftDone = events.find((e) => e.workflowTaskCompletedEventAttributes && eventMs(e) >= restore.closed!);
    const t = (x: number | undefined) => (x === undefined ? NaN : x - killedAt);
    const timeline = acts
      .filter((x) => (x.closed ?? Infinity) >= killedAt)
      .map(
        (x) =>
          `${x.type} ${x.outcome ?? 'open'}${x.timeoutType ? ` (${x.timeoutType})` : ''} +${((x.closed! - killedAt) / 1000).toFixed(1)} s`,
      );
    console.error(`[host-loss] ${name}: after the kill: ${timeline.join('; ')}`);
    return {
      lastPollMs: lastPollA - killedAt,
      firstTimeoutMs: t(firstTimeout?.closed),
      checks: checks.length,
      alive: checks.filter((x) => x.result === true).length,
      lostMs: t(lost?.closed),
      restoreWaitMs: restore.started! - restore.scheduled,
      restoreMs: restore.closed! - restore.scheduled,
      restoredMs: t(wftDone ? eventMs(wftDone) : undefined),
      restoredStreamMs: t(restoredArrival),
      bashDoneMs: t(bash?.closed),
      modelStartedMs: t(model?.started),
    };
  }

  async close(): Promise<void> {
    for (const w of this.hosts.splice(0)) await w.kill().catch(() => undefined);
    rmSync(this.base, { recursive: true, force: true });
  }
}

export async function hostLoss(opts: { reps: number; hostTimeouts: (number | undefined)[] }): Promise<void> {
  const loadBefore = load();
  const settings: Setting[] = opts.hostTimeouts.map((ms) =>
    ms === undefined
      ? { name: 'workspaceHostTimeoutMs default (120 s)' }
      : { name: `workspaceHostTimeoutMs ${ms / 1000} s`, workspaceHostTimeoutMs: ms },
  );
  const s = await startBenchStack({ worker: { roles: ['workflow', 'model'] } });
  const bench = new Bench(s);
  const results: { setting: Setting; samples: Sample[] }[] = [];
  try {
    for (const setting of settings) {
      const samples: Sample[] = [];
      for (let rep = 0; rep < opts.reps; rep++) {
        const x = await bench.rep(setting);
        samples.push(x);
        console.error(`[host-loss] ${setting.name}, rep ${rep + 1}: ${JSON.stringify(x)}`);
      }
      results.push({ setting, samples });
    }
  } finally {
    await bench.close();
    await s.stack.close();
  }
  const sec = (x: number) => (Number.isFinite(x) ? `${(x / 1000).toFixed(1)} s` : 'n/a');
  const med = (xs: Sample[], f: (x: Sample) => number) => sec(median(xs.map(f)));
  const each = (xs: Sample[], f: (x: Sample) => number) => xs.map((x) => (f(x) / 1000).toFixed(1)).join(', ');

  console.log(`\n## 17. Host loss (tools host SIGKILLed mid Bash command; medians of ${opts.reps}; times after the kill)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after`);
  console.log(
    table([
      ['setting', 'workspace_restored (history)', '(stream)', 'Bash re-run done on B', 'next model call started', 'each model call (s)'],
      ...results.map(({ setting, samples: xs }) => [
        setting.name,
        med(xs, (x) => x.restoredMs),
        med(xs, (x) => x.restoredStreamMs),
        med(xs, (x) => x.bashDoneMs),
        med(xs, (x) => x.modelStartedMs),
        each(xs, (x) => x.modelStartedMs),
      ]),
    ]),
  );
  console.log(`\nwhat bounds it (medians; times after the kill unless said; poller window ${POLLER_FRESH_MS / 1000} s):`);
  console.log(
    table([
      [
        'setting',
        "A's last poll",
        'first schedule-to-start timeout',
        'hostAlive checks (said alive)',
        'host found lost',
        'restore: wait',
        'restore: scheduled→completed',
      ],
      ...results.map(({ setting, samples: xs }) => [
        setting.name,
        med(xs, (x) => x.lastPollMs),
        med(xs, (x) => x.firstTimeoutMs),
        xs.map((x) => `${x.checks} (${x.alive})`).join(', '),
        med(xs, (x) => x.lostMs),
        `${median(xs.map((x) => x.restoreWaitMs)).toFixed(0)} ms`,
        `${median(xs.map((x) => x.restoreMs)).toFixed(0)} ms`,
      ]),
    ]),
  );
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { reps: { type: 'string', default: '2' }, 'host-timeouts': { type: 'string', default: 'default,10000' } },
  });
  const hostTimeouts = values['host-timeouts']!.split(',').map((v) => (v.trim() === 'default' ? undefined : Number(v)));
  hostLoss({ reps: Number(values.reps), hostTimeouts }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
