/**
 * Rate limits per model endpoint (ARCHITECTURE.md#rate-limits). One `EndpointLimiter` per endpoint
 * and key, shared by every model call of the worker process: a 429/529 or an exhausted
 * `x-ratelimit-remaining-*` header blocks all of them until the advertised reset, instead of each
 * session discovering the limit by failing; configured caps (concurrent calls, requests/min,
 * tokens/min) hold calls back before they are sent. Across worker processes the blocks are shared
 * through a limiter workflow (src/workflows/rate-limit/rate-limit.ts) by `FleetLimitSync`.
 */
import { createHash } from 'node:crypto';
import { afterLimited, afterSuccesses, INITIAL_LIMIT, type FleetShare } from '../../shared/rate-limit';

export interface RateLimitCaps {
  /** Model calls in flight at once on this worker (per endpoint). */
  maxConcurrent?: number;
  /** Requests started per rolling minute. */
  requestsPerMinute?: number;
  /** Tokens (prompt estimate + output cap, corrected by usage) per rolling minute. */
  tokensPerMinute?: number;
  /** Model calls in flight at once across the whole fleet (divided by the limiter workflow). */
  fleetMaxConcurrent?: number;
}

/** A call's place in the limiter, from `acquire` to `release`. */
export interface Slot {
  /** The call ended; `usedTokens` when it ended well (corrects the tokens-per-minute estimate). */
  release(usedTokens?: number): void;
  /** When the call started (epoch ms). */
  readonly startedAt: number;
  /** The endpoint answered it (a 2xx): it is being served. */
  served(): void;
}

/** Why a call is held back; the session sees it in its `system/api_retry` event. */
export interface WaitReason {
  reason: 'rate_limited' | 'max_concurrent' | 'requests_per_minute' | 'tokens_per_minute';
  /** Expected wait in ms (0 when unknown: a concurrency slot frees when another call ends). */
  delayMs: number;
  message: string;
}

const MINUTE = 60_000;

