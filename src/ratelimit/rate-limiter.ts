import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { SharedCounts, type Count } from './redis-counts.js';

/**
 * The rate-limit policies (docs/rate-limits.md): per API key, per client IP, and a one-second burst
 * (per key, or per IP for requests without a valid key), plus the suspension of subjects that keep
 * hitting the limits. In memory (rate-limiter-flexible's) without Redis; on Redis, with the node's
 * memory counting whenever Redis fails or stalls, so an unreachable Redis degrades to per-node
 * limits, never to errors or waits (redis-counts.ts; docs/rate-limits.md, "Redis").
 */

/** `callback`: platform callbacks (Stripe events, Telegram updates), per endpoint (src/http/gate.hook.ts). */
export type PolicyName = 'key' | 'ip' | 'burst' | 'callback';

export interface PolicyConfig {
  limit: number;
  windowSec: number;
}

export interface SuspensionConfig {
  /** Rejections within `windowSec` that suspend a subject. */
  threshold: number;
  windowSec: number;
  durationSec: number;
}

export interface LimitsConfig {
  policies: Record<PolicyName, PolicyConfig>;
  suspension: SuspensionConfig | null;
}

/** One policy's state for one subject after this request was counted. */
export interface Decision {
  policy: PolicyName;
  subject: string;
  limit: number;
  windowSec: number;
  remaining: number;
  msBeforeReset: number;
  allowed: boolean;
}

export interface Verdict {
  decisions: Decision[];
  /** Set when a subject of this request is suspended: who, and for how long still. */
  suspended: { subject: string; msLeft: number } | null;
}

/** What to count: a policy for a subject (`key:<id>` or `ip:<address>`). */
export interface Charge {
  policy: PolicyName;
  subject: string;
}

export interface RateLimiter {
  readonly config: LimitsConfig;
  /** Counts the charges and reads the suspensions of their subjects, at once (one Redis round trip). */
  consume(charges: readonly Charge[]): Promise<Verdict>;
  /** Resolves once the shared store answers, or after `timeoutMs` (memory answers meanwhile). */
  ready(timeoutMs?: number): Promise<void>;
  /**
   * Records a refused request of `subject` and the wait it is told (its Retry-After, in ms);
   * returns the suspension it starts, if any. Only a refusal that arrives before the end of a wait
   * the subject was told earlier is a violation (docs/rate-limits.md, "Suspension"): a client that
   * waits as told is never suspended.
   */
  recordRefusal(subject: string, waitMs: number): Promise<{ msLeft: number } | null>;
  close(): Promise<void>;
}

export interface RedisBackend {
  client: Redis;
  keyPrefix: string;
  /** The client's command timeout (ms). */
  timeoutMs: number;
  /** After Redis returns, how long its refusals do not count toward a suspension (default 10 s). */
  graceMs?: number;
  /** Called once when Redis starts failing and once when it answers again. */
  onHealthChange?: (healthy: boolean, err?: unknown) => void;
}

/** A memory limiter's answer (it rejects with the same shape past its limit). */
const inMemory = (limiter: RateLimiterMemory, subject: string): Promise<Count> =>
  limiter.consume(subject).then(
    (r) => ({ consumed: r.consumedPoints, msLeft: r.msBeforeNext }),
    (r: unknown) => {
      if (r instanceof RateLimiterRes) return { consumed: r.consumedPoints, msLeft: r.msBeforeNext };
      throw r;
    },
  );

/**
 * The waits announced to subjects (the end of each one's latest Retry-After), in this node's
 * memory: without Redis, or while it fails. Ended waits are dropped now and then, so the map holds
 * roughly the subjects refused in the last minute.
 */
class AnnouncedWaits {
  private readonly until = new Map<string, number>();
  private writes = 0;

  /** Whether `subject` is still inside a wait told earlier; then the wait becomes the later of the two. */
  announce(subject: string, waitMs: number): boolean {
    const now = Date.now();
    const told = this.until.get(subject);
    const early = told !== undefined && now < told;
    if (told === undefined || now + waitMs > told) this.until.set(subject, now + waitMs);
    if (++this.writes % 1_000 === 0) for (const [s, end] of this.until) if (end <= now) this.until.delete(s);
    return early;
  }
}

export class FlexibleRateLimiter implements RateLimiter {
  private readonly memory: Record<PolicyName, RateLimiterMemory>;
  private readonly waits = new AnnouncedWaits();
  /** Violations counted in this node's memory (without Redis, or while Redis is failing). */
  private readonly violations: RateLimiterMemory | null;
  private readonly shared: SharedCounts | null;
  private readonly keyPrefix: string;

