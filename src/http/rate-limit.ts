import { rateLimited } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';

export interface RateLimit {
  /** Tokens added per second; 0 turns the limit off. */
  perSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet spell. */
  burst: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 100_000;
/**
 * A token, less what fractional refills lose to rounding (ten refills of 0.1 add up to 0.9999999999999999):
 * a caller that waits the `Retry-After` it was given, asking on the way, is let through.
 */
const ONE_TOKEN = 1 - 1e-9;
/** What a full map is brought down to: room for a tenth more callers before the next scan. */
const LOW_WATER = 90_000;

/** Token buckets keyed by caller (app key, user, client IP). A refusal carries `Retry-After`. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly clock: Clock,
  ) {}

  get enabled(): boolean {
    return this.limit.perSecond > 0;
  }

  /** Takes one token for `key` or throws 429 `E_RATE_LIMITED`. */
  take(key: string): void {
    if (!this.enabled) return;
    const now = this.clock.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.dropFullBuckets(now);
      bucket = { tokens: this.limit.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = this.tokensAt(bucket, now);
      bucket.updatedAt = now;
    }
    this.refuseBelowOne(bucket.tokens);
    bucket.tokens = Math.max(0, bucket.tokens - 1);
  }

  /** Throws 429 `E_RATE_LIMITED` as `take` would, but takes nothing: for a limit charged only on failure. */
  refuseIfSpent(key: string): void {
    if (!this.enabled) return;
    const bucket = this.buckets.get(key);
    if (bucket) this.refuseBelowOne(this.tokensAt(bucket, this.clock.now()));
  }

  private refuseBelowOne(tokens: number): void {
    if (tokens < ONE_TOKEN) throw rateLimited((ONE_TOKEN - tokens) / this.limit.perSecond);
  }

  /** The bucket's tokens at `now`. A clock stepped back refills nothing (rather than draining the bucket). */
  private tokensAt(bucket: Bucket, now: number): number {
    const refill = (Math.max(0, now - bucket.updatedAt) / 1000) * this.limit.perSecond;
    return Math.min(this.limit.burst, bucket.tokens + refill);
  }

  /**
   * Makes room once the map is full, so it stays bounded under many callers: forgets the buckets that
   * have refilled anyway, then, if fewer than a tenth went, the fullest of the rest (forgetting one gives
   * its caller the least), never a drained one before a fuller one: a caller rotating keys cannot
   * reset its own drained bucket by filling the map with fresh ones. A tenth goes at once, so the scan
   * runs once per 10 000 new keys, not on each.
   */
  private dropFullBuckets(now: number): void {
    const tokensOf = (bucket: Bucket) => this.tokensAt(bucket, now);
    for (const [key, bucket] of this.buckets) {
      if (tokensOf(bucket) >= this.limit.burst) this.buckets.delete(key);
    }
    const excess = this.buckets.size - LOW_WATER;
    if (excess <= 0) return;
    const byTokens = [...this.buckets].map(([key, bucket]) => ({ key, tokens: tokensOf(bucket) }));
    byTokens.sort((a, b) => b.tokens - a.tokens);
    for (let i = 0; i < excess; i++) this.buckets.delete(byTokens[i].key);
  }
}
