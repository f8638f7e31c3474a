/**
 * Reading a model worker's live stream (ARCHITECTURE.md#live-tokens): server-sent events over
 * plain HTTP, one JSON frame per event, and finding the stream's URL from a session's pending model
 * call: the identity of the worker running it, or (workers that predate that) its heartbeat details.
 */
import http from 'node:http';
import https from 'node:https';
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
