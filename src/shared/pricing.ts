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

const p = (input: number, output: number, cacheRead: number, cacheWrite: number, contextWindow: number): ModelPrice => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  contextWindow,
});

export const DEFAULT_PRICING: PricingTable = {
  'gpt-5': p(1.25, 10, 0.125, 1.25, 400_000),
  'gpt-5-mini': p(0.25, 2, 0.025, 0.25, 400_000),
  'gpt-5-nano': p(0.05, 0.4, 0.005, 0.05, 400_000),
  'gpt-4.1': p(2, 8, 0.5, 2, 1_047_576),
  'gpt-4.1-mini': p(0.4, 1.6, 0.1, 0.4, 1_047_576),
  'gpt-4.1-nano': p(0.1, 0.4, 0.025, 0.1, 1_047_576),
  'gpt-4o': p(2.5, 10, 1.25, 2.5, 128_000),
  'gpt-4o-mini': p(0.15, 0.6, 0.075, 0.15, 128_000),
  o3: p(2, 8, 0.5, 2, 200_000),
  'o4-mini': p(1.1, 4.4, 0.275, 1.1, 200_000),
  'claude-opus-4-5': p(5, 25, 0.5, 6.25, 200_000),
  'claude-opus-4-1': p(15, 75, 1.5, 18.75, 200_000),
  'claude-opus-4': p(15, 75, 1.5, 18.75, 200_000),
  'claude-sonnet-4-5': p(3, 15, 0.3, 3.75, 200_000),
  'claude-sonnet-4': p(3, 15, 0.3, 3.75, 200_000),
  'claude-haiku-4-5': p(1, 5, 0.1, 1.25, 200_000),
  'claude-3-5-haiku': p(0.8, 4, 0.08, 1, 200_000),
};

/** Used for context accounting when a model is not in the table. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * Find a model's price: exact name, else the longest table key that prefixes it (dated
 * snapshots such as `claude-sonnet-4-5-20250929`), after dropping a provider prefix (`openai/`).
 */
export function lookupPrice(model: string, table: PricingTable = DEFAULT_PRICING): ModelPrice | undefined {
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (table[name]) return table[name];
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (name.startsWith(key) && (!best || key.length > best.length)) best = key;
  }
  return best ? table[best] : undefined;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
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
