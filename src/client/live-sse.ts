/**
 * Reading a model worker's live stream (ARCHITECTURE.md#live-tokens): server-sent events over
 * plain HTTP, one JSON frame per event, and finding the stream's URL in the heartbeat details of
 * a session's pending model call.
 */
import http from 'node:http';
import https from 'node:https';
import type { temporal } from '@temporalio/proto';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { LiveFrame, LiveHeartbeat } from '../shared/stream-events';

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
      let buf = '';
      res.on('data', (text: string) => {
        buf += text;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (!data) continue;
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

type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** The live stream URL a pending model call's heartbeat names, if any. */
export async function liveUrlOf(converter: LoadedDataConverter, activity: PendingActivity): Promise<string | undefined> {
  const payloads = activity.heartbeatDetails?.payloads;
  if (!payloads?.length) return undefined;
  const details = await decodeFromPayloadsAtIndex<LiveHeartbeat | undefined>(converter, 0, payloads).catch(() => undefined);
  const url = details && typeof details === 'object' ? details.live : undefined;
  return typeof url === 'string' && /^https?:\/\//.test(url) ? url : undefined;
}
