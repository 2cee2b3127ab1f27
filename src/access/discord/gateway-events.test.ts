import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { GatewayEvents, type MemberSeen } from './gateway-events.js';

const silent = pino({ level: 'silent' });

/** A repair whose statements end when the test says, recording what each was given. */
function repairs() {
  const calls: { guildId: string; members: MemberSeen[]; finish: (err?: Error) => void }[] = [];
  const repair = (_projectId: string, guildId: string, members: readonly MemberSeen[]) =>
    new Promise<void>((resolve, reject) => calls.push({ guildId, members: [...members], finish: (err) => (err ? reject(err) : resolve()) }));
  return { calls, repair };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('what a bot’s gateway heard', () => {
  it('one statement at a time: events meanwhile wait, one statement per guild, each member’s latest roles', async () => {
    const { calls, repair } = repairs();
    const events = new GatewayEvents('p', repair, silent);
    events.heard('g1', { id: 'a', roles: [] });
    await tick();
    expect(calls.map((c) => [c.guildId, c.members])).toEqual([['g1', [{ id: 'a', roles: [] }]]]);
    // While the first statement runs: a joins g2, b joins g1 and gets a role, b again.
    events.heard('g2', { id: 'a', roles: [] });
    events.heard('g1', { id: 'b', roles: [] });
    events.heard('g1', { id: 'b', roles: ['r'] });
    await tick();
    expect(calls).toHaveLength(1);
    calls[0]!.finish();
    await tick();
    expect(calls.slice(1).map((c) => [c.guildId, c.members])).toEqual([['g2', [{ id: 'a', roles: [] }]]]);
    calls[1]!.finish();
    await tick();
    expect(calls.slice(2).map((c) => [c.guildId, c.members])).toEqual([['g1', [{ id: 'b', roles: ['r'] }]]]);
    calls[2]!.finish();
    await events.idle();
    expect(calls).toHaveLength(3);
  });

  it('a failed statement is dropped (drift repair catches up) and the next events still go', async () => {
    const { calls, repair } = repairs();
    const events = new GatewayEvents('p', repair, silent);
    events.heard('g', { id: 'a', roles: [] });
    await tick();
    calls[0]!.finish(new Error('connection lost'));
    await events.idle();
    events.heard('g', { id: 'b', roles: [] });
    await tick();
    expect(calls.map((c) => c.members.map((m) => m.id))).toEqual([['a'], ['b']]);
    calls[1]!.finish();
    await events.idle();
  });
});
