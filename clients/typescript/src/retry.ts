/**
 * Retries for the statuses that mean "not now" rather than "no": 429 (rate limited, or suspended
 * after repeated violations) and 503 (the database is unavailable). Both are answered before
 * anything is changed, so the request can be sent again as it was.
 *
 * The wait is the server's `Retry-After` when it sends one (plus up to 20% jitter, never less, so
 * that clients refused together do not return together), else an exponential backoff with full
 * jitter. Attempts are bounded, and a wait longer than `maxRetryDelayMs` is not made: the 429 is
 * returned to the caller instead (a suspension lasts many minutes). POSTs get an Idempotency-Key
 * so that a retry can never create twice.
 */

export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  retries?: number;
  /** Longest single wait, in ms (default 60 000). */
  maxRetryDelayMs?: number;
  /** First backoff when the server gives no Retry-After, in ms (default 500; doubles per retry). */
  baseDelayMs?: number;
  /** Told before each wait, e.g. to log it. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number;
  status: number;
  /** The wait before the next attempt. */
  delayMs: number;
  /** Retry-After in seconds, when the server sent it. */
  retryAfterSeconds: number | null;
  method: string;
  url: string;
}

export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

const DEFAULTS = { retries: 2, maxRetryDelayMs: 60_000, baseDelayMs: 500 };

/** `Retry-After` as seconds: delta-seconds, or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** The wait before retry number `attempt` (1 = first retry). `random` is in [0, 1). */
export function retryDelayMs(attempt: number, retryAfterSeconds: number | null, baseDelayMs: number, random: () => number): number {
  if (retryAfterSeconds !== null) {
    const floor = retryAfterSeconds * 1000;
    return Math.ceil(floor + random() * Math.max(floor, 1000) * 0.2);
  }
  return Math.ceil(random() * baseDelayMs * 2 ** (attempt - 1));
}

/**
 * A POST sent again must not act twice. tenure replays the first answer of a POST that carries an
 * `Idempotency-Key` it has seen, so one is added when the caller gave none.
 */
function withIdempotencyKey(request: Request): Request {
  if (request.method !== 'POST' || request.headers.has('idempotency-key')) return request;
  const headers = new Headers(request.headers);
  headers.set('idempotency-key', crypto.randomUUID());
  return new Request(request, { headers });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Wraps a fetch so that 429 and 503 answers are retried as described above. */
export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
  random: () => number = Math.random,
): (request: Request) => Promise<Response> {
  const { retries, maxRetryDelayMs, baseDelayMs } = { ...DEFAULTS, ...options };
  return async (sent) => {
    const request = retries > 0 ? withIdempotencyKey(sent) : sent;
    for (let attempt = 1; ; attempt++) {
      // A Request's body can be read once: every attempt sends a fresh copy.
      const response = await fetchImpl(attempt <= retries ? request.clone() : request);
      if (!RETRIED_STATUSES.has(response.status) || attempt > retries) return response;
      const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      const delayMs = retryDelayMs(attempt, retryAfterSeconds, baseDelayMs, random);
      if (delayMs > maxRetryDelayMs) return response;
      await response.body?.cancel();
      options.onRetry?.({ attempt, status: response.status, delayMs, retryAfterSeconds, method: request.method, url: request.url });
      await sleep(delayMs);
    }
  };
}
