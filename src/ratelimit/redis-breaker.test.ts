import { describe, expect, it } from 'vitest';
import { Breaker, ClockOffset } from './redis-breaker.js';

describe('Breaker', () => {
  it('starts open and closes on the first answer without a grace or a recovery', () => {
    const b = new Breaker(10_000);
    expect(b.closed).toBe(false);
    expect(b.settled(0)).toBe(false);
    expect(b.close(1_000)).toBe(false);
    expect(b.closed).toBe(true);
    expect(b.settled(1_000)).toBe(true);
  });

  it('reports an unreachable Redis at start once', () => {
    const b = new Breaker(10_000);
    expect(b.open()).toBe(true);
    expect(b.open()).toBe(false);
  });

  it('opens once on failures, and its recovery is announced once', () => {
    const b = new Breaker(10_000);
    b.close(0);
    expect(b.open()).toBe(true);
    expect(b.open()).toBe(false);
    expect(b.closed).toBe(false);
    expect(b.settled(5_000)).toBe(false);
    expect(b.close(20_000)).toBe(true);
    expect(b.close(20_100)).toBe(false);
    expect(b.closed).toBe(true);
  });

  it('counts refusals toward a suspension only after the grace that follows a recovery', () => {
    const b = new Breaker(10_000);
    b.close(0);
    b.open();
    b.close(20_000);
    expect(b.settled(20_000)).toBe(false);
    expect(b.settled(29_999)).toBe(false);
    expect(b.settled(30_000)).toBe(true);
    b.open();
    expect(b.settled(40_000)).toBe(false);
  });
});

describe('ClockOffset', () => {
  it('has no estimate before a sample', () => {
    expect(new ClockOffset().value).toBeNull();
  });

  it('takes the middle of the round trip', () => {
    const c = new ClockOffset();
    // Sent at 1000, answered at 1010 with Redis's clock reading 5005: Redis is 4000 ahead.
    c.add(1_000, 1_010, 5_005);
    expect(c.value).toBe(4_000);
  });

  it('trusts the promptest of the latest samples', () => {
    const c = new ClockOffset(3);
    c.add(0, 200, 4_300); // slow: says 4200
    c.add(1_000, 1_002, 5_001); // prompt: 4000
    c.add(2_000, 2_100, 6_150); // slow: 4100
    expect(c.value).toBe(4_000);
    c.add(3_000, 3_050, 7_025); // pushes the oldest out; the prompt one stays
    expect(c.value).toBe(4_000);
    c.add(4_000, 4_040, 8_020);
    c.add(5_000, 5_040, 9_020); // the prompt one is now out of the latest three
    expect(c.value).toBe(4_000);
    c.add(6_000, 6_010, 10_105);
    expect(c.value).toBe(4_100);
  });

  it('forgets every sample on reset', () => {
    const c = new ClockOffset();
    c.add(0, 2, 4_001);
    c.reset();
    expect(c.value).toBeNull();
  });
});
