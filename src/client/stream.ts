/**
 * Follow a session's message stream across continue-as-new.
 *
 * The `events` query is answered by one run. A new run starts with the previous run's newest events
 * and a sequence number that continues (ARCHITECTURE.md#events-are-a-query), so a reader keeping up just keeps querying the
 * latest run. A reader that falls further behind (or starts from the beginning of a long session)
 * finds a gap: the first event the latest run has is past `after + 1`. The missing events are in
 * earlier runs, which still answer queries after they closed; we find them through visibility
 * (`WorkflowId = …`, ordered by start time) and read them run by run.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import * as api from '../shared/api';
import type { EventsPage, SessionEvent } from '../shared/events';
import { listRuns } from './visibility';

export interface FollowOptions {
  /** Yield events with seq > after (default: from the first event). */
  after?: number;
  pollMs?: number;
  /** How often an idle reader checks whether the workflow closed without a final result (ms). */
  closeCheckMs?: number;
  /** Waits between polls instead of a plain timer (a caller may cut the wait short). */
  wait?: (ms: number) => Promise<void>;
  /** Called with the time each page of events arrived, before its events are yielded. */
  onPage?: (at: number) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function* followEvents(client: Client, sessionId: string, opts: FollowOptions = {}): AsyncGenerator<SessionEvent> {
  let after = opts.after ?? -1;
  const pollMs = opts.pollMs ?? 250;
  const closeCheckMs = opts.closeCheckMs ?? 2_000;
  const wait = opts.wait ?? sleep;
  const latest = client.workflow.getHandle(sessionId);
  let lastCloseCheck = Date.now();
  let backoffMs = pollMs;
  /** When queries to the closed session first went unanswered. */
  let unansweredSince: number | undefined;
  for (;;) {
    let page: EventsPage;
    try {
      page = await queryEvents(latest, after);
      opts.onPage?.(Date.now());
      backoffMs = pollMs;
      unansweredSince = undefined;
    } catch (e) {
      const closed = await isClosed(latest);
      // A closed run is answered by a worker replaying its whole history: with no worker, or with
      // a long run on a loaded machine, the query goes unanswered (the server gives up after
      // ~30 s: FAILED_PRECONDITION) though the final events, the result among them, are still
      // there. Keep asking for a while; a session whose workers are gone for good never answers.
      if (closed) {
        if (!isUnansweredQuery(e)) return;
        unansweredSince ??= Date.now();
        if (Date.now() - unansweredSince > CLOSED_PATIENCE_MS) return;
      } else if (!isTransientQueryFailure(e)) {
        throw e;
      }
      // Still running and no worker answered in time (all down, or busy on a loaded machine):
      // its events are not lost, so keep following rather than fail the reader.
      await wait(backoffMs);
      backoffMs = Math.min(backoffMs * 2, MAX_QUERY_BACKOFF_MS);
      continue;
    }
    const first = page.events[0];
    if (first && first.seq > after + 1) {
      for await (const e of earlierRuns(client, sessionId, after, first.seq)) {
        after = e.seq;
        yield e;
      }
    }
    for (const e of page.events) {
      if (e.seq <= after) continue;
      after = e.seq;
      yield e;
    }
    if (page.done) return;
    if (page.events.length > 0) continue;
    if (Date.now() - lastCloseCheck >= closeCheckMs) {
      lastCloseCheck = Date.now();
      // Closed without `done` (failed, terminated, timed out): drain once more, then stop.
      if (await isClosed(latest)) {
        const rest = await queryEvents(latest, after).catch(() => undefined);
        for (const e of rest?.events ?? []) {
          if (e.seq > after) yield e;
        }
        return;
      }
    }
    await wait(pollMs);
  }
}

const MAX_QUERY_BACKOFF_MS = 5_000;
/** How long a reader keeps asking a closed session that no worker answers before it stops. */
const CLOSED_PATIENCE_MS = 120_000;

/** gRPC DEADLINE_EXCEEDED (4) or UNAVAILABLE (14), anywhere in the cause chain. */
function isTransientQueryFailure(e: unknown): boolean {
  return hasStatus(e, [4, 14]);
}

/** No worker answered: transient, or FAILED_PRECONDITION (9), the server's "no answer in time" for a query. */
function isUnansweredQuery(e: unknown): boolean {
  return hasStatus(e, [4, 9, 14]);
}

/** One of these gRPC status codes anywhere in the cause chain. */
function hasStatus(e: unknown, codes: number[]): boolean {
  for (let c: unknown = e; c; c = (c as { cause?: unknown }).cause) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'number' && codes.includes(code)) return true;
  }
  return false;
}

function queryEvents(handle: WorkflowHandle, after: number): Promise<EventsPage> {
  return handle.query(api.eventsQuery, after < 0 ? {} : { after });
}

async function isClosed(handle: WorkflowHandle): Promise<boolean> {
  const d = await handle.describe();
  return d.status.name !== 'RUNNING' && d.status.name !== 'CONTINUED_AS_NEW';
}

/** Events with after < seq < before, read from the runs before the latest, oldest first. */
async function* earlierRuns(client: Client, sessionId: string, after: number, before: number): AsyncGenerator<SessionEvent> {
  const runs: { runId: string; start: number }[] = [];
  for await (const w of listRuns(client, `WorkflowId = ${quote(sessionId)}`)) {
    runs.push({ runId: w.runId, start: w.startTime.getTime() });
  }
  runs.sort((a, b) => a.start - b.start);
  // Skip the latest run (it is the one that showed the gap); find the newest run that reaches back far enough.
  const previous = runs.slice(0, -1);
  let from = 0;
  for (let i = previous.length - 1; i >= 0; i--) {
    const page = await queryEvents(client.workflow.getHandle(sessionId, previous[i]!.runId), after).catch(() => undefined);
    const head = page?.events[0];
    if (head && head.seq <= after + 1) {
      from = i;
      break;
    }
  }
  for (const run of previous.slice(from)) {
    const handle = client.workflow.getHandle(sessionId, run.runId);
    for (;;) {
      const page = await queryEvents(handle, after).catch(() => undefined);
      const fresh = (page?.events ?? []).filter((e) => e.seq > after && e.seq < before);
      for (const e of fresh) {
        after = e.seq;
        yield e;
      }
      if (fresh.length === 0 || page!.events[page!.events.length - 1]!.seq >= before - 1) break;
    }
  }
}

/** A string literal for a visibility query. */
export function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
