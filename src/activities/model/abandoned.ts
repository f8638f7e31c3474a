/**
 * Model call attempts abandoned while they ran (ARCHITECTURE.md#abandoned-attempts). The server
 * times an attempt out when its heartbeats stop reaching it (a stalled or starved worker) and
 * retries the call, while the attempt may still be streaming. The provider bills both. Two ends:
 *
 * - The attempt hears it is gone — the SDK cancels it when a heartbeat is answered NotFound, or
 *   when the worker's own timer runs out without an answer (`cancellationDetails` `notFound` /
 *   `timedOut`, not `cancelRequested`): the stream is aborted at once, and what it had cost
 *   (estimated from the request and the text received, unless the usage had arrived) is reported.
 * - The attempt finishes before it hears: the worker's completion would be refused by the server
 *   and only logged by the SDK. So the attempt completes itself through the client
 *   (`completeAttempt`) — the same one request the worker would make — and sees the refusal;
 *   then it reports its exact usage.
 *
 * A report is the `abandonedCall` signal to the session, which counts it once per attempt
 * (src/workflows/session/abandoned-calls.ts).
 */
import { CompleteAsyncError, Context } from '@temporalio/activity';
import { ActivityNotFoundError, type Client } from '@temporalio/client';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { abandonedCallSignal, type AbandonedCallNotice } from '../../shared/api';
import type { PromptRef } from './prompt-reader';

/** The session run that scheduled the call. */
type Session = Pick<PromptRef, 'sessionId' | 'runId'>;

/** What an abandoned attempt cost, as the session records it. */
export type BilledCall = Pick<AbandonedCallNotice, 'model' | 'usage' | 'costUsd' | 'costBasis' | 'contextWindow'>;

/** Roughly four characters a token: the estimate the rate limiter makes too. */
const CHARS_PER_TOKEN = 4;

/**
 * What one attempt has asked of the provider so far: nothing until its request is sent, then
 * the request's size and what came back, for an estimate if the stream is cut before its usage.
 */
export class AttemptSpend {
  private request: { messages: unknown; tools?: unknown } | undefined;
  private receivedChars = 0;
  private reported: CompletionUsage | undefined;

  /** The request is about to go to the provider. Kept, not measured: only an abandoned attempt needs its size. */
  sent(messages: unknown, tools?: unknown): void {
    this.request = { messages, tools };
  }

  chunk(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.reported = chunk.usage;
    const delta = chunk.choices[0]?.delta;
    this.receivedChars += delta?.content?.length ?? 0;
    for (const tc of delta?.tool_calls ?? [])
      this.receivedChars += (tc.function?.name?.length ?? 0) + (tc.function?.arguments?.length ?? 0);
  }

  /** Whether the provider was asked at all (a call abandoned before that cost nothing). */
  get billed(): boolean {
    return this.request !== undefined;
  }

  /** The provider's usage if it arrived, else an estimate; `estimated` says which. */
  usage(): { usage: CompletionUsage; estimated: boolean } {
    if (this.reported) return { usage: this.reported, estimated: false };
    const r = this.request;
    const requestChars = r ? JSON.stringify(r.messages).length + (r.tools ? JSON.stringify(r.tools).length : 0) : 0;
    const prompt = Math.ceil(requestChars / CHARS_PER_TOKEN);
    const completion = Math.ceil(this.receivedChars / CHARS_PER_TOKEN);
    return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }, estimated: true };
  }
}

/**
 * Was this attempt given up on by the server? Cancelled by the SDK because its heartbeat was
 * answered NotFound or went unanswered past the timeout — not a cancellation the session asked for.
 */
export function abandonedByServer(): boolean {
  const ctx = Context.current();
  if (!ctx.cancellationSignal.aborted) return false;
  const d = ctx.cancellationDetails;
  return !!d && (d.notFound || d.timedOut) && !d.cancelRequested && !d.workerShutdown;
}

/** The client the worker gave this activity; none in the SDK's mock activity environment. */
function clientOrNone(): Client | undefined {
  try {
    return Context.current().client;
  } catch {
    return undefined;
  }
}

/**
 * Tell the session this attempt was abandoned and what it cost. Best effort: a session that has
 * ended cannot count it any more, and the failure is logged, never the call's.
 */
export async function reportAbandoned(
  to: Session,
  billed: BilledCall,
  how: Pick<AbandonedCallNotice, 'outcome' | 'estimated'>,
): Promise<void> {
  const ctx = Context.current();
  const client = clientOrNone();
  const info = ctx.info;
  // Field by field: `billed` may be a whole reply, whose text the session already has no use for.
  const { model, usage, costUsd, costBasis, contextWindow } = billed;
  const notice: AbandonedCallNotice = {
    runId: to.runId,
    activityId: info.activityId,
    attempt: info.attempt,
    model,
    usage,
    costUsd,
    costBasis,
    contextWindow,
    ...how,
  };
  ctx.log.warn('model call attempt abandoned by the server while it ran; reporting its cost to the session', {
    outcome: how.outcome,
    costUsd: billed.costUsd,
  });
  try {
    // No run id: a session that continued as new meanwhile carries its totals into the new run.
    await client?.workflow.getHandle(to.sessionId).signal(abandonedCallSignal, notice);
  } catch (err) {
    ctx.log.warn('could not report an abandoned model call attempt to its session', { error: String(err) });
  }
}

/**
 * Complete this attempt with `result` through the client instead of returning it, so that a
 * completion the server refuses (the attempt was timed out and retried meanwhile) is seen and its
 * cost reported. The same one request the worker would send. Returns `result` for the worker to
 * report as usual when the client cannot (none in a mock environment, or another error).
 */
export async function completeAttempt<T>(to: Session, result: T, billed: BilledCall): Promise<T> {
  const client = clientOrNone();
  if (!client) return result;
  try {
    await client.activity.complete(Context.current().info.taskToken, result);
  } catch (err) {
    if (!(err instanceof ActivityNotFoundError)) return result;
    await reportAbandoned(to, billed, { outcome: 'completed', estimated: false });
  }
  // Completed (or refused): the worker must report nothing more for this attempt.
  throw new CompletedThroughClient(result);
}

/** The attempt was completed through the client: the worker reports nothing; interceptors still read its result (tracing). */
export class CompletedThroughClient<T = unknown> extends CompleteAsyncError {
  constructor(readonly result: T) {
    super();
  }
}
