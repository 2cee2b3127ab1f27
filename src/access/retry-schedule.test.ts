import { describe, expect, it } from 'vitest';
import { ACCESS_RETRY_CAP_MS, ACCESS_RETRY_JITTER, accessRetryDelayMs, nextAccessAttemptAt } from './retry-schedule.js';

const fixed = (r: number) => () => r;

describe('access retry schedule', () => {
  it.each([
    [1, 1_000],
    [2, 5_000],
    [3, 30_000],
    [4, 120_000],
    [5, 600_000],
  ])('waits the step of attempt %i (%i ms) with no jitter at the middle of the range', (attempt, ms) => {
    expect(accessRetryDelayMs(attempt, fixed(0.5))).toBe(ms);
  });

  it.each([6, 7, 50, 10_000])('stays at the 10 min cap after attempt 5 (attempt %i): it never gives up', (attempt) => {
    expect(accessRetryDelayMs(attempt, fixed(0.5))).toBe(ACCESS_RETRY_CAP_MS);
  });

  it('jitters ±20%, never outside', () => {
    expect(accessRetryDelayMs(2, fixed(0))).toBe(5_000 * (1 - ACCESS_RETRY_JITTER));
    expect(accessRetryDelayMs(2, fixed(0.999_999))).toBe(Math.round(5_000 * (1 + ACCESS_RETRY_JITTER * 0.999_998)));
    expect(accessRetryDelayMs(9, fixed(0))).toBe(480_000);
    expect(accessRetryDelayMs(9, fixed(0.999_999))).toBeLessThanOrEqual(720_000);
  });

  it('treats an attempt below 1 as the first (a row claimed before any attempt was counted)', () => {
    expect(accessRetryDelayMs(0, fixed(0.5))).toBe(1_000);
    expect(accessRetryDelayMs(-3, fixed(0.5))).toBe(1_000);
  });

  it('gives the instant from the failure', () => {
    const now = new Date('2030-01-01T00:00:00.000Z');
    expect(nextAccessAttemptAt(3, now, fixed(0.5)).toISOString()).toBe('2030-01-01T00:00:30.000Z');
  });
});