/** Milliseconds until a reset header's moment: `1.5s`, `6m0s`, `200ms`, seconds, or an HTTP date. */
export function parseResetMs(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.max(0, Number(v) * 1000);
  const parts = [...v.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length > 0 && parts.map((p) => p[0]).join('') === v) {
    const unit: Record<string, number> = { ms: 1, s: 1000, m: MINUTE, h: 60 * MINUTE };
    return parts.reduce((n, p) => n + Number(p[1]) * unit[p[2]!]!, 0);
  }
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** What a response's headers say about the limit: how long every call must wait (or nothing). */
export function blockFromHeaders(status: number | null, headers: Headers | undefined, nowMs = Date.now()): number | undefined {
  if (!headers) return status === 429 || status === 529 ? 1_000 : undefined;
  const ms = headers.get('retry-after-ms');
  const retryAfter = ms && Number.isFinite(Number(ms)) ? Math.max(0, Number(ms)) : parseResetMs(headers.get('retry-after'), nowMs);
  const exhausted = (kind: 'requests' | 'tokens') => {
    const left = headers.get(`x-ratelimit-remaining-${kind}`);
    return left !== null && Number(left) <= 0 ? (parseResetMs(headers.get(`x-ratelimit-reset-${kind}`), nowMs) ?? 1_000) : undefined;
  };
  const resets = [exhausted('requests'), exhausted('tokens')].filter((x): x is number => x !== undefined);
  if (status === 429 || status === 529) resets.push(retryAfter ?? 1_000);
  return resets.length ? Math.max(...resets) : undefined;
}

/** The endpoint and key as one opaque id: the key is hashed, it never leaves the worker. */
export function endpointKey(baseURL: string | undefined, apiKey: string | undefined): string {
  const url = (baseURL ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  return createHash('sha256')
    .update(`${url}\u0000${apiKey ?? ''}`)
    .digest('hex')
    .slice(0, 16);
}

/** After a block, one more call may start per this many ms (up to the limit): held calls leave gradually. */
export const RAMP_STEP_MS = 100;

export class EndpointLimiter {
  /** Epoch ms until which no call may start (learned from headers, here or from the fleet). */
  blockedUntil = 0;
  blockedReason = '';
  /**
   * The concurrency the endpoint is thought to serve, learned here (src/shared/rate-limit.ts
   * `afterLimited`/`afterSuccesses`) and replaced by this worker's share of the fleet's whenever
   * the limiter workflow answers. Off: `adaptive` false.
   */
  learned = INITIAL_LIMIT;
  private ceiling: number | null = null;
  private lastCutAt = 0;
  /** This worker's part of the fleet cap (`caps.fleetMaxConcurrent`): none until the fleet granted one. */
  fleetGrant: number | undefined;
  /** Until when the grant holds without a new answer from the fleet (epoch ms). */
  grantValidUntil = 0;
  /** 429s this worker cut for since its last report to the fleet. */
  pending = { limited: 0 };
  /** The fleet's cut count last heard (-1: never heard; the first answer only tells where the count is). */
  private fleetCuts = -1;
  private inFlightNow = 0;
  private waitingNow = 0;
  /** Calls in flight that the endpoint answered 2xx: what it is serving now. */
  private servingNow = 0;
  private starts: number[] = [];
  private tokens: { at: number; n: number; forgotten?: boolean }[] = [];
  /** The sum of `tokens[].n`, kept as entries come and go (a check must not walk a minute of calls). */
  private tokensInWindow = 0;
  private wakers = new Set<() => void>();
  /** Called when a call starts waiting (the fleet sync starts if it is not running). */
  onDemand: (() => void) | undefined;
  /** Calls held back so far, and 429/529 answers seen (for benchmarks and logs). */
  readonly stats = { waits: 0, limited: 0, calls: 0, cuts: 0 };

  constructor(
    readonly key: string,
    public caps: RateLimitCaps = {},
    /** Learn the endpoint's concurrency (on unless turned off). */
    public adaptive = true,
  ) {}

  get inFlight(): number {
    return this.inFlightNow;
  }
  get waiting(): number {
    return this.waitingNow;
  }

  /**
   * A response arrived (or failed with a status): learn any block its headers announce, and on a
   * 429/529 lower the learned limit (once per overshoot: a call that started before the last cut
   * belongs to the burst already answered). Returns a new block to share.
   */
  observe(
    status: number | null,
    headers: Headers | undefined,
    nowMs = Date.now(),
    startedAt = nowMs,
  ): { untilMs: number; reason: string } | undefined {
    if (status === 429 || status === 529) {
      this.stats.limited++;
      if (startedAt >= this.lastCutAt) this.cut(nowMs);
    }
    const ms = blockFromHeaders(status, headers, nowMs);
    if (ms === undefined) return undefined;
    const reason = status === 429 || status === 529 ? `HTTP ${status}` : 'x-ratelimit-remaining reached 0';
    return this.block(nowMs + ms, reason) ? { untilMs: nowMs + ms, reason } : undefined;
  }

  private cut(nowMs: number): void {
    this.stats.cuts++;
    this.pending.limited++;
    this.lastCutAt = nowMs;
    ({ limit: this.learned, ceiling: this.ceiling } = afterLimited({ limit: this.learned, ceiling: this.ceiling }, this.servingNow));
  }

  /**
   * The fleet's answer: a starting part when this worker joins, a cut when another worker met a
   * 429 (unless this one reported its own: the same overshoot), its part of the fleet cap.
   */
  applyShare(share: Pick<FleetShare, 'start' | 'cuts' | 'grant' | 'leaseMs' | 'slowStart'>, sentAt: number, reportedCut: boolean): void {
    if (this.adaptive && share.start !== undefined) {
      this.learned = share.start;
      this.ceiling = share.slowStart ? null : share.start + 1;
    }
    if (this.adaptive && share.cuts > this.fleetCuts && !reportedCut && this.fleetCuts >= 0)
      ({ limit: this.learned, ceiling: this.ceiling } = afterLimited({ limit: this.learned, ceiling: this.ceiling }));
    this.fleetCuts = share.cuts;
    if (share.grant !== undefined) {
      this.fleetGrant = share.grant;
      // Counted from when the report was sent: the fleet counts its lease from when it read it, later.
      this.grantValidUntil = sentAt + share.leaseMs * 0.8;
    }
    this.wake();
  }

  /** Block until `untilMs` (the later block wins). Returns whether it extended the block. */
  block(untilMs: number, reason: string): boolean {
    if (untilMs <= this.blockedUntil) return false;
    this.blockedUntil = untilMs;
    this.blockedReason = reason;
    return true;
  }

  /** How many calls may be in flight now, and what sets it. */
  concurrency(nowMs = Date.now()): { n: number; why: string } {
    let best = { n: Infinity, why: '' };
    const consider = (n: number | undefined, why: string) => {
      if (n !== undefined && n < best.n) best = { n, why };
    };
    consider(this.caps.maxConcurrent, `cap ${this.caps.maxConcurrent}`);
    if (this.caps.fleetMaxConcurrent) {
      const live = this.fleetGrant !== undefined && nowMs < this.grantValidUntil;
      consider(
        live ? this.fleetGrant : 0,
        live
          ? `this worker's share ${this.fleetGrant} of the fleet cap ${this.caps.fleetMaxConcurrent}`
          : `waiting for a share of the fleet cap ${this.caps.fleetMaxConcurrent}`,
      );
    }
    if (this.adaptive) {
      const learned = Math.max(1, Math.floor(this.learned));
      consider(learned, `limit ${learned} learned from the endpoint`);
      // Just after a block, calls leave one per step, not all at once.
      const sinceBlock = nowMs - this.blockedUntil;
      if (this.blockedUntil > 0 && sinceBlock < learned * RAMP_STEP_MS)
        consider(1 + Math.floor(sinceBlock / RAMP_STEP_MS), `leaving a block gradually (limit ${learned})`);
    }
    return best;
  }

  /** Why a call of `estTokens` cannot start now, or undefined if it can. */
  check(estTokens: number, nowMs = Date.now()): WaitReason | undefined {
    if (this.blockedUntil > nowMs) {
      const delayMs = this.blockedUntil - nowMs;
      return { reason: 'rate_limited', delayMs, message: `the provider's rate limit (${this.blockedReason}) resets in ${delayMs} ms` };
    }
    const { requestsPerMinute, tokensPerMinute } = this.caps;
    const c = this.concurrency(nowMs);
    if (this.inFlightNow >= c.n) {
      return { reason: 'max_concurrent', delayMs: 0, message: `${this.inFlightNow} model calls in flight (${c.why})` };
    }
    this.forgetBefore(nowMs - MINUTE);
    if (requestsPerMinute && this.starts.length >= requestsPerMinute) {
      return {
        reason: 'requests_per_minute',
        delayMs: this.starts[0]! + MINUTE - nowMs,
        message: `${this.starts.length} requests in the last minute (cap ${requestsPerMinute})`,
      };
    }
    const used = this.tokensInWindow;
    if (tokensPerMinute && used > 0 && used + estTokens > tokensPerMinute) {
      return {
        reason: 'tokens_per_minute',
        delayMs: this.tokens[0]!.at + MINUTE - nowMs,
        message: `${used} tokens in the last minute (cap ${tokensPerMinute})`,
      };
    }
    return undefined;
  }

  /** Drop the calls that started before `cutoffMs` (both lists are in start order). */
  private forgetBefore(cutoffMs: number): void {
    while (this.starts.length > 0 && this.starts[0]! <= cutoffMs) this.starts.shift();
    while (this.tokens.length > 0 && this.tokens[0]!.at <= cutoffMs) {
      const gone = this.tokens.shift()!;
      gone.forgotten = true;
      this.tokensInWindow -= gone.n;
    }
  }

  /**
   * Wait until a call of `estTokens` may start, then take its slot. `onWait` is told once per
   * distinct reason; `beat` is called about every second while waiting (activity heartbeat).
   */
  async acquire(
    estTokens: number,
    opts: { signal?: AbortSignal; onWait?: (w: WaitReason) => void; beat?: () => void } = {},
  ): Promise<Slot> {
    let told = '';
    this.waitingNow++;
    try {
      this.onDemand?.();
      for (let why = this.check(estTokens); why; why = this.check(estTokens)) {
        if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
        // A block about to expire is not worth an event (a retry timed to the provider's own retry-after).
        if (why.reason !== told && !(why.reason === 'rate_limited' && why.delayMs <= 500)) {
          told = why.reason;
          this.stats.waits++;
          opts.onWait?.(why);
        }
        opts.beat?.();
        await this.sleep(Math.min(why.delayMs || 1_000, 1_000), opts.signal);
      }
    } finally {
      this.waitingNow--;
    }
    const now = Date.now();
    this.inFlightNow++;
    this.stats.calls++;
    this.starts.push(now);
    const entry: { at: number; n: number; forgotten?: boolean } = { at: now, n: estTokens };
    this.tokens.push(entry);
    this.tokensInWindow += estTokens;
    let released = false;
    let serving = false;
    return {
      startedAt: now,
      served: () => {
        if (released || serving) return;
        serving = true;
        this.servingNow++;
      },
      release: (usedTokens) => {
        if (released) return;
        released = true;
        if (serving) this.servingNow--;
        // All of the limit in use, or calls waiting for it: a success is evidence the limit may be higher.
        const saturated = this.adaptive && (this.waitingNow > 0 || this.inFlightNow >= Math.floor(this.learned));
        this.inFlightNow--;
        if (usedTokens !== undefined) {
          // Still in the window: the sum follows the correction (an entry already forgotten is not counted).
          if (!entry.forgotten) this.tokensInWindow += usedTokens - entry.n;
          entry.n = usedTokens;
          if (saturated && now >= this.lastCutAt) this.grow();
        }
        this.wake();
      },
    };
  }

  private grow(): void {
    ({ limit: this.learned, ceiling: this.ceiling } = afterSuccesses({ limit: this.learned, ceiling: this.ceiling }, 1));
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }

  private sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

const limiters = new Map<string, EndpointLimiter>();

/** The process's limiter for an endpoint and key (every worker of the process shares it). */
export function limiterFor(baseURL: string | undefined, apiKey: string | undefined, caps: RateLimitCaps = {}): EndpointLimiter {
  const key = endpointKey(baseURL, apiKey);
  let l = limiters.get(key);
  if (!l) limiters.set(key, (l = new EndpointLimiter(key, caps)));
  else if (Object.keys(caps).length > 0) l.caps = caps;
  return l;
}

/** Caps from the worker's environment: DURABLE_AGENT_MODEL_MAX_CONCURRENT, _RPM, _TPM, and DURABLE_AGENT_FLEET_MAX_CONCURRENT. */
export function capsFromEnv(env: Record<string, string | undefined>): RateLimitCaps {
  const num = (name: string): number | undefined => {
    const v = env[name]?.trim();
    if (!v) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: expected a whole number ≥ 1, got '${v}'`);
    return n;
  };
  const caps: RateLimitCaps = {};
  const c = num('DURABLE_AGENT_MODEL_MAX_CONCURRENT');
  const r = num('DURABLE_AGENT_MODEL_RPM');
  const t = num('DURABLE_AGENT_MODEL_TPM');
  const f = num('DURABLE_AGENT_FLEET_MAX_CONCURRENT');
  if (c) caps.maxConcurrent = c;
  if (f) caps.fleetMaxConcurrent = f;
  if (r) caps.requestsPerMinute = r;
  if (t) caps.tokensPerMinute = t;
  return caps;
}

/** Whether header-driven limiting is on (DURABLE_AGENT_MODEL_RATE_LIMIT=0 turns it off, for comparisons). */
export function limitingFromEnv(env: Record<string, string | undefined>): boolean {
  const v = (env.DURABLE_AGENT_MODEL_RATE_LIMIT ?? '').trim().toLowerCase();
  return !(v === '0' || v === 'false' || v === 'off' || v === 'no');
}
