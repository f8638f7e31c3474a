/**
 * What answering a session's requests from a program shares, whether the answer is a
 * `canUseTool` decision (permissions.ts) or callback hooks' results (hook-callbacks.ts): each
 * request answered once, the answers in flight awaited together, and an answer sent until it is
 * taken or refused.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';

export interface Responder<R> {
  /** Answer this request (once per key) unless `signal` has aborted. */
  handle(request: R): void;
  /** Every answer started so far has been sent, refused, or abandoned. */
  settled(): Promise<void>;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A responder that runs `answerOne` once per `keyOf(request)` and tracks what is in flight. */
export function onceEachResponder<R>(
  keyOf: (request: R) => string,
  answerOne: (request: R) => Promise<void>,
  signal: AbortSignal,
): Responder<R> {
  const started = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  return {
    handle(request) {
      const key = keyOf(request);
      if (signal.aborted || started.has(key)) return;
      started.add(key);
      const p = answerOne(request).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    async settled() {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * Send one answer by `respond`: refused (answered already, timed out, the session moved on or is
 * gone) is fine; a lost connection is retried with backoff while the session is open.
 */
export async function sendAnswer(respond: () => Promise<unknown>, isOpen: () => Promise<boolean>, signal: AbortSignal): Promise<void> {
  for (let delay = 250; !signal.aborted; delay = Math.min(delay * 2, 5_000)) {
    try {
      await respond();
      return;
    } catch (e) {
      if (e instanceof WorkflowUpdateFailedError || e instanceof WorkflowNotFoundError) return;
      if (!(await isOpen().catch(() => true))) return;
      await sleep(delay);
    }
  }
}

/**
 * Hand `responder` each request `pending()` lists, every `pollMs` (default 500), until `signal`
 * aborts or the session closes; then wait for the answers in flight.
 */
export async function answerPending<R>(
  pending: () => Promise<R[]>,
  isOpen: () => Promise<boolean>,
  responder: Responder<R>,
  opts: { signal: AbortSignal; pollMs?: number },
): Promise<void> {
  const { signal } = opts;
  while (!signal.aborted) {
    try {
      for (const request of await pending()) responder.handle(request);
    } catch {
      // No worker answered the query in time: the requests wait in the workflow; ask again.
    }
    if (!(await isOpen().catch(() => true))) break;
    await Promise.race([sleep(opts.pollMs ?? 500), new Promise((r) => signal.addEventListener('abort', r, { once: true }))]);
  }
  await responder.settled();
}
