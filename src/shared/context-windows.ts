/**
 * Context windows (tokens) of current OpenAI and Anthropic models, and the model-name lookup the
 * pricing table shares. Kept apart from prices so the workflow bundle, which accounts context
 * before the first reply, carries no prices: those are applied on the worker.
 */

/** Used for context accounting when a model is not in the table. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

export const CONTEXT_WINDOWS: Record<string, number> = {
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  o3: 200_000,
  'o4-mini': 200_000,
  'claude-opus-4-5': 200_000,
  'claude-opus-4-1': 200_000,
  'claude-opus-4': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-3-5-haiku': 200_000,
};

/**
 * A model's entry: exact name, else the longest key that prefixes it (dated snapshots such as
 * `claude-sonnet-4-5-20250929`), after dropping a provider prefix (`openai/`).
 */
export function lookupByModelName<T>(model: string, table: Record<string, T>): T | undefined {
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (Object.prototype.hasOwnProperty.call(table, name)) return table[name];
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (name.startsWith(key) && (!best || key.length > best.length)) best = key;
  }
  return best ? table[best] : undefined;
}

export function contextWindowOf(model: string): number {
  return lookupByModelName(model, CONTEXT_WINDOWS) ?? DEFAULT_CONTEXT_WINDOW;
}
