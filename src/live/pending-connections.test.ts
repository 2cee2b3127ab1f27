import { describe, expect, it } from 'vitest';
import { PendingConnections } from './pending-connections.js';

describe('PendingConnections', () => {
  it('gives an address max places, then lets max more open only to be refused, then none', () => {
    const pending = new PendingConnections(2);
    const opened = Array.from({ length: 4 }, () => pending.open('a'));
    expect(opened.map((c) => c.withinCap)).toStrictEqual([true, true, false, false]);
    expect(pending.mayOpen('a')).toBe(false);
    expect(pending.mayOpen('b')).toBe(true);
    expect(pending.open('b').withinCap).toBe(true);
  });

  it('frees a place once, however often a connection settles', () => {
    const pending = new PendingConnections(2);
    const [first, second] = [pending.open('a'), pending.open('a')];
    first.settle();
    first.settle();
    expect(first.isSettled).toBe(true);
    expect(pending.open('a').withinCap).toBe(true);
    expect(pending.open('a').withinCap).toBe(false);
    second.settle();
    expect(pending.open('a').withinCap).toBe(true);
  });

  it('frees the turn of a connection refused past the cap without giving it a place', () => {
    const pending = new PendingConnections(1);
    pending.open('a');
    const refused = [pending.open('a')];
    expect(pending.mayOpen('a')).toBe(false);
    refused[0]!.settle();
    expect(pending.mayOpen('a')).toBe(true);
    expect(pending.open('a').withinCap).toBe(false);
  });
});
