import type { Clock } from './clock.js';

/**
 * How many times a key (a project) may do something costly in a sliding window, in this process:
 * bot token checks (each asks the platform from tenure's address, and Discord bans an address
 * after 10,000 refused requests in 10 minutes: one client pasting bad tokens in a loop must not
 * get every project's bots banned with it), webhook replays (each may queue up to a thousand
 * deliveries).
 */
export class SlidingBudget {
  /** The instants of each project's checks within the window, oldest first. */
  private readonly used = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** Takes one for `key`, or says how many seconds until one is free. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.clock.now().getTime();
    const recent = (this.used.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.used.set(key, recent);
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((recent[0]! + this.windowMs - now) / 1000)) };
    }
    recent.push(now);
    this.used.set(key, recent);
    return { ok: true };
  }
}
