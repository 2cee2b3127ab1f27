import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FlexibleRateLimiter, type LimitsConfig } from './rate-limiter.js';

/** The policy math on the in-memory store, with the clock injected through fake timers. */

const config: LimitsConfig = {
  policies: { key: { limit: 5, windowSec: 60 }, ip: { limit: 8, windowSec: 60 }, burst: { limit: 3, windowSec: 1 }, callback: { limit: 6, windowSec: 60 } },
  suspension: { threshold: 4, windowSec: 600, durationSec: 900 },
};

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00.000Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('FlexibleRateLimiter (memory)', () => {
  it('counts each policy for its subject and reports what is left', async () => {
    const limiter = new FlexibleRateLimiter(config);
    const v = await limiter.consume([
      { policy: 'ip', subject: 'ip:a' },
      { policy: 'key', subject: 'key:k' },
      { policy: 'burst', subject: 'key:k' },
    ]);
    expect(v.suspended).toBeNull();
    expect(v.decisions.map((d) => [d.policy, d.remaining, d.allowed])).toEqual([
      ['ip', 7, true],
      ['key', 4, true],
      ['burst', 2, true],
    ]);
    expect(v.decisions[0]!.msBeforeReset).toBe(60_000);
  });

  it('refuses the request past the burst and lets it through a second later', async () => {
    const limiter = new FlexibleRateLimiter(config);
    const burst = () => limiter.consume([{ policy: 'burst', subject: 'key:k' }]);
    for (let i = 0; i < 3; i++) expect((await burst()).decisions[0]!.allowed).toBe(true);
    const refused = (await burst()).decisions[0]!;
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    expect(refused.msBeforeReset).toBeGreaterThan(0);
    expect(refused.msBeforeReset).toBeLessThanOrEqual(1000);
    vi.advanceTimersByTime(1001);
    expect((await burst()).decisions[0]!.allowed).toBe(true);
  });

  it('resets the per-key window after 60 seconds', async () => {
    const limiter = new FlexibleRateLimiter(config);
    const key = () => limiter.consume([{ policy: 'key', subject: 'key:k' }]);
    for (let i = 0; i < 5; i++) await key();
    vi.advanceTimersByTime(30_000);
    const refused = (await key()).decisions[0]!;
    expect(refused.allowed).toBe(false);
    expect(refused.msBeforeReset).toBe(30_000);
    vi.advanceTimersByTime(30_001);
    expect((await key()).decisions[0]).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('keeps subjects apart', async () => {
    const limiter = new FlexibleRateLimiter(config);
    for (let i = 0; i < 5; i++) await limiter.consume([{ policy: 'key', subject: 'key:a' }]);
    expect((await limiter.consume([{ policy: 'key', subject: 'key:b' }])).decisions[0]!.remaining).toBe(4);
  });

  it('suspends a subject at the threshold of violations, for the suspension time', async () => {
    const limiter = new FlexibleRateLimiter(config);
    // The first refusal tells the wait; the next four come before it ends: the fourth violation suspends.
    expect(await limiter.recordRefusal('key:k', 30_000)).toBeNull();
    for (let i = 1; i < 4; i++) expect(await limiter.recordRefusal('key:k', 30_000)).toBeNull();
    const started = await limiter.recordRefusal('key:k', 30_000);
    expect(started?.msLeft).toBe(900_000);
    const during = await limiter.consume([{ policy: 'key', subject: 'key:k' }]);
    expect(during.suspended).toEqual({ subject: 'key:k', msLeft: 900_000 });
    vi.advanceTimersByTime(600_000);
    expect((await limiter.consume([{ policy: 'ip', subject: 'key:k' }])).suspended?.msLeft).toBe(300_000);
    vi.advanceTimersByTime(300_001);
    expect((await limiter.consume([{ policy: 'key', subject: 'key:k' }])).suspended).toBeNull();
  });

  it('counts no refusal that comes at or after the end of the wait it was told', async () => {
    const limiter = new FlexibleRateLimiter(config);
    for (let i = 0; i < 50; i++) {
      expect(await limiter.recordRefusal('key:k', 2_000)).toBeNull();
      vi.advanceTimersByTime(2_000);
    }
    // One millisecond early is early: a wait told on time, three early refusals, and the fourth suspends.
    for (let i = 0; i < 4; i++) {
      expect(await limiter.recordRefusal('key:k', 2_000)).toBeNull();
      vi.advanceTimersByTime(1_999);
    }
    expect(await limiter.recordRefusal('key:k', 2_000)).not.toBeNull();
  });

  it('keeps the later of two waits, and keeps subjects apart', async () => {
    const limiter = new FlexibleRateLimiter(config);
    await limiter.recordRefusal('key:k', 60_000);
    // A shorter wait told meanwhile (the burst's second) does not shorten the minute's.
    await limiter.recordRefusal('key:k', 1_000);
    vi.advanceTimersByTime(30_000);
    for (let i = 0; i < 2; i++) expect(await limiter.recordRefusal('key:k', 30_000)).toBeNull();
    expect(await limiter.recordRefusal('key:other', 1_000)).toBeNull();
    expect(await limiter.recordRefusal('key:k', 30_000)).not.toBeNull();
  });

  it('forgets violations older than the window', async () => {
    const limiter = new FlexibleRateLimiter(config);
    for (let i = 0; i < 4; i++) await limiter.recordRefusal('ip:a', 900_000);
    vi.advanceTimersByTime(600_001);
    expect(await limiter.recordRefusal('ip:a', 1_000)).toBeNull();
  });

  it('never suspends when suspension is off', async () => {
    const limiter = new FlexibleRateLimiter({ ...config, suspension: null });
    for (let i = 0; i < 20; i++) expect(await limiter.recordRefusal('key:k', 60_000)).toBeNull();
    expect((await limiter.consume([{ policy: 'key', subject: 'key:k' }])).suspended).toBeNull();
  });
});
