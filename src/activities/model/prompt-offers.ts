/**
 * Prompts offered by this process's workflow worker for model calls it just scheduled
 * (ARCHITECTURE.md#prompt-offer). A call run here takes its prompt from memory instead of a
 * query round trip; a call run anywhere else, a retry, or a call scheduled while its workflow was
 * being replayed finds nothing and reads by query as before.
 */
import type { PromptOffer } from '../../shared/prompt-offer';

export interface PromptOffersOptions {
  /** Drop an offer no call has taken after this long (default 10 s: a call starts within milliseconds on a live worker). */
  ttlMs?: number;
  /** At most this many offers held (default 2,000); the oldest goes first. */
  maxOffers?: number;
}

/** What a call asks for: its run, the message count and the event its workflow stamped on the input. */
export interface PromptClaim {
  runId: string;
  upTo: number;
  withTools: boolean;
  promptSeq: number;
}

export interface PromptOfferStats {
  /** Offers received from this process's workflows. */
  offered: number;
  /** Model calls that took their prompt from an offer (the rest read it by query). */
  taken: number;
}

export class PromptOffers {
  readonly stats: PromptOfferStats = { offered: 0, taken: 0 };
  private readonly byRun = new Map<string, { offer: PromptOffer; at: number }>();
  private readonly ttlMs: number;
  private readonly maxOffers: number;

  constructor(opts: PromptOffersOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 10_000;
    this.maxOffers = opts.maxOffers ?? 2_000;
  }

  /** One offer per run: a session has at most one model call scheduled at a time. */
  offer(offer: PromptOffer, now = Date.now()): void {
    this.stats.offered++;
    this.byRun.delete(offer.runId);
    this.byRun.set(offer.runId, { offer, at: now });
    this.expire(now);
  }

  /** The offer made for exactly this call, removed from the store; undefined when there is none. */
  take(claim: PromptClaim, now = Date.now()): PromptOffer | undefined {
    this.expire(now);
    const held = this.byRun.get(claim.runId);
    if (!held) return undefined;
    const { offer } = held;
    // The event sequence moves on between any two model calls of a run (each reply is an event),
    // so it tells this call's offer from an earlier one that was never taken.
    if (offer.lastSeq !== claim.promptSeq || offer.upTo !== claim.upTo || offer.withTools !== claim.withTools) return undefined;
    this.byRun.delete(claim.runId);
    this.stats.taken++;
    return offer;
  }

  get size(): number {
    return this.byRun.size;
  }

  private expire(now: number): void {
    // Map order is insertion order, and offer() re-inserts: the oldest come first.
    for (const [runId, { at }] of this.byRun) {
      if (now - at <= this.ttlMs && this.byRun.size <= this.maxOffers) break;
      this.byRun.delete(runId);
    }
  }
}
