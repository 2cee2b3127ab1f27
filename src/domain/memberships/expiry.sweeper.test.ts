import { describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { systemClock } from '../clock.js';
import { ExpirySweeper, type ExpiryStatements } from './expiry.sweeper.js';

/**
 * The sweep's loop on a store twin: a backlog of `due` expiries handed out in batches. The real
 * statement, its exactly-once claim and the events are proven in test/storage/expiry.sweeper.test.ts.
 */
function backlog(due: number) {
  const calls: number[] = [];
  let left = due;
  const store: ExpiryStatements = {
    async expireDue(_now: Date, limit: number) {
      await Promise.resolve();
      const n = Math.min(limit, left);
      left -= n;
      calls.push(n);
      return n;
    },
  };
  return { store, calls, left: () => left };
}

const sweeper = (store: ExpiryStatements, batchSize: number, lanes?: number) =>
  new ExpirySweeper(store, systemClock, createLogger('silent'), { intervalMs: 3_600_000, batchSize, ...(lanes ? { lanes } : {}) });

describe('ExpirySweeper.sweepOnce', () => {
  it('follows a full batch with the next at once until a short one: one sweep drains the backlog', async () => {
    const b = backlog(23);
    expect(await sweeper(b.store, 5, 1).sweepOnce()).toBe(23);
    expect(b.calls).toStrictEqual([5, 5, 5, 5, 3]);
  });

  it('runs its lanes side by side; each stops at its first short batch and together they take everything', async () => {
    const b = backlog(23);
    expect(await sweeper(b.store, 5, 3).sweepOnce()).toBe(23);
    expect(b.left()).toBe(0);
    expect(b.calls.filter((n) => n < 5)).toHaveLength(3);
  });

  it('stops after a single empty batch per lane when nothing is due', async () => {
    const b = backlog(0);
    expect(await sweeper(b.store, 5).sweepOnce()).toBe(0);
    expect(b.calls).toStrictEqual([0, 0]);
  });
});
