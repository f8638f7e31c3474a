/**
 * Live tokens (ARCHITECTURE.md#live-tokens): the Anthropic Messages API stream events the Claude
 * Agent SDK's `stream_event` message carries (`SDKPartialAssistantMessage` in events.ts), and the
 * frames a model worker's live stream sends. None of this is ever in workflow history or in the
 * `events` query.
 */
import type { StopReason, Usage } from './messages';

type CacheCounts = 'cache_creation_input_tokens' | 'cache_read_input_tokens';

/** Usage as Anthropic's stream events carry it: our `Usage`, the cache counts nullable; the fields we cannot know are null. */
export interface StreamUsage extends Omit<Usage, CacheCounts>, Record<CacheCounts, number | null> {
  cache_creation: null;
  fallback_credit: null;
  inference_geo: null;
  iterations: null;
  output_tokens_details: null;
  server_tool_use: null;
  service_tier: null;
  speed: null;
}

interface MessageStartEvent {
  type: 'message_start';
  message: {
    id: string;
    type: 'message';
    role: 'assistant';
    model: string;
    content: [];
    container: null;
    context_management: null;
    diagnostics: null;
    stop_details: null;
    stop_reason: null;
    stop_sequence: null;
    usage: StreamUsage;
  };
}

interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: { type: 'text'; text: ''; citations: null } | { type: 'tool_use'; id: string; name: string; input: Record<string, never> };
}

interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: { type: 'text_delta'; text: string } | { type: 'input_json_delta'; partial_json: string };
}

interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: StopReason; stop_sequence: null; stop_details: null; container: null };
  usage: Omit<StreamUsage, 'input_tokens' | 'cache_creation' | 'inference_geo' | 'service_tier' | 'speed'> & {
    input_tokens: number | null;
  };
  context_management: null;
}

interface MessageStopEvent {
  type: 'message_stop';
}

export type StreamEvent =
  MessageStartEvent | ContentBlockStartEvent | ContentBlockDeltaEvent | ContentBlockStopEvent | MessageDeltaEvent | MessageStopEvent;

/**
 * What a model worker's live stream sends, one JSON object per server-sent event: `start` first
 * (the call follows the session's event `afterSeq`), then the call's stream events, then `end`.
 */
export type LiveFrame =
  | { type: 'start'; afterSeq: number }
  | { type: 'event'; event: StreamEvent }
  | { type: 'end'; status: 'completed' | 'failed' | 'cancelled' };

/** The heartbeat details of a model call that streams live: where its stream is served. */
export interface LiveHeartbeat {
  phase: string;
  /** The URL of this attempt's stream (ARCHITECTURE.md#live-tokens). */
  live?: string;
}

/**
 * How long a model worker keeps a finished call's stream (ms): a reader that finds the call only
 * afterwards, in the session's history, still reads it whole.
 */
export const LIVE_STREAM_KEPT_MS = 60_000;

/** The activities whose attempts stream live. */
export const LIVE_ACTIVITY_TYPES: ReadonlySet<string> = new Set(['callModel']);

/**
 * A model worker polls with an identity ending ` live=<base>`, `<base>` being its live server's
 * `…/live/<secret>/`; an attempt's stream is `<base><key>`. So a client finds the stream of a
 * running attempt in `describe` (the pending activity's `lastWorkerIdentity`, its run, activity id
 * and attempt) as soon as the attempt starts, before any heartbeat.
 */
export const LIVE_IDENTITY_MARK = ' live=';

/** The path of one attempt's stream under its worker's base. */
export function liveStreamKey(runId: string, activityId: string, attempt: number): string {
  return [runId, activityId, String(attempt)].map(encodeURIComponent).join('/');
}
