import { reasoningEffortFor } from '../../src/activities/model';

test.each([
  [null, undefined],
  [undefined, undefined],
  [0, undefined],
  [1, 'low'],
  [4_096, 'low'],
  [4_097, 'medium'],
  [16_384, 'medium'],
  [16_385, 'high'],
  [1_000_000, 'high'],
])('maxThinkingTokens %p → reasoning_effort %p', (tokens, effort) => {
  expect(reasoningEffortFor(tokens)).toBe(effort);
});
