import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

/**
 * The rate-limit policies of spec section 8 over rate-limiter-flexible: per API key, per client
 * IP, and a one-second burst (per key, or per IP for requests without a valid key), plus the
 * suspension of subjects that keep hitting the limits. In memory without Redis; on Redis with an
 * in-memory insurance limiter, so an unreachable Redis degrades to per-node limits, never to errors.
 */

export type PolicyName = 'key' | 'ip' | 'burst';

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
  /** Resolves once the shared store is connected, or after `timeoutMs` (the insurance answers meanwhile). */
  ready(timeoutMs?: number): Promise<void>;
  /** Records a rejected request; returns the suspension it starts, if any. */
  recordViolation(subject: string): Promise<{ msLeft: number } | null>;
  close(): Promise<void>;
}

export interface RedisBackend {
  client: Redis;
  keyPrefix: string;
  /** Called once when Redis starts failing and once when it answers again. */
  onHealthChange?: (healthy: boolean, err?: unknown) => void;
}

const toRes = (r: unknown): RateLimiterRes => {
  if (r instanceof RateLimiterRes) return r;
  throw r;
};

export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters: Record<PolicyName, RateLimiterAbstract>;
  private readonly violations: RateLimiterAbstract | null;
  private redisHealthy = true;

  constructor(
    readonly config: LimitsConfig,
    private readonly redis?: RedisBackend,
  ) {
    const make = (name: string, points: number, duration: number, blockDuration = 0): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ keyPrefix: name, points, duration, blockDuration });
      if (!redis) return memory;
      return new RateLimiterRedis({
        storeClient: redis.client,
        keyPrefix: `${redis.keyPrefix}rl:${name}`,
        points,
        duration,
        blockDuration,
        // Fail over to memory at once while the connection is down instead of queueing.
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      });
    };
    const p = config.policies;
    this.limiters = {
      key: make('key', p.key.limit, p.key.windowSec),
      ip: make('ip', p.ip.limit, p.ip.windowSec),
      burst: make('burst', p.burst.limit, p.burst.windowSec),
    };
    const s = config.suspension;
    // Consuming past `threshold - 1` points blocks the subject for the suspension's duration.
    this.violations = s ? make('violations', s.threshold - 1, s.windowSec, s.durationSec) : null;
    if (redis) {
      redis.client.on('error', (err) => this.setHealth(false, err));
      redis.client.on('ready', () => this.setHealth(true));
    }
  }

  private setHealth(healthy: boolean, err?: unknown): void {
    if (healthy === this.redisHealthy) return;
    this.redisHealthy = healthy;
    this.redis?.onHealthChange?.(healthy, err);
  }

  async consume(charges: readonly Charge[]): Promise<Verdict> {
    const subjects = [...new Set(charges.map((c) => c.subject))];
    // Every command is issued in this tick; ioredis auto-pipelining sends them in one write.
    const counted = Promise.all(charges.map((c) => this.limiters[c.policy].consume(c.subject).catch(toRes)));
    const suspensions = this.violations
      ? Promise.all(subjects.map((s) => this.violations!.get(s)))
      : Promise.resolve([] as (RateLimiterRes | null)[]);
    const [results, states] = await Promise.all([counted, suspensions]);

    const decisions = charges.map((c, i): Decision => {
      const res = results[i]!;
      const policy = this.config.policies[c.policy];
      return {
        policy: c.policy,
        subject: c.subject,
        limit: policy.limit,
        windowSec: policy.windowSec,
        remaining: Math.max(0, policy.limit - res.consumedPoints),
        msBeforeReset: Math.max(0, res.msBeforeNext),
        allowed: res.consumedPoints <= policy.limit,
      };
    });
    let suspended: Verdict['suspended'] = null;
    const threshold = this.config.suspension?.threshold ?? Infinity;
    states.forEach((state, i) => {
      if (state && state.consumedPoints >= threshold && state.msBeforeNext > 0) {
        if (!suspended || state.msBeforeNext > suspended.msLeft) suspended = { subject: subjects[i]!, msLeft: state.msBeforeNext };
      }
    });
    return { decisions, suspended };
  }

  async ready(timeoutMs = 2_000): Promise<void> {
    const client = this.redis?.client;
    if (!client || client.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        client!.off('ready', done);
        resolve();
      }
      client.once('ready', done);
    });
  }

  async recordViolation(subject: string): Promise<{ msLeft: number } | null> {
    if (!this.violations) return null;
    const res = await this.violations.consume(subject).catch(toRes);
    const threshold = this.config.suspension!.threshold;
    return res.consumedPoints >= threshold ? { msLeft: res.msBeforeNext } : null;
  }

  async close(): Promise<void> {
    this.redis?.client.disconnect();
  }
}

/** The do-nothing twin: counts nothing, refuses nothing (TENURE_RATE_LIMITS=false). */
export class NoRateLimiter implements RateLimiter {
  constructor(readonly config: LimitsConfig) {}
  async consume(): Promise<Verdict> {
    return { decisions: [], suspended: null };
  }
  async recordViolation(): Promise<null> {
    return null;
  }
  async ready(): Promise<void> {}
  async close(): Promise<void> {}
}
