import { CONTEXT_WINDOWS, contextWindowOf, DEFAULT_CONTEXT_WINDOW, lookupByModelName } from '../../src/shared/context-windows';
import { costOf, DEFAULT_PRICING, lookupPrice } from '../../src/shared/pricing';

describe('model tables', () => {
  test('every priced model has a context window and every known window has a price', () => {
    expect(Object.keys(DEFAULT_PRICING).sort()).toEqual(Object.keys(CONTEXT_WINDOWS).sort());
  });

  test('no key is empty: an empty key would prefix every model name', () => {
    expect(Object.keys(CONTEXT_WINDOWS).filter((k) => k.trim() === '')).toEqual([]);
  });

  test.each<[string, number, number, number, number, number]>([
    // model, input, output, cache read, cache write (USD per million), context window
    ['gpt-5', 1.25, 10, 0.125, 1.25, 400_000],
    ['gpt-5-mini', 0.25, 2, 0.025, 0.25, 400_000],
    ['gpt-5-nano', 0.05, 0.4, 0.005, 0.05, 400_000],
    ['gpt-4.1', 2, 8, 0.5, 2, 1_047_576],
    ['gpt-4.1-mini', 0.4, 1.6, 0.1, 0.4, 1_047_576],
    ['gpt-4.1-nano', 0.1, 0.4, 0.025, 0.1, 1_047_576],
    ['gpt-4o', 2.5, 10, 1.25, 2.5, 128_000],
    ['gpt-4o-mini', 0.15, 0.6, 0.075, 0.15, 128_000],
    ['o3', 2, 8, 0.5, 2, 200_000],
    ['o4-mini', 1.1, 4.4, 0.275, 1.1, 200_000],
    ['claude-opus-4-5', 5, 25, 0.5, 6.25, 200_000],
    ['claude-opus-4-1', 15, 75, 1.5, 18.75, 200_000],
    ['claude-opus-4', 15, 75, 1.5, 18.75, 200_000],
    ['claude-sonnet-4-5', 3, 15, 0.3, 3.75, 200_000],
    ['claude-sonnet-4', 3, 15, 0.3, 3.75, 200_000],
    ['claude-haiku-4-5', 1, 5, 0.1, 1.25, 200_000],
    ['claude-3-5-haiku', 0.8, 4, 0.08, 1, 200_000],
  ])('%s: $%s in, $%s out, $%s cache read, $%s cache write, %s tokens', (model, input, output, cacheRead, cacheWrite, contextWindow) => {
    expect(lookupPrice(model)).toEqual({ input, output, cacheRead, cacheWrite, contextWindow });
    expect(contextWindowOf(model)).toBe(contextWindow);
  });
});

describe('lookupByModelName', () => {
  const table = { a: 1, 'a-b': 2, 'a-b-c': 3, x: 4 };

  test('an exact name wins, then the longest key that prefixes it', () => {
    expect(lookupByModelName('a-b', table)).toBe(2);
    expect(lookupByModelName('a-b-c-2025', table)).toBe(3);
    expect(lookupByModelName('a-bz', table)).toBe(2);
    expect(lookupByModelName('a-z', table)).toBe(1);
    // Same on the real table, whose shorter keys come first.
    expect(lookupPrice('claude-opus-4-1-20250805')?.input).toBe(15);
    expect(lookupPrice('claude-opus-4-5-20251101')?.input).toBe(5);
    expect(lookupPrice('gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
  });

  test('the longest prefix wins whatever the key order', () => {
    expect(lookupByModelName('a-b-c-1', { 'a-b-c': 3, 'a-b': 2, a: 1 })).toBe(3);
  });

  test('a prefix must start the name, not appear inside it', () => {
    expect(lookupByModelName('za', table)).toBeUndefined();
    expect(lookupByModelName('my-gpt-4o', CONTEXT_WINDOWS)).toBeUndefined();
  });

  test('a provider prefix is dropped, up to the last slash', () => {
    expect(lookupByModelName('openai/a-b', table)).toBe(2);
    expect(lookupByModelName('openrouter/anthropic/x', table)).toBe(4);
    expect(lookupByModelName('x/', table)).toBeUndefined();
  });

  test("the table's own keys only: nothing inherited from Object.prototype", () => {
    expect(lookupByModelName('constructor', table)).toBeUndefined();
    expect(lookupByModelName('toString', {})).toBeUndefined();
    expect(lookupPrice('hasOwnProperty')).toBeUndefined();
  });

  test('unknown models: no price, and the default window', () => {
    expect(lookupPrice('llama-3')).toBeUndefined();
    expect(contextWindowOf('llama-3')).toBe(DEFAULT_CONTEXT_WINDOW);
    expect(DEFAULT_CONTEXT_WINDOW).toBe(128_000);
  });

  test('an operator table is used instead of ours', () => {
    const mine = { 'my-model': { input: 1, output: 1, cacheRead: 1, cacheWrite: 1, contextWindow: 9 } };
    expect(lookupPrice('my-model-v2', mine)?.contextWindow).toBe(9);
    expect(lookupPrice('gpt-4o', mine)).toBeUndefined();
  });
});

describe('costOf', () => {
  const price = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2.5, contextWindow: 1 };
  const none = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

  test('each token kind at its own price, per million', () => {
    expect(costOf({ ...none, inputTokens: 1_000_000 }, price)).toBe(2);
    expect(costOf({ ...none, outputTokens: 500_000 }, price)).toBe(4);
    expect(costOf({ ...none, cacheReadInputTokens: 2_000_000 }, price)).toBe(1);
    expect(costOf({ ...none, cacheCreationInputTokens: 400_000 }, price)).toBe(1);
    expect(
      costOf({ inputTokens: 1_000, outputTokens: 2_000, cacheReadInputTokens: 4_000, cacheCreationInputTokens: 8_000 }, price),
    ).toBeCloseTo(0.04, 12);
  });

  test('an unpriced model costs 0', () => {
    expect(costOf({ ...none, inputTokens: 1_000_000 }, undefined)).toBe(0);
  });
});
