/**
 * The pure state behind the limiter's use of Redis (redis-counts.ts drives it; docs/rate-limits.md,
 * "Redis"): whether Redis may be asked at all, whether refusals may count toward a suspension yet,
 * and how far Redis's clock is from ours, so that a command can carry a deadline Redis checks.
 */

/**
 * Closed: counts go to Redis. Open: every count goes to the node's memory without touching Redis,
 * from the first command that failed or timed out until a probe answers in time. A stalled Redis
 * (frozen process, paused VM) keeps its connection open and answers nothing; without the breaker
 * every limiter call of every request would wait for the command timeout.
 *
 * Starting: no probe has answered yet (counts go to memory). The first answer closes the breaker
 * without a grace, since nothing was counted elsewhere before it.
 */
export class Breaker {
  private state: 'starting' | 'closed' | 'open' = 'starting';
  private closedAt = -Infinity;

  /** @param graceMs after a recovery, how long refusals decided by Redis do not count toward a suspension */
  constructor(private readonly graceMs: number) {}

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** A command failed or timed out. True when this is news (Redis was in use, or never answered). */
  open(): boolean {
    if (this.state === 'open') return false;
    this.state = 'open';
    return true;
  }

  /** A probe answered in time. True when this ends an outage (not on the first answer after start). */
  close(now: number): boolean {
    if (this.state === 'closed') return false;
    const recovering = this.state === 'open';
    this.state = 'closed';
    this.closedAt = recovering ? now : -Infinity;
    return recovering;
  }

  /**
   * Whether a refusal Redis decided may count toward a suspension: Redis is in use and has been for
   * the grace. Just after an outage the shared windows are not trusted with a 15-minute sentence
   * (counts of the outage live in each node's memory, and a command Redis ran late, past every
   * fence, would land in them); the refusal itself still stands.
   */
  settled(now: number): boolean {
    return this.state === 'closed' && now - this.closedAt >= this.graceMs;
  }
}

/**
 * Redis's clock minus ours, in milliseconds, from TIME replies: the sample with the shortest round
 * trip among the latest few (its error is at most half that round trip). A reply that waited
 * behind a stall or a busy event loop has a long round trip and so loses to a prompt one.
 */
export class ClockOffset {
  private samples: { rttMs: number; offsetMs: number }[] = [];

  constructor(private readonly keep = 8) {}

  add(sentAt: number, receivedAt: number, redisMs: number): void {
    const rttMs = receivedAt - sentAt;
    this.samples.push({ rttMs, offsetMs: redisMs - (sentAt + rttMs / 2) });
    if (this.samples.length > this.keep) this.samples.shift();
  }

  /** Forget every sample: a clock stepped (ours or Redis's), so none of them holds. */
  reset(): void {
    this.samples = [];
  }

  /** The estimate, or null before any sample. */
  get value(): number | null {
    let best: { rttMs: number; offsetMs: number } | null = null;
    for (const s of this.samples) if (!best || s.rttMs < best.rttMs) best = s;
    return best ? Math.round(best.offsetMs) : null;
  }
}
