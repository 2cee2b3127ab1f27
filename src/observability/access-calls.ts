/**
 * The access worker's platform calls, counted for the whole process, as delivery-outcomes.ts
 * counts webhook attempts: the worker runs beside the HTTP app or alone (`npx tenure worker`), and
 * every metrics registry of the process reads these counts when scraped.
 */

/** How a call ended (docs/access-discord.md, "States and errors"). */
export type AccessCallOutcome = 'granted' | 'revoked' | 'waiting_for_member' | 'failed' | 'retry' | 'unauthorized';

/**
 * A 429 Discord answered, by `X-RateLimit-Scope`: `user` (a route bucket of this bot), `global`
 * (the bot's global limit), `shared` (a resource's limit shared with others); `unknown` without the
 * header (the temporary ban of a caller who made too many invalid requests).
 */
export type RateLimitScope = 'user' | 'global' | 'shared' | 'unknown';

/** The library held a request back before sending it: a route bucket was empty, or the global limit. */
export type RateLimitWait = 'route' | 'global';

const calls = new Map<AccessCallOutcome, number>();
const tooMany = new Map<RateLimitScope, number>();
const waits = new Map<RateLimitWait, number>();

const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);

export function countAccessCall(outcome: AccessCallOutcome): void {
  bump(calls, outcome);
}

export function countRateLimited(scope: RateLimitScope): void {
  bump(tooMany, scope);
}

export function countRateLimitWait(kind: RateLimitWait): void {
  bump(waits, kind);
}

export function accessCallCounts(): ReadonlyMap<AccessCallOutcome, number> {
  return calls;
}

export function rateLimitedCounts(): ReadonlyMap<RateLimitScope, number> {
  return tooMany;
}

export function rateLimitWaitCounts(): ReadonlyMap<RateLimitWait, number> {
  return waits;
}
