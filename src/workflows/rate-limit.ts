/**
 * One small workflow per model endpoint and key that holds the fleet's current rate-limit block
 * (ARCHITECTURE.md#rate-limits). A model worker that sees a 429/529 or an exhausted
 * `x-ratelimit-remaining-*` header signals it (signal-with-start); every model worker reads it by
 * query (at most once a second) before starting a call. It closes after an idle hour; the next
 * block starts it again.
 */
import { condition, continueAsNew, setHandler, workflowInfo, allHandlersFinished } from '@temporalio/workflow';
import { blockQuery, blockSignal, type RateLimitBlock } from '../shared/rate-limit';

const IDLE = '1 hour';

export async function modelRateLimit(input: { key: string; block?: RateLimitBlock }): Promise<void> {
  let block: RateLimitBlock = input.block ?? { untilMs: 0, reason: '' };
  let signals = 0;
  setHandler(blockSignal, (b) => {
    signals++;
    if (typeof b?.untilMs === 'number' && b.untilMs > block.untilMs) block = { untilMs: b.untilMs, reason: String(b.reason ?? '') };
  });
  setHandler(blockQuery, () => block);
  for (;;) {
    const seen = signals;
    const active = await condition(() => signals !== seen || workflowInfo().continueAsNewSuggested, IDLE);
    if (!active) return;
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof modelRateLimit>({ key: input.key, block });
    }
  }
}
