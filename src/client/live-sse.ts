/**
 * Reading a model worker's live stream (ARCHITECTURE.md#live-tokens): server-sent events over
 * plain HTTP, one JSON frame per event, and finding the stream's URL from a session's pending model
 * call: the identity of the worker running it, or (workers that predate that) its heartbeat details.
 */
import http from 'node:http';
import https from 'node:https';
import type { Client } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { temporal as proto } from '@temporalio/proto';
import { SseParser } from '../shared/sse';
import { LIVE_ACTIVITY_TYPES, LIVE_IDENTITY_MARK, liveStreamKey, type LiveFrame, type LiveHeartbeat } from '../shared/stream-events';

/** Longer than the model worker's stream watchdog (120 s): silence past it means the worker is gone. */
const SILENT_MS = 150_000;

/** A stream that finished or expired before it was read: nothing to show, nothing wrong. */
export class LiveStreamGone extends Error {}

/**
 * Read the frames of the stream at `url` until it ends, the connection closes or `signal` aborts.
 * Rejects when the stream cannot be read (LiveStreamGone for one no longer held).
 */
export function readLiveStream(url: string, signal: AbortSignal, onFrame: (frame: LiveFrame) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, { signal, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        const e = res.statusCode === 404 ? new LiveStreamGone('live stream gone') : new Error(`live stream ${url}: HTTP ${res.statusCode}`);
        return reject(e);
      }
      res.setEncoding('utf8');
      const events = new SseParser();
      res.on('data', (text: string) => {
        for (const data of events.push(text)) {
          try {
            onFrame(JSON.parse(data) as LiveFrame);
          } catch (e) {
            req.destroy(e as Error);
          }
        }
      });
      res.on('close', () => resolve());
      res.on('error', (e) => (signal.aborted ? resolve() : reject(e)));
    });
    req.on('error', (e) => (signal.aborted ? resolve() : reject(new Error(`live stream ${url}: ${e.message}`))));
    req.setTimeout(SILENT_MS, () => req.destroy(new Error(`silent for ${SILENT_MS / 1000} s`)));
  });
}

type PendingActivity = proto.api.workflow.v1.IPendingActivityInfo;

/** The live stream URL a pending model call's heartbeat names, if any. */
export async function liveUrlOf(converter: LoadedDataConverter, activity: PendingActivity): Promise<string | undefined> {
  const payloads = activity.heartbeatDetails?.payloads;
  if (!payloads?.length) return undefined;
  const details = await decodeFromPayloadsAtIndex<LiveHeartbeat | undefined>(converter, 0, payloads).catch(() => undefined);
  const url = details && typeof details === 'object' ? details.live : undefined;
  return typeof url === 'string' && /^https?:\/\//.test(url) ? url : undefined;
}

/**
 * The live stream of a pending model call, from the identity of the worker that took it (its
 * ` live=<base>` mark, LIVE_IDENTITY_MARK): the running attempt's, or while a retry waits, the
 * attempt that was cut. Undefined for other activities and workers that serve no streams.
 */
export function liveUrlFromIdentity(runId: string, activity: PendingActivity): string | undefined {
  if (!LIVE_ACTIVITY_TYPES.has(activity.activityType?.name ?? '') || !activity.activityId) return undefined;
  const identity = activity.lastWorkerIdentity ?? '';
  const at = identity.lastIndexOf(LIVE_IDENTITY_MARK);
  if (at < 0) return undefined;
  const base = identity.slice(at + LIVE_IDENTITY_MARK.length);
  if (!/^https?:\/\/\S+\/$/.test(base)) return undefined;
  const started = activity.state === proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  const attempt = (activity.attempt ?? 1) - (started ? 0 : 1);
  return attempt >= 1 ? `${base}${liveStreamKey(runId, activity.activityId, attempt)}` : undefined;
}

type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/** Most pages of history one look reads (newest first); calls older than that were never live. */
const MAX_PAGES = 5;
const PAGE_SIZE = 100;

export interface FinishedCalls {
  /** The live streams of model calls that completed recently, newest first. */
  urls: string[];
  /** The newest history event read: the next look stops there. */
  newestEventId: number;
}

/**
 * The live streams of the model calls in run `runId` that completed within the last `withinMs`
 * (or since event `afterEventId`), read from the run's history newest first: a call too short for
 * a look at the pending activities to find is still named there — its activity id, the attempt
 * that completed and the identity (live base URL) of the worker that ran it.
 */
export async function finishedCallStreams(
  client: Client,
  workflowId: string,
  runId: string,
  opts: { withinMs: number; afterEventId?: number },
): Promise<FinishedCalls> {
  const oldest = Date.now() - opts.withinMs;
  const after = opts.afterEventId ?? 0;
  const calls = new Calls(runId);
  let newestEventId = after;
  let token: Uint8Array | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: PAGE_SIZE,
      ...(token ? { nextPageToken: token } : {}),
    });
    for (const ev of res.history?.events ?? []) {
      const id = Number(ev.eventId ?? 0);
      newestEventId = Math.max(newestEventId, id);
      // Past what was read before, or too old to be kept: done, once each call found has its start.
      if ((id <= after || eventMs(ev) < oldest) && calls.complete) return { urls: calls.urls, newestEventId };
      calls.read(ev, id);
    }
    token = res.nextPageToken?.length ? res.nextPageToken : undefined;
    if (!token) break;
  }
  return { urls: calls.urls, newestEventId };
}

/** Completed activities met reading history backwards: completion, then its start, then its scheduling. */
class Calls {
  readonly urls: string[] = [];
  private readonly byStart = new Map<number, { identity: string; attempt: number }>();
  private readonly bySchedule = new Map<number, { identity: string; attempt: number }>();
  constructor(private readonly runId: string) {}

  get complete(): boolean {
    return this.bySchedule.size === 0;
  }

  read(ev: HistoryEvent, id: number): void {
    const completed = ev.activityTaskCompletedEventAttributes;
    if (completed) {
      const call = { identity: '', attempt: 1 };
      this.byStart.set(Number(completed.startedEventId ?? 0), call);
      this.bySchedule.set(Number(completed.scheduledEventId ?? 0), call);
      return;
    }
    const start = ev.activityTaskStartedEventAttributes;
    const call = start ? this.byStart.get(id) : undefined;
    if (start && call) {
      call.identity = start.identity ?? '';
      call.attempt = start.attempt ?? 1;
      this.byStart.delete(id);
      return;
    }
    const scheduled = ev.activityTaskScheduledEventAttributes;
    const done = scheduled ? this.bySchedule.get(id) : undefined;
    if (!scheduled || !done) return;
    this.bySchedule.delete(id);
    const url = liveUrlFromIdentity(this.runId, {
      activityType: scheduled.activityType,
      activityId: scheduled.activityId,
      attempt: done.attempt,
      lastWorkerIdentity: done.identity,
      state: proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
    });
    if (url) this.urls.push(url);
  }
}

function eventMs(ev: HistoryEvent): number {
  const t = ev.eventTime;
  return t ? Number(t.seconds ?? 0) * 1_000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
}
