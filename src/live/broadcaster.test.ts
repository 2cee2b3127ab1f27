import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { Broadcaster, UNHEARD_MARK_MS, type EventClaims } from './broadcaster.js';

/** A store that counts claims (each finds nothing left), recording whether each had an audience. */
function countingStore() {
  const claims: boolean[] = [];
  const store: EventClaims = {
    claim: async (_limit, _emit, audience = () => true) => {
      claims.push(audience());
      return 0;
    },
  };
  return { store, claims };
}

/** Starts it and lets the pass every start makes run, then forgets that pass. */
async function started(broadcaster: Broadcaster, claims: boolean[]): Promise<void> {
  broadcaster.start();
  await sleep(20);
  expect(claims).toHaveLength(1);
  claims.length = 0;
}

describe('Broadcaster wake-ups', () => {
  let broadcaster: Broadcaster | null = null;
  afterEach(() => broadcaster?.stop());

  it('claims at once when someone can hear the events', async () => {
    const { store, claims } = countingStore();
    broadcaster = new Broadcaster(store, () => undefined, createLogger('silent'), { pollMs: 60_000, audience: () => true });
    await started(broadcaster, claims);
    broadcaster.wake();
    await sleep(20);
    expect(claims).toStrictEqual([true]);
  });

  it('with nobody listening, marks once per UNHEARD_MARK_MS however many wake-ups come', async () => {
    const { store, claims } = countingStore();
    broadcaster = new Broadcaster(store, () => undefined, createLogger('silent'), { pollMs: 60_000, audience: () => false });
    await started(broadcaster, claims);
    for (let i = 0; i < 10; i++) {
      broadcaster.wake();
      await sleep(5);
    }
    expect(claims).toStrictEqual([]);
    await sleep(UNHEARD_MARK_MS + 50);
    expect(claims).toStrictEqual([false]);
    broadcaster.wake();
    await sleep(UNHEARD_MARK_MS + 50);
    expect(claims).toStrictEqual([false, false]);
  });

  it('a stop drops a deferred pass', async () => {
    const { store, claims } = countingStore();
    broadcaster = new Broadcaster(store, () => undefined, createLogger('silent'), { pollMs: 60_000, audience: () => false });
    await started(broadcaster, claims);
    broadcaster.wake();
    await broadcaster.stop();
    broadcaster = null;
    await sleep(UNHEARD_MARK_MS + 50);
    expect(claims).toStrictEqual([]);
  });
});
