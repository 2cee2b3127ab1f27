import { describe, expect, it } from 'vitest';
import {
  decide,
  errorClassOf,
  JITTER,
  MAX_ATTEMPTS,
  parseRetryAfter,
  RETRY_AFTER_CAP_MS,
  RETRY_SCHEDULE_MS,
  retryDelayMs,
  verdictFor,
  type AttemptResult,
} from './retry-policy.js';

const NOW = new Date('2030-01-01T00:00:00.000Z');
const status = (s: number, retryAfter?: string): AttemptResult => ({ kind: 'response', status: s, retryAfter });
const fixed = (r: number) => () => r;

describe('retry policy', () => {
  it.each([200, 201, 202, 204, 299])('delivers on %i', (s) => {
    expect(verdictFor(status(s))).toBe('delivered');
    expect(errorClassOf(status(s))).toBeNull();
  });

  it.each([400, 401, 403, 405, 406, 422])('drops at once on %i (the same signed body would fail every time)', (s) => {
    expect(verdictFor(status(s))).toBe('drop');
    expect(decide(1, status(s), NOW, fixed(0.5))).toStrictEqual({ outcome: 'dropped', nextAttemptAt: null });
    expect(errorClassOf(status(s))).toBe('http_status');
  });

  it.each([
    [301, 'redirect'],
    [302, 'redirect'],
    [307, 'redirect'],
    [308, 'redirect'],
    [404, 'http_status'],
    [408, 'http_status'],
    [409, 'http_status'],
    [410, 'http_status'],
    [413, 'http_status'],
    [418, 'http_status'],
    [429, 'http_status'],
    [500, 'http_status'],
    [502, 'http_status'],
    [503, 'http_status'],
    [504, 'http_status'],
    [599, 'http_status'],
  ] as const)('retries on %i (error class %s)', (s, errorClass) => {
    expect(verdictFor(status(s))).toBe('retry');
    expect(errorClassOf(status(s))).toBe(errorClass);
    expect(decide(1, status(s), NOW, fixed(0.5))).toStrictEqual({ outcome: 'retry', nextAttemptAt: new Date(NOW.getTime() + 5_000) });
  });

  it.each(['timeout', 'connection', 'tls', 'dns', 'blocked_address'] as const)('retries after a %s error', (errorClass) => {
    const result: AttemptResult = { kind: 'error', errorClass };
    expect(verdictFor(result)).toBe('retry');
    expect(errorClassOf(result)).toBe(errorClass);
    expect(decide(2, result, NOW, fixed(0.5)).outcome).toBe('retry');
  });

  it('follows the schedule 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up after the 8th attempt', () => {
    expect(RETRY_SCHEDULE_MS).toStrictEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(MAX_ATTEMPTS).toBe(8);
    RETRY_SCHEDULE_MS.forEach((ms, i) => {
      expect(retryDelayMs(i + 1, fixed(0.5))).toBe(ms);
      expect(decide(i + 1, status(500), NOW, fixed(0.5))).toStrictEqual({ outcome: 'retry', nextAttemptAt: new Date(NOW.getTime() + ms) });
    });
    expect(retryDelayMs(8, fixed(0.5))).toBeNull();
    expect(decide(8, status(500), NOW, fixed(0.5))).toStrictEqual({ outcome: 'exhausted', nextAttemptAt: null });
    expect(decide(8, status(200), NOW, fixed(0.5)).outcome).toBe('delivered');
  });

  it('jitters by ±20%: the bounds at random 0 and just below 1, and every draw in between', () => {
    expect(JITTER).toBe(0.2);
    RETRY_SCHEDULE_MS.forEach((ms, i) => {
      expect(retryDelayMs(i + 1, fixed(0))).toBe(Math.round(ms * 0.8));
      expect(retryDelayMs(i + 1, fixed(0.999999999))).toBe(Math.round(ms * 1.2));
    });
    let seed = 42;
    const lcg = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 1000; n++) {
      const attempt = (n % 7) + 1;
      const base = RETRY_SCHEDULE_MS[attempt - 1]!;
      const delay = retryDelayMs(attempt, lcg)!;
      expect(delay).toBeGreaterThanOrEqual(Math.round(base * 0.8));
      expect(delay).toBeLessThanOrEqual(Math.round(base * 1.2));
    }
  });

  it('honours Retry-After in seconds and as an HTTP date, never retrying sooner than the schedule', () => {
    expect(decide(1, status(429, '120'), NOW, fixed(0.5)).nextAttemptAt).toStrictEqual(new Date(NOW.getTime() + 120_000));
    expect(decide(1, status(503, new Date(NOW.getTime() + 60_000).toUTCString()), NOW, fixed(0.5)).nextAttemptAt).toStrictEqual(
      new Date(NOW.getTime() + 60_000),
    );
    // Shorter than the schedule: the schedule wins.
    expect(decide(3, status(429, '1'), NOW, fixed(0.5)).nextAttemptAt).toStrictEqual(new Date(NOW.getTime() + 1_800_000));
    // Longer than the longest step: capped.
    expect(decide(1, status(429, String(7 * 24 * 3600)), NOW, fixed(0.5)).nextAttemptAt).toStrictEqual(
      new Date(NOW.getTime() + RETRY_AFTER_CAP_MS),
    );
    // A dropped status stays dropped whatever it asks.
    expect(decide(1, status(400, '10'), NOW, fixed(0.5)).outcome).toBe('dropped');
  });

  it('reads Retry-After defensively', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
    expect(parseRetryAfter('', NOW)).toBeNull();
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter('-5', NOW)).toBeNull();
    expect(parseRetryAfter('1.5', NOW)).toBeNull();
    expect(parseRetryAfter(' 30 ', NOW)).toBe(30_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('99999999999999999999', NOW)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