  constructor(
    readonly config: LimitsConfig,
    redis?: RedisBackend,
  ) {
    const p = config.policies;
    const memory = (name: string, { limit, windowSec }: PolicyConfig) => new RateLimiterMemory({ keyPrefix: name, points: limit, duration: windowSec });
    this.memory = { key: memory('key', p.key), ip: memory('ip', p.ip), burst: memory('burst', p.burst), callback: memory('callback', p.callback) };
    const s = config.suspension;
    // Consuming past `threshold - 1` points blocks the subject for the suspension's duration.
    this.violations = s
      ? new RateLimiterMemory({ keyPrefix: 'violations', points: s.threshold - 1, duration: s.windowSec, blockDuration: s.durationSec })
      : null;
    this.keyPrefix = redis?.keyPrefix ?? '';
    this.shared = redis
      ? new SharedCounts({ client: redis.client, timeoutMs: redis.timeoutMs, graceMs: redis.graceMs, onHealthChange: redis.onHealthChange })
      : null;
  }

  private redisKey(name: string, subject: string): string {
    return `${this.keyPrefix}rl:${name}:${subject}`;
  }

  /** Counts in Redis when it is in use, else (or when it fails) in memory, at once. */
  private async count(policy: PolicyName, subject: string): Promise<Count> {
    const windowMs = this.config.policies[policy].windowSec * 1000;
    const shared = this.shared?.usable ? await this.shared.count(this.redisKey(policy, subject), windowMs) : null;
    return shared ?? inMemory(this.memory[policy], subject);
  }

  /** The milliseconds left of a subject's suspension, in memory or in Redis, or 0. */
  private async suspension(subject: string): Promise<number> {
    const threshold = this.config.suspension!.threshold;
    const [local, shared] = await Promise.all([this.violations!.get(subject), this.shared?.read(this.redisKey('violations', subject))]);
    const localMs = local && local.consumedPoints >= threshold ? local.msBeforeNext : 0;
    const sharedMs = shared && shared.consumed >= threshold ? shared.msLeft : 0;
    return Math.max(0, localMs, sharedMs);
  }

  async consume(charges: readonly Charge[]): Promise<Verdict> {
    const subjects = [...new Set(charges.map((c) => c.subject))];
    // Every command is issued in this tick; ioredis auto-pipelining sends them in one write.
    const counted = Promise.all(charges.map((c) => this.count(c.policy, c.subject)));
    const suspensions = this.violations ? Promise.all(subjects.map((s) => this.suspension(s))) : Promise.resolve([] as number[]);
    const [results, msLeft] = await Promise.all([counted, suspensions]);

    const decisions = charges.map((c, i): Decision => {
      const res = results[i]!;
      const policy = this.config.policies[c.policy];
      return {
        policy: c.policy,
        subject: c.subject,
        limit: policy.limit,
        windowSec: policy.windowSec,
        remaining: Math.max(0, policy.limit - res.consumed),
        msBeforeReset: Math.max(0, res.msLeft),
        allowed: res.consumed <= policy.limit,
      };
    });
    let suspended: Verdict['suspended'] = null;
    msLeft.forEach((ms, i) => {
      if (ms > 0 && (!suspended || ms > suspended.msLeft)) suspended = { subject: subjects[i]!, msLeft: ms };
    });
    return { decisions, suspended };
  }

  async ready(timeoutMs = 2_000): Promise<void> {
    await this.shared?.ready(timeoutMs);
  }

  async recordRefusal(subject: string, waitMs: number): Promise<{ msLeft: number } | null> {
    const s = this.config.suspension;
    if (!this.violations || !s) return null;
    if (this.shared?.usable) {
      // The wait is announced in Redis so every node judges the next request against it.
      const early = await this.shared.announce(this.redisKey('wait', subject), waitMs);
      if (early !== null) {
        if (!early) return null;
        // Just after an outage the refusal stands but is not counted toward a suspension (Breaker.settled).
        if (!this.shared.settled()) return null;
        const res = await this.shared.count(this.redisKey('violations', subject), s.windowSec * 1000, { at: s.threshold, ms: s.durationSec * 1000 });
        if (res) return res.consumed >= s.threshold ? { msLeft: res.msLeft } : null;
      }
    }
    if (!this.waits.announce(subject, waitMs)) return null;
    const res = await inMemory(this.violations, subject);
    return res.consumed >= s.threshold ? { msLeft: res.msLeft } : null;
  }

  async close(): Promise<void> {
    this.shared?.close();
  }
}

/** The do-nothing twin: counts nothing, refuses nothing (TENURE_RATE_LIMITS=false). */
export class NoRateLimiter implements RateLimiter {
  constructor(readonly config: LimitsConfig) {}
  async consume(): Promise<Verdict> {
    return { decisions: [], suspended: null };
  }
  async recordRefusal(): Promise<null> {
    return null;
  }
  async ready(): Promise<void> {}
  async close(): Promise<void> {}
}
