import { createHash } from 'node:crypto';

/**
 * The fake Discord's rate limits, as Discord documents them
 * (https://discord.com/developers/docs/topics/rate-limits): per-route buckets per bot and top-level
 * resource, a global limit per bot, and the invalid request limit that ends in a temporary ban.
 * See the header of fake-discord.ts for where each number comes from.
 */

export interface BucketLimit {
  /** Requests allowed per window (`X-RateLimit-Limit`). */
  limit: number;
  /** The window, from its first request (`X-RateLimit-Reset-After` counts it down). */
  windowMs: number;
}

export interface InvalidRequestLimit {
  /** Invalid requests (401, 403, 429 except scope `shared`) allowed per window before the ban. */
  max: number;
  windowMs: number;
  /** How long the ban lasts. */
  banMs: number;
}

/**
 * A window that opens at its first request and closes `windowMs` later: what the headers describe
 * (a remaining count and a reset instant), and what Discord still runs for member roles (a fixed
 * window: discord/discord-api-docs#7680). A refused request does not use the window up.
 */
class FixedWindow {
  resetAt = 0;
  count = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  take(now: number): boolean {
    if (now >= this.resetAt) {
      this.resetAt = now + this.windowMs;
      this.count = 0;
    }
    if (this.count >= this.limit) return false;
    this.count++;
    return true;
  }

  get remaining(): number {
    return Math.max(0, this.limit - this.count);
  }
}

/** Timestamps within a sliding window, oldest first. */
class SlidingCount {
  private times: number[] = [];
  private head = 0;

  add(now: number, windowMs: number): number {
    this.times.push(now);
    while (this.head < this.times.length && this.times[this.head]! <= now - windowMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }
}

/** Seconds with millisecond precision, as Discord writes them ("64.570"). */
const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

export type RouteVerdict =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; headers: Record<string, string>; retryAfterMs: number };

export class RateLimits {
  private readonly globals = new Map<string, FixedWindow>();
  private readonly buckets = new Map<string, FixedWindow>();
  private readonly invalid = new Map<string, SlidingCount>();
  private readonly bans = new Map<string, number>();

  constructor(
    private readonly globalPerSecond: number,
    private readonly invalidLimit: InvalidRequestLimit,
  ) {}

  /** The ban left for this caller in ms, or 0. */
  bannedFor(key: string, now: number): number {
    const until = this.bans.get(key) ?? 0;
    return until > now ? until - now : 0;
  }

  bannedKeys(now: number): string[] {
    return [...this.bans].filter(([, until]) => until > now).map(([key]) => key);
  }

  /** The global limit: `globalPerSecond` requests per second per bot (or per IP without a token). */
  global(key: string, now: number): { ok: true } | { ok: false; retryAfterMs: number } {
    let window = this.globals.get(key);
    if (!window) this.globals.set(key, (window = new FixedWindow(this.globalPerSecond, 1000)));
    return window.take(now) ? { ok: true } : { ok: false, retryAfterMs: window.resetAt - now };
  }

  /**
   * A per-route bucket: one per bot, bucket and top-level resource (the guild id), answered with
   * the `X-RateLimit-*` headers; the bucket's hash does not include the resource, as documented.
   */
  route(key: string, bucket: string, limit: BucketLimit, major: string, now: number): RouteVerdict {
    const id = `${key} ${bucket} ${major}`;
    let window = this.buckets.get(id);
    if (!window) this.buckets.set(id, (window = new FixedWindow(limit.limit, limit.windowMs)));
    const ok = window.take(now);
    const headers = {
      'X-RateLimit-Limit': String(window.limit),
      'X-RateLimit-Remaining': String(window.remaining),
      'X-RateLimit-Reset': seconds(window.resetAt),
      'X-RateLimit-Reset-After': seconds(window.resetAt - now),
      'X-RateLimit-Bucket': bucketHash(bucket),
    };
    return ok ? { ok: true, headers } : { ok: false, headers, retryAfterMs: window.resetAt - now };
  }

  /** Counts one invalid request; the one that reaches the limit starts the ban. */
  countInvalid(key: string, now: number): void {
    let count = this.invalid.get(key);
    if (!count) this.invalid.set(key, (count = new SlidingCount()));
    if (count.add(now, this.invalidLimit.windowMs) >= this.invalidLimit.max) {
      this.bans.set(key, now + this.invalidLimit.banMs);
      this.invalid.delete(key);
    }
  }
}

/** A stable 32-hex bucket id, shaped like Discord's (e.g. "b0bb9027ff6ae0c9619c2719f4a24de5"). */
export function bucketHash(bucket: string): string {
  return createHash('md5').update(`fake-discord ${bucket}`).digest('hex');
}

/** 429 body and headers, as in "Exceeding A Rate Limit": `Retry-After` is the body's value rounded up. */
export function rateLimited(scope: 'user' | 'global', retryAfterMs: number, routeHeaders: Record<string, string> = {}) {
  const retryAfter = Number(seconds(retryAfterMs));
  const headers: Record<string, string> = {
    ...routeHeaders,
    'Retry-After': String(Math.max(1, Math.ceil(retryAfter))),
    'X-RateLimit-Scope': scope,
  };
  if (scope === 'global') headers['X-RateLimit-Global'] = 'true';
  return { headers, body: { message: 'You are being rate limited.', retry_after: retryAfter, global: scope === 'global' } };
}

/** What a banned caller gets (Cloudflare, in front of the API: no `X-RateLimit-*` headers). */
export function banned(banLeftMs: number) {
  return {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(banLeftMs / 1000))) },
    body: {
      message:
        'You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently. ' +
        'Please read our docs at https://discord.com/developers/docs/topics/rate-limits to prevent this moving forward.',
      code: 0,
    },
  };
}
