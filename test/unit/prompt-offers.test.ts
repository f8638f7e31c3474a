/** The store of prompts a workflow offers to model calls on its own worker (ARCHITECTURE.md#prompt-offer). */
import { PromptOffers } from '../../src/activities/model/prompt-offers';
import type { PromptOffer } from '../../src/shared/prompt-offer';

const offer = (over: Partial<PromptOffer> = {}): PromptOffer => ({
  runId: 'run-1',
  lastSeq: 7,
  upTo: 3,
  withTools: true,
  system: 'sys',
  tools: [],
  messages: [{ role: 'user', content: 'hi' }],
  ...over,
});
const claim = { runId: 'run-1', upTo: 3, withTools: true, promptSeq: 7 };

describe('PromptOffers', () => {
  test('a call takes the offer made for it, once', () => {
    const offers = new PromptOffers();
    offers.offer(offer());
    expect(offers.take(claim)).toMatchObject({ system: 'sys', messages: [{ role: 'user', content: 'hi' }] });
    expect(offers.take(claim)).toBeUndefined();
    expect(offers.stats).toEqual({ offered: 1, taken: 1 });
  });

  test.each([
    ['another event sequence (an earlier call never taken)', { promptSeq: 6 }],
    ['another message count', { upTo: 4 }],
    ['without tools', { withTools: false }],
    ['another run', { runId: 'run-2' }],
  ])('a claim with %s finds nothing', (_name, over) => {
    const offers = new PromptOffers();
    offers.offer(offer());
    expect(offers.take({ ...claim, ...over })).toBeUndefined();
    expect(offers.stats.taken).toBe(0);
  });

  test('a newer offer for the run replaces the older one', () => {
    const offers = new PromptOffers();
    offers.offer(offer());
    offers.offer(offer({ lastSeq: 9, upTo: 5 }));
    expect(offers.size).toBe(1);
    expect(offers.take(claim)).toBeUndefined();
    expect(offers.take({ ...claim, promptSeq: 9, upTo: 5 })).toBeDefined();
  });

  test('offers expire after the TTL and the oldest go past maxOffers', () => {
    const offers = new PromptOffers({ ttlMs: 1_000, maxOffers: 2 });
    offers.offer(offer({ runId: 'a' }), 0);
    offers.offer(offer({ runId: 'b' }), 10);
    offers.offer(offer({ runId: 'c' }), 20);
    expect(offers.size).toBe(2);
    expect(offers.take({ ...claim, runId: 'a' }, 30)).toBeUndefined();
    expect(offers.take({ ...claim, runId: 'b' }, 1_011)).toBeUndefined();
    expect(offers.take({ ...claim, runId: 'c' }, 1_011)).toBeDefined();
  });
});
