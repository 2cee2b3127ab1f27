import { describe, expect, it } from 'vitest';
import { SlidingBudget } from './sliding-budget.js';

function clockAt(ms: number) {
  const clock = { t: ms, now: () => new Date(clock.t) };
  return clock;
}

describe('SlidingBudget', () => {
  it('allows `limit` checks in a window, then says when the oldest leaves it', () => {
    const clock = clockAt(1_000_000);
    const budget = new SlidingBudget(3, 60_000, clock);
    for (let i = 0; i < 3; i++) {
      expect(budget.take('p')).toStrictEqual({ ok: true });
      clock.t += 10_000;
    }
    // The first check was 30 s ago: its place frees 30 s from now.
    expect(budget.take('p')).toStrictEqual({ ok: false, retryAfterSeconds: 30 });
    clock.t += 29_500;
    expect(budget.take('p')).toStrictEqual({ ok: false, retryAfterSeconds: 1 });
    clock.t += 500;
    expect(budget.take('p')).toStrictEqual({ ok: true });
    expect(budget.take('p')).toStrictEqual({ ok: false, retryAfterSeconds: 10 });
  });

  it('keeps each project’s budget apart', () => {
    const budget = new SlidingBudget(1, 60_000, clockAt(0));
    expect(budget.take('a')).toStrictEqual({ ok: true });
    expect(budget.take('a')).toStrictEqual({ ok: false, retryAfterSeconds: 60 });
    expect(budget.take('b')).toStrictEqual({ ok: true });
  });

  it('does not count refused takes against the project', () => {
    const clock = clockAt(0);
    const budget = new SlidingBudget(1, 60_000, clock);
    budget.take('p');
    for (let i = 0; i < 5; i++) budget.take('p');
    clock.t += 60_000;
    expect(budget.take('p')).toStrictEqual({ ok: true });
  });
});
