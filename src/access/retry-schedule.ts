/**
 * When a platform call that failed for a passing reason (a network error, a timeout, a 5xx) is
 * tried again (docs/access-discord.md, "States and errors"): 1 s, 5 s, 30 s, 2 min, then every 10 min,
 * each ±20% so that a whole guild's rows failing at one instant do not come back at one instant.
 * There is no last attempt: access must end up right, and each retry is one call every 10 min at
 * most. Rate limits (429) never reach this schedule: the REST library waits as Discord says.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** The delay after the 1st, 2nd, … failed attempt; every later one waits the last step. */
export const ACCESS_RETRY_SCHEDULE_MS = [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE] as const;
export const ACCESS_RETRY_CAP_MS = 10 * MINUTE;
export const ACCESS_RETRY_JITTER = 0.2;

/** The jittered delay after failed attempt `attempt` (1-based); `random` ∈ [0, 1). */
export function accessRetryDelayMs(attempt: number, random: () => number): number {
  const step = Math.min(Math.max(1, Math.floor(attempt)), ACCESS_RETRY_SCHEDULE_MS.length);
  const base = Math.min(ACCESS_RETRY_SCHEDULE_MS[step - 1]!, ACCESS_RETRY_CAP_MS);
  return Math.round(base * (1 - ACCESS_RETRY_JITTER + 2 * ACCESS_RETRY_JITTER * random()));
}

/** When attempt `attempt` (1-based), failed at `now`, is tried again. */
export function nextAccessAttemptAt(attempt: number, now: Date, random: () => number): Date {
  return new Date(now.getTime() + accessRetryDelayMs(attempt, random));
}
