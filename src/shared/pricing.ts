/**
 * USD per million tokens and context windows for current OpenAI and Anthropic models.
 * Applied on the worker (inside `callModel`), so an operator can override it with a JSON file
 * (`DURABLE_AGENT_PRICING_FILE`) without touching workflow code; the cost is then recorded in
 * history with the reply and replays unchanged.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  contextWindow: number;
}

export type PricingTable = Record<string, ModelPrice>;

import { CONTEXT_WINDOWS, DEFAULT_CONTEXT_WINDOW, lookupByModelName } from './context-windows';
import type { TokenCounts } from './messages';

export { DEFAULT_CONTEXT_WINDOW };

/** USD per million tokens: input, output, cache read, cache write. */
const PRICES: Record<string, [number, number, number, number]> = {
  'gpt-5': [1.25, 10, 0.125, 1.25],
  'gpt-5-mini': [0.25, 2, 0.025, 0.25],
  'gpt-5-nano': [0.05, 0.4, 0.005, 0.05],
  'gpt-4.1': [2, 8, 0.5, 2],
  'gpt-4.1-mini': [0.4, 1.6, 0.1, 0.4],
  'gpt-4.1-nano': [0.1, 0.4, 0.025, 0.1],
  'gpt-4o': [2.5, 10, 1.25, 2.5],
  'gpt-4o-mini': [0.15, 0.6, 0.075, 0.15],
  o3: [2, 8, 0.5, 2],
  'o4-mini': [1.1, 4.4, 0.275, 1.1],
  'claude-opus-4-5': [5, 25, 0.5, 6.25],
  'claude-opus-4-1': [15, 75, 1.5, 18.75],
  'claude-opus-4': [15, 75, 1.5, 18.75],
  'claude-sonnet-4-5': [3, 15, 0.3, 3.75],
  'claude-sonnet-4': [3, 15, 0.3, 3.75],
  'claude-haiku-4-5': [1, 5, 0.1, 1.25],
  'claude-3-5-haiku': [0.8, 4, 0.08, 1],
};

export const DEFAULT_PRICING: PricingTable = Object.fromEntries(
  Object.entries(PRICES).map(([model, [input, output, cacheRead, cacheWrite]]) => [
    model,
    { input, output, cacheRead, cacheWrite, contextWindow: CONTEXT_WINDOWS[model] ?? DEFAULT_CONTEXT_WINDOW },
  ]),
);

/** Find a model's price (see `lookupByModelName`). */
export function lookupPrice(model: string, table: PricingTable = DEFAULT_PRICING): ModelPrice | undefined {
  return lookupByModelName(model, table);
}

/** Cost of one response; `inputTokens` excludes cached tokens (they are priced separately). */
export function costOf(tokens: TokenCounts, price: ModelPrice | undefined): number {
  if (!price) return 0;
  return (
    (tokens.inputTokens * price.input +
      tokens.outputTokens * price.output +
      tokens.cacheReadInputTokens * price.cacheRead +
      tokens.cacheCreationInputTokens * price.cacheWrite) /
    1_000_000
  );
}
