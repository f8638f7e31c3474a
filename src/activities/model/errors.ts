/**
 * Classify provider failures into `ApplicationFailure` types. Temporal owns the retries
 * (ARCHITECTURE.md#temporal-owns-retries): the `openai` client never retries, and a retryable
 * failure carries the provider's `retry-after` as `nextRetryDelay`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';

export interface Classified {
  failure: ApplicationFailure;
  status: number | null;
  retryable: boolean;
  retryAfterMs?: number;
}

/** `retry-after-ms`, or `retry-after` as seconds or an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, nowMs = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

const NON_RETRYABLE: Record<number, string> = {
  400: 'ModelBadRequest',
  401: 'ModelAuth',
  403: 'ModelPermission',
  404: 'ModelNotFound',
  413: 'ContextOverflow',
  422: 'ModelUnprocessable',
};

function looksLikeContextOverflow(message: string): boolean {
  return /context[_ ]length|context window|maximum context|too many tokens|prompt is too long/i.test(message);
}

export function classifyModelError(err: unknown): Classified {
  // Already classified by the caller (e.g. an empty summary): keep its type and retryability.
  if (err instanceof ApplicationFailure) return { failure: err, status: null, retryable: !err.nonRetryable };
  if (err instanceof APIError && !(err instanceof APIConnectionError) && !(err instanceof APIUserAbortError)) {
    const status = err.status ?? null;
    const message = err.message;
    if (status !== null && NON_RETRYABLE[status]) {
      const type = status === 400 && looksLikeContextOverflow(err.message) ? 'ContextOverflow' : NON_RETRYABLE[status]!;
      return { failure: ApplicationFailure.nonRetryable(message, type), status, retryable: false };
    }
    const type = status === 429 ? 'ModelRateLimited' : status === 529 || status === 503 ? 'ModelOverloaded' : 'ModelServerError';
    const after = retryAfterMs(err.headers);
    return {
      failure: ApplicationFailure.create({ message, type, nextRetryDelay: after }),
      status,
      retryable: true,
      retryAfterMs: after,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  const type = err instanceof APIConnectionError ? 'ModelConnectionError' : 'ModelStreamError';
  return { failure: ApplicationFailure.create({ message, type }), status: null, retryable: true };
}

/** The delay Temporal will wait before the next attempt, for the `api_retry` event. */
export function expectedBackoffMs(attempt: number, initialMs: number, maxMs: number, retryAfter?: number): number {
  if (retryAfter !== undefined) return retryAfter;
  return Math.min(initialMs * 2 ** (attempt - 1), maxMs);
}
