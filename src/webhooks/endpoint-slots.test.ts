import { describe, expect, it } from 'vitest';
import { EndpointSlots } from './endpoint-slots.js';

describe('per-endpoint send slots', () => {
  it('lets `perEndpoint` deliveries of an endpoint send at once; the others wait, first come first served', async () => {
    const slots = new EndpointSlots(2);
    const signal = new AbortController().signal;
    for (let i = 0; i < 5; i++) slots.onClaimed('a');
    slots.onClaimed('b');
    const order: number[] = [];
    const turns = [0, 1, 2, 3, 4].map((i) => slots.takeTurn('a', signal).then((ok) => ok && order.push(i)));
    expect(await slots.takeTurn('b', signal)).toBe(true); // another endpoint is not held up
    await Promise.resolve();
    expect(order).toStrictEqual([0, 1]);
    expect(slots.queued).toBe(3);

    expect(slots.done('a', true)).toBe(4);
    await Promise.resolve();
    expect(order).toStrictEqual([0, 1, 2]);
    slots.done('a', true);
    slots.done('a', true);
    await Promise.all(turns);
    expect(order).toStrictEqual([0, 1, 2, 3, 4]);
    expect(slots.queued).toBe(0);
  });

  it('bounds what may be claimed at four rounds and names the endpoints at that bound', () => {
    const slots = new EndpointSlots(3);
    expect(slots.claimBound()).toBe(12);
    for (let i = 0; i < 12; i++) slots.onClaimed('full');
    slots.onClaimed('room');
    expect(slots.saturated()).toStrictEqual(['full']);
    slots.done('full', false);
    expect(slots.saturated()).toStrictEqual([]);
  });

  it('lets a waiting delivery go when its worker stops', async () => {
    const slots = new EndpointSlots(1);
    const stop = new AbortController();
    slots.onClaimed('a');
    slots.onClaimed('a');
    expect(await slots.takeTurn('a', stop.signal)).toBe(true);
    const waiting = slots.takeTurn('a', stop.signal);
    expect(slots.queued).toBe(1);
    stop.abort();
    expect(await waiting).toBe(false);
    expect(slots.queued).toBe(0);
    // The turn it never got is not handed to anyone: the sender's release frees the slot.
    expect(slots.done('a', false)).toBe(1);
    expect(slots.done('a', true)).toBe(0);
    expect(await slots.takeTurn('a', new AbortController().signal)).toBe(true);
  });
});
