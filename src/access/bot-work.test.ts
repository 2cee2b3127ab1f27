import { describe, expect, it } from 'vitest';
import type { ClaimedAccess } from '../store/access-worker.store.js';
import { BotWork, guildOf, type Call, type OutcomeRecorder } from './bot-work.js';

const G1 = '111111111111111111';
const G2 = '222222222222222222';

let n = 0;
const row = (targetId: string, guildId = G1, kind: 'role' | 'guild' = 'role'): ClaimedAccess => ({
  targetId,
  userId: String(++n),
  kind,
  externalId: kind === 'guild' ? guildId : `role-${targetId}`,
  guildId: kind === 'role' ? guildId : null,
  onExpiry: 'remove_role',
  desired: 'granted',
  applied: null,
  attempt: 1,
  membershipId: null,
  banned: false,
});
/** The choice of what to call next writes nothing. */
const noWrites: OutcomeRecorder = {
  record: () => Promise.reject(new Error('BotWork does not write outcomes')),
  unwritten: 0,
};
const work = () => new BotWork(noWrites);
const out = (w: BotWork, r: ClaimedAccess, path: string | null = null) =>
  w.calls.set(`${r.targetId}:${r.userId}`, { row: r, path, controller: new AbortController(), promise: Promise.resolve(), waitingUntil: 0 } satisfies Call);

describe('BotWork: what to call next', () => {
  it('takes one row per target, in claim order, up to the room', () => {
    const w = work();
    const [a1, a2, b1, c1] = [row('a'), row('a'), row('b'), row('c')];
    w.buffer = [a1!, a2!, b1!, c1!];
    expect(w.take(2, 0)).toStrictEqual([a1, b1]);
    expect(w.buffer).toStrictEqual([a2, c1]);
  });

  it('skips targets with a call out, and drops rows of a blamed target', () => {
    const w = work();
    const [a1, a2, b1, b2] = [row('a'), row('a'), row('b'), row('b')];
    out(w, a1!);
    w.buffer = [a2!, b1!, b2!];
    w.faulted.set('b', Number.POSITIVE_INFINITY);
    expect(w.take(8, 0)).toStrictEqual([]);
    expect(w.buffer).toStrictEqual([a2]);
    expect(w.ready(0)).toBe(0);
  });

  it('holds rows of a guild whose bucket is empty, and frees the slot of the call the library holds back', () => {
    const w = work();
    const waiting = row('a', G1);
    out(w, waiting, `/guilds/${G1}/members/${waiting.userId}/roles/${waiting.externalId}`);
    const [g1, g2] = [row('b', G1), row('c', G2, 'guild')];
    w.buffer = [g1!, g2!];
    expect(w.active(1_000)).toBe(1);
    const until = w.rateLimited({ global: false, majorParameter: G1, timeToReset: 500, url: `https://discord.test/api/v10/guilds/${G1}/members/${waiting.userId}/roles/${waiting.externalId}` }, 1_000);
    expect(until).toBe(1_500);
    expect(w.active(1_000)).toBe(0);
    expect(w.limitedNow(1_000)).toStrictEqual([G1]);
    expect(w.bufferedWithRoom(1_000)).toBe(1);
    expect(w.ready(1_000)).toBe(1);
    expect(w.take(8, 1_000)).toStrictEqual([g2]);
    expect(w.nextRoomAt(1_000)).toBe(1_500);
    expect(w.take(8, 1_500)).toStrictEqual([g1]);
    expect(w.nextRoomAt(1_500)).toBeNull();
  });

  it('ignores the global limit (everything waits alike)', () => {
    const w = work();
    expect(w.rateLimited({ global: true, majorParameter: 'global', timeToReset: 900, url: 'x' }, 0)).toBeNull();
    expect(w.limitedNow(0)).toStrictEqual([]);
  });

  it('forgets a blamed target once a claim that started after its failure was written has ended', () => {
    const w = work();
    w.claims = 3;
    w.faulted.set('a', w.claims + 1);
    w.claimEnded(3);
    expect(w.faulted.has('a')).toBe(true);
    w.claimEnded(4);
    expect(w.faulted.has('a')).toBe(false);
  });

  it('knows the guild of a row', () => {
    expect(guildOf(row('a', G2))).toBe(G2);
    expect(guildOf(row('g', G1, 'guild'))).toBe(G1);
  });
});
