/**
 * What happens after an attempt (docs/webhooks.md, "Retries"): 2xx is delivered; 400, 401,
 * 403, 405, 406 and 422 are dropped at once (the signed body is identical on every attempt, so
 * they would fail every time); everything else — network errors, timeouts, refused addresses,
 * 3xx (redirects are not followed), 404 and 410 (a receiver mid-deploy), 408, 429, 5xx and other
 * 4xx — is retried on the schedule below, ±20% jitter, no sooner than a `Retry-After` asks.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delays after attempts 1…7; attempt 8 is the last. About 27.6 hours from first to last. */
export const RETRY_SCHEDULE_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
export const JITTER = 0.2;
/** A `Retry-After` longer than the longest step is cut to it: a receiver cannot park a delivery for days. */
export const RETRY_AFTER_CAP_MS = 10 * HOUR;

/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

export const DROPPED_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 405, 406, 422]);

/**
 * Why an attempt got no usable answer, or `http_status`/`redirect` when it got the wrong one;
 * `signing`: nothing was sent, this instance could not open the webhook's secret (sealed with an
 * encryption key it does not have), retried like a failure since another process, or this one
 * after a restart with the key, may.
 */
export type ErrorClass = 'http_status' | 'redirect' | 'timeout' | 'connection' | 'tls' | 'dns' | 'blocked_address' | 'signing';

export type AttemptResult =
  | { kind: 'response'; status: number; retryAfter?: string | undefined }
  | { kind: 'error'; errorClass: Exclude<ErrorClass, 'http_status' | 'redirect'> };

export type Verdict = 'delivered' | 'retry' | 'drop';

export function verdictFor(result: AttemptResult): Verdict {
  if (result.kind === 'error') return 'retry';
  if (result.status >= 200 && result.status < 300) return 'delivered';
  return DROPPED_STATUSES.has(result.status) ? 'drop' : 'retry';
}

/** The error class recorded for an attempt; null when it was delivered. */
export function errorClassOf(result: AttemptResult): ErrorClass | null {
  if (result.kind === 'error') return result.errorClass;
  if (result.status >= 200 && result.status < 300) return null;
  return result.status >= 300 && result.status < 400 ? 'redirect' : 'http_status';
}

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP-date (RFC 9110 10.2.3).
 * Null when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * SECOND, Number.MAX_SAFE_INTEGER);
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** The jittered delay after attempt `attempt` (1-based); null when it was the last. `random` ∈ [0, 1). */
export function retryDelayMs(attempt: number, random: () => number): number | null {
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export type Outcome = 'delivered' | 'retry' | 'dropped' | 'exhausted';

export interface Decision {
  outcome: Outcome;
  /** When the next attempt is due; null unless the outcome is `retry`. */
  nextAttemptAt: Date | null;
}

/** The decision after attempt `attempt` (1-based) ended with `result` at `now`. */
export function decide(attempt: number, result: AttemptResult, now: Date, random: () => number): Decision {
  const verdict = verdictFor(result);
  if (verdict === 'delivered') return { outcome: 'delivered', nextAttemptAt: null };
  if (verdict === 'drop') return { outcome: 'dropped', nextAttemptAt: null };
  const delay = retryDelayMs(attempt, random);
  if (delay === null) return { outcome: 'exhausted', nextAttemptAt: null };
  const asked = result.kind === 'response' ? parseRetryAfter(result.retryAfter, now) : null;
  const wait = asked === null ? delay : Math.max(delay, Math.min(asked, RETRY_AFTER_CAP_MS));
  return { outcome: 'retry', nextAttemptAt: new Date(now.getTime() + wait) };
}
