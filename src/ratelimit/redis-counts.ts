import type { Redis, Result } from 'ioredis';
import { Breaker, ClockOffset } from './redis-breaker.js';

/**
 * The limiter's counts in Redis (fixed windows, as rate-limiter-flexible keeps them), behind a
 * breaker, each counting command fenced by a deadline (docs/rate-limits.md, "Redis").
 *
 * A command the client gave up on is still in Redis's socket: a stalled Redis (SIGSTOP, a paused
 * VM, an fsync stall) runs everything its sockets hold when it resumes. Dropping the connection does
 * not prevent that (measured on Linux with a SIGSTOPped redis-server: after a FIN it ran all 10,000
 * queued INCRs, after an RST the first ~18 KB of them), so each counting command carries the time,
 * on Redis's clock, after which the caller has given up, and the script counts nothing past it.
 */

/** A window's count for one subject, and the milliseconds until it resets. */
export interface Count {
  consumed: number;
  msLeft: number;
}

// ARGV: window ms, deadline (Redis's clock, ms), count at which to extend the key (0: never), and
// for how long. TIME in a script needs effect replication, the default since Redis 5.
const COUNT = `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[2]) then return {-1, 0} end
redis.call('SET', KEYS[1], 0, 'PX', ARGV[1], 'NX')
local consumed = redis.call('INCR', KEYS[1])
if tonumber(ARGV[3]) > 0 and consumed >= tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {consumed, redis.call('PTTL', KEYS[1])}
`;
// A wait announced to a subject (its Retry-After): the key lives until the wait ends. ARGV: the
// wait in ms, the deadline as COUNT's. Answers 1 when a wait told earlier was still running (the
// refused request came early), 0 when not, -1 past the deadline (nothing written).
const ANNOUNCE = `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[2]) then return -1 end
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], 1, 'PX', ARGV[1]) end
if left > 0 then return 1 end
return 0
`;
const READ = `return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    tenureCount(key: string, windowMs: number, deadline: number, extendAt: number, extendMs: number): Result<[number, number], Context>;
    tenureRead(key: string): Result<[number, number], Context>;
    tenureAnnounce(key: string, waitMs: number, deadline: number): Result<number, Context>;
  }
}

/**
 * The command's answer, or a rejection once `ms` have passed since the call. ioredis's own
 * commandTimeout starts when a command is written, and with auto-pipelining a command waits
 * unwritten while the previous pipeline is unanswered: against a stalled Redis each generation of
 * queued commands would add another timeout (measured: requests of the stall's first half second
 * took 0.7-1.0 s). Timed from the call, a request waits for Redis at most `ms`, once.
 */
function within<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([command, expired]).finally(() => clearTimeout(timer));
}

export interface SharedCountsOptions {
  client: Redis;
  /** The client's command timeout: a command unanswered by then is given up on. */
  timeoutMs: number;
  /** After a recovery, how long refusals do not count toward a suspension (Breaker.settled). */
  graceMs?: number;
  /** How often an open breaker probes Redis. */
  probeEveryMs?: number;
  /** How often a closed breaker re-reads Redis's clock (a probe too, when traffic is idle). */
  calibrateEveryMs?: number;
  onHealthChange?: (healthy: boolean, err?: unknown) => void;
}

export class SharedCounts {
  private readonly client: Redis;
  private readonly breaker: Breaker;
  private readonly offset = new ClockOffset();
  /**
   * How long after it is sent a command may still count: half the timeout. A probe that took at
   * most half the timeout both closes the breaker and is the only kind of sample the clock estimate
   * takes, so the estimate errs by at most a quarter of the timeout, and a command Redis counts is
   * answered before the client gives up on it.
   */
  private readonly budgetMs: number;
  private readonly timer: NodeJS.Timeout;
  private probing = false;
  private lastProbe = -Infinity;
  private readyWaiters: (() => void)[] = [];

  constructor(private readonly options: SharedCountsOptions) {
    this.client = options.client;
    this.breaker = new Breaker(options.graceMs ?? 10_000);
    this.budgetMs = Math.floor(options.timeoutMs / 2);
    this.client.defineCommand('tenureCount', { numberOfKeys: 1, lua: COUNT });
    this.client.defineCommand('tenureRead', { numberOfKeys: 1, lua: READ });
    this.client.defineCommand('tenureAnnounce', { numberOfKeys: 1, lua: ANNOUNCE });
    this.client.on('error', (err) => this.fail(err));
    this.client.on('ready', () => void this.probe());
    const every = options.probeEveryMs ?? 250;
    const calibrateEvery = options.calibrateEveryMs ?? 10_000;
    this.timer = setInterval(() => {
      if (!this.breaker.closed || Date.now() - this.lastProbe >= calibrateEvery) void this.probe();
    }, every).unref();
  }

  /** Whether counts go to Redis now; when not, the caller counts in memory without waiting. */
  get usable(): boolean {
    return this.breaker.closed && this.client.status === 'ready' && this.offset.value !== null;
  }

  /** Whether a refusal Redis decided may count toward a suspension now. */
  settled(): boolean {
    return this.breaker.settled(Date.now());
  }

  /**
   * Counts one for `key` in its window, or null when Redis failed, timed out or ran the command
   * past its deadline (the caller counts in memory; the breaker is open from then on). With
   * `extend`, a count reaching `extend.at` keeps the key for `extend.ms` (a suspension).
   */
  async count(key: string, windowMs: number, extend?: { at: number; ms: number }): Promise<Count | null> {
    const offset = this.offset.value;
    if (!this.usable || offset === null) return null;
    try {
      const deadline = Date.now() + offset + this.budgetMs;
      const [consumed, msLeft] = await within(this.client.tenureCount(key, windowMs, deadline, extend?.at ?? 0, extend?.ms ?? 0), this.options.timeoutMs);
      if (consumed < 0) {
        // Late against our clock estimate: either Redis was slow (a stall starting) or a clock
        // stepped. The next probe re-reads the offset.
        this.offset.reset();
        throw new Error(`Redis ran a rate-limit command past its ${this.budgetMs} ms deadline`);
      }
      return { consumed, msLeft };
    } catch (err) {
      this.fail(err);
      return null;
    }
  }

  /**
   * Announces a wait of `waitMs` under `key` (kept until the later of it and a wait announced
   * before): whether a wait announced before was still running, or null when Redis is not usable,
   * failed or ran the command past its deadline.
   */
  async announce(key: string, waitMs: number): Promise<boolean | null> {
    const offset = this.offset.value;
    if (!this.usable || offset === null) return null;
    try {
      const deadline = Date.now() + offset + this.budgetMs;
      const early = await within(this.client.tenureAnnounce(key, waitMs, deadline), this.options.timeoutMs);
      if (early < 0) {
        this.offset.reset();
        throw new Error(`Redis ran a rate-limit command past its ${this.budgetMs} ms deadline`);
      }
      return early === 1;
    } catch (err) {
      this.fail(err);
      return null;
    }
  }

  /** A key's count and milliseconds left (0 and negative when absent), or null when Redis is not usable. */
  async read(key: string): Promise<Count | null> {
    if (!this.usable) return null;
    try {
      const [consumed, msLeft] = await within(this.client.tenureRead(key), this.options.timeoutMs);
      return { consumed, msLeft };
    } catch (err) {
      this.fail(err);
      return null;
    }
  }

  /** Resolves once Redis is in use, or after `timeoutMs` (memory answers meanwhile). */
  async ready(timeoutMs: number): Promise<void> {
    if (this.usable) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const waiters = this.readyWaiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  close(): void {
    clearInterval(this.timer);
    this.client.disconnect();
  }

  private fail(err: unknown): void {
    if (this.breaker.open()) this.options.onHealthChange?.(false, err);
  }

  /** TIME: whether Redis answers promptly, and what its clock says. */
  private async probe(): Promise<void> {
    if (this.probing || this.client.status !== 'ready') return;
    this.probing = true;
    const sentAt = Date.now();
    this.lastProbe = sentAt;
    try {
      const [seconds, micros] = await within(this.client.time(), this.options.timeoutMs);
      const receivedAt = Date.now();
      // A slow answer (behind a stall's backlog, or a busy event loop) is not yet a recovery.
      if (receivedAt - sentAt > this.budgetMs) return;
      this.offset.add(sentAt, receivedAt, Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
      if (this.breaker.close(receivedAt)) this.options.onHealthChange?.(true);
      if (this.usable) for (const done of [...this.readyWaiters]) done();
    } catch (err) {
      this.fail(err);
    } finally {
      this.probing = false;
    }
  }
}
