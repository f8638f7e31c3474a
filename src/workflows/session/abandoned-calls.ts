/**
 * Model call attempts abandoned while they ran (ARCHITECTURE.md#abandoned-attempts): the server
 * timed an attempt out and retried it, but the attempt kept streaming until it heard so, or even
 * finished. The provider billed it; its reply is not the session's. The attempt reports itself
 * with the `abandonedCall` signal, and the session counts it apart from the model's own figures
 * (`modelUsage[model].abandonedCalls`) and in its total cost and budget.
 *
 * Deterministic: state changes only when the signal is in history, so a history without one
 * replays exactly as before (no `patched()` needed: no command depends on it).
 */
import type { AbandonedCallNotice } from '../../shared/api';
import type { AbandonedCalls } from '../../shared/messages';
import type { EventLog, LoopState } from './state';

/** Attempts remembered to count each once (a notice resent after a lost answer); far more than retries per call. */
const REMEMBERED_ATTEMPTS = 100;

const usd = (n: number) => `$${n.toFixed(4)}`;

export function emptyAbandonedCalls(): AbandonedCalls {
  return { count: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, costUSD: 0, estimated: 0 };
}

/** Add `b` to `a` (a child's abandoned calls to its parent's, say). */
export function addAbandonedCalls(a: AbandonedCalls, b: AbandonedCalls): void {
  a.count += b.count;
  a.inputTokens += b.inputTokens;
  a.outputTokens += b.outputTokens;
  a.cacheReadInputTokens += b.cacheReadInputTokens;
  a.costUSD += b.costUSD;
  a.estimated += b.estimated;
}

/** Count one abandoned attempt, once; tell the session's readers what it cost. */
export function accountAbandonedCall(state: LoopState, log: EventLog, n: AbandonedCallNotice): void {
  if (!n || typeof n.model !== 'string' || !n.usage || !(n.costUsd >= 0)) {
    log.emit({ type: 'system', subtype: 'warning', message: 'abandonedCall ignored: malformed notice' });
    return;
  }
  const key = `${n.runId}/${n.activityId}/${n.attempt}`;
  const seen = (state.spend.abandonedAttempts ??= []);
  if (seen.includes(key)) return;
  seen.push(key);
  if (seen.length > REMEMBERED_ATTEMPTS) seen.shift();
  const m = (state.spend.perModel[n.model] ??= {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: 0,
    contextWindow: n.contextWindow,
    costBasis: n.costBasis,
  });
  addAbandonedCalls((m.abandonedCalls ??= emptyAbandonedCalls()), {
    count: 1,
    inputTokens: n.usage.input_tokens,
    outputTokens: n.usage.output_tokens,
    cacheReadInputTokens: n.usage.cache_read_input_tokens,
    costUSD: n.costUsd,
    estimated: n.estimated ? 1 : 0,
  });
  state.spend.costUsd += n.costUsd;
  const tokens = `${n.usage.input_tokens + n.usage.cache_read_input_tokens} input and ${n.usage.output_tokens} output tokens`;
  log.emit({
    type: 'system',
    subtype: 'warning',
    message:
      `A ${n.model} call (attempt ${n.attempt}) was timed out by the server and retried while it still ran; ` +
      (n.outcome === 'completed' ? 'it finished anyway, and its reply was dropped. ' : 'it was cancelled. ') +
      `Billed: ${n.estimated ? 'about ' : ''}${tokens}, ${usd(n.costUsd)}, counted in total_cost_usd ` +
      `(modelUsage["${n.model}"].abandonedCalls).`,
  });
}
