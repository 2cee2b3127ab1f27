import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { AccessPlanner } from './planner.js';

/** A store whose batches are scripted: each call takes the next count of events (0 once they run out). */
function scripted(counts: number[], fail = new Set<number>()) {
  let call = 0;
  let resumes = 0;
  return {
    calls: () => call,
    resumes: () => resumes,
    resume: async () => {
      resumes++;
      return 0;
    },
    planBatch: async () => {
      const n = call++;
      await new Promise((resolve) => setImmediate(resolve));
      if (fail.has(n)) throw new Error('database went away');
      return { events: counts[n] ?? 0, changed: 0 };
    },
  };
}

const options = { pollMs: 60_000, batchSize: 10 };

describe('access planner loop', () => {
  it('plans batch after batch while they come back full, and stops at the first short one', async () => {
    const store = scripted([10, 10, 3, 10]);
    const planner = new AccessPlanner(store, createLogger('silent'), options);
    planner.wake();
    await planner.idle();
    expect(store.calls()).toBe(3);
    await planner.stop();
  });

  it('a wake-up during a pass causes one more pass, not one per wake-up', async () => {
    const store = scripted([10, 2, 1]);
    const planner = new AccessPlanner(store, createLogger('silent'), options);
    planner.wake();
    planner.wake();
    planner.wake();
    await planner.idle();
    expect(store.calls()).toBe(3);
    await planner.stop();
  });

  it('a failed batch is logged and left for the next wake-up', async () => {
    const store = scripted([0, 4], new Set([0]));
    const warnings: string[] = [];
    const logger = createLogger('silent');
    logger.warn = ((_obj: unknown, msg: string) => void warnings.push(msg)) as typeof logger.warn;
    const planner = new AccessPlanner(store, logger, options);
    planner.wake();
    await planner.idle();
    expect(warnings).toStrictEqual(['access planning failed; retrying on the next wake-up']);
    planner.wake();
    await planner.idle();
    expect(store.calls()).toBe(2);
    await planner.stop();
  });

  it('finishes interrupted whole-project re-plans at its start, then only on its polls, not on wake-ups', async () => {
    const store = scripted([1, 1]);
    const planner = new AccessPlanner(store, createLogger('silent'), options);
    planner.start();
    await planner.idle();
    planner.wake();
    await planner.idle();
    expect(store.resumes()).toBe(1);
    expect(store.calls()).toBe(2);
    await planner.stop();
  });

  it('stops: no pass after stop()', async () => {
    const store = scripted([]);
    const planner = new AccessPlanner(store, createLogger('silent'), options);
    await planner.stop();
    planner.wake();
    await planner.idle();
    expect(store.calls()).toBe(0);
  });
});
