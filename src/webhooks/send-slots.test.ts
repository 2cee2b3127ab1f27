import { describe, expect, it } from 'vitest';
import { projectConcurrency, SendSlots, SLOW_MS, type SlotKey } from './send-slots.js';

let made = 0;
const on = (webhookId: string, projectId = 'p'): SlotKey => ({ id: `d${made++}`, webhookId, projectId });
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A clock the test moves. */
function clock() {
  let at = 0;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

describe('send slots per endpoint and per project', () => {
  it('lets `perEndpoint` deliveries of an endpoint send at once; the others wait, first come first served', async () => {
    const slots = new SendSlots(2, 10);
    const signal = new AbortController().signal;
    const a = [0, 1, 2, 3, 4].map(() => on('a'));
    for (const d of a) slots.onClaimed(d);
    const b = on('b');
    slots.onClaimed(b);
    const order: number[] = [];
    const turns = a.map((d, i) => slots.takeTurn(d, signal).then((ok) => ok && order.push(i)));
    expect(await slots.takeTurn(b, signal)).toBe(true); // another endpoint is not held up
    await settle();
    expect(order).toStrictEqual([0, 1]);
    expect(slots.queued).toBe(3);

    expect(slots.done(a[0]!, 'sent')).toStrictEqual({ endpoint: 4, project: 5 });
    await settle();
    expect(order).toStrictEqual([0, 1, 2]);
    slots.done(a[1]!, 'sent');
    slots.done(a[2]!, 'sent');
    await Promise.all(turns);
    expect(order).toStrictEqual([0, 1, 2, 3, 4]);
    expect(slots.queued).toBe(0);
  });

  it("lets a slow project's endpoints together send at most `perProject` at once, whatever each endpoint's room", async () => {
    const time = clock();
    const slots = new SendSlots(2, 3, time.now);
    const signal = new AbortController().signal;
    const sending: string[] = [];
    const take = (d: SlotKey) => slots.takeTurn(d, signal).then((ok) => ok && sending.push(`${d.projectId}/${d.webhookId}`));
    const busy = ['a', 'a', 'b', 'b', 'c'].map((hook) => on(hook, 'busy'));
    for (const d of busy) slots.onClaimed(d);
    const other = on('x', 'other');
    slots.onClaimed(other);
    // Nobody has heard from either project's receivers yet: both count as slow.
    const turns = busy.map(take);
    await take(other); // another project is not held up by the busy one
    await settle();
    expect(sending).toStrictEqual(['busy/a', 'busy/a', 'busy/b', 'other/x']);
    expect(slots.queued).toBe(2); // b's second and c's first: their endpoints have room, their project has none

    // The first to finish, after SLOW_MS (the project stays slow), hands the project's turn to the first in line for it.
    time.advance(SLOW_MS);
    slots.done(busy[0]!, 'sent');
    await settle();
    expect(sending).toStrictEqual(['busy/a', 'busy/a', 'busy/b', 'other/x', 'busy/b']);
    slots.done(busy[1]!, 'sent');
    await Promise.all(turns);
    expect(sending.at(-1)).toBe('busy/c');
    expect(slots.queued).toBe(0);
  });

  it('lifts the project bound while its receivers answer fast, and sets it again once a request is out for SLOW_MS', async () => {
    const time = clock();
    const slots = new SendSlots(10, 2, time.now);
    const signal = new AbortController().signal;
    const first = [on('a'), on('a')];
    const more = [on('a'), on('a'), on('a'), on('a')];
    for (const d of [...first, ...more]) slots.onClaimed(d);
    for (const d of first) expect(await slots.takeTurn(d, signal)).toBe(true);
    expect(slots.isSlow('p')).toBe(true); // no answer yet
    const waiting = more.map((d) => slots.takeTurn(d, signal));
    await settle();
    expect(slots.queued).toBe(4);

    // One fast answer: the project is fast, and everyone waiting for it goes at once.
    time.advance(20);
    slots.done(first[0]!, 'sent');
    expect(slots.isSlow('p')).toBe(false);
    expect(await Promise.all(waiting)).toStrictEqual([true, true, true, true]);
    expect(slots.queued).toBe(0);

    // A request out for SLOW_MS makes it slow again: no new turn beyond the bound.
    time.advance(SLOW_MS);
    expect(slots.isSlow('p')).toBe(true);
    const late = on('a');
    slots.onClaimed(late);
    const lateTurn = slots.takeTurn(late, signal);
    await settle();
    expect(slots.queued).toBe(1);
    // Answers that took that long keep it slow, even once none of them is out any more.
    for (const d of [first[1]!, ...more]) slots.done(d, 'sent');
    expect(await lateTurn).toBe(true);
    expect(slots.isSlow('p')).toBe(true);
    // A fast answer again: fast (another delivery of the project stays held meanwhile).
    const held = on('a');
    slots.onClaimed(held);
    time.advance(5);
    slots.done(late, 'sent');
    expect(slots.isSlow('p')).toBe(false);
    // Once the worker holds nothing of the project, what its answers showed is forgotten.
    slots.done(held, 'none');
    expect(slots.isSlow('p')).toBe(true);
  });

  it('does not count a turn given up before sending as an answer', async () => {
    const time = clock();
    const slots = new SendSlots(10, 2, time.now);
    const d = on('a');
    const keep = on('a');
    slots.onClaimed(d);
    slots.onClaimed(keep);
    await slots.takeTurn(d, new AbortController().signal);
    slots.done(d, 'unused');
    expect(slots.isSlow('p')).toBe(true);
  });

  it('bounds what may be claimed at four rounds and names the endpoints and projects at that bound', () => {
    const slots = new SendSlots(3, 5);
    expect(slots.claimBounds()).toMatchObject({ perEndpoint: 12, perProject: 20 });
    const full = Array.from({ length: 12 }, () => on('full', 'p'));
    for (const d of full) slots.onClaimed(d);
    slots.onClaimed(on('room', 'p'));
    expect(slots.saturated()).toStrictEqual({ webhooks: ['full'], projects: [] });
    for (let i = 0; i < 7; i++) slots.onClaimed(on(`h${i}`, 'p'));
    expect(slots.saturated()).toStrictEqual({ webhooks: ['full'], projects: ['p'] });
    expect(slots.claimBounds().projectsInFlight.get('p')).toBe(20);
    slots.done(full[0]!, 'none');
    expect(slots.saturated()).toStrictEqual({ webhooks: [], projects: [] });
  });

  it('lets a waiting delivery go when its worker stops, keeping no turn', async () => {
    const slots = new SendSlots(1, 2);
    const stop = new AbortController();
    const [a, b] = [on('a'), on('a')];
    slots.onClaimed(a!);
    slots.onClaimed(b!);
    expect(await slots.takeTurn(a!, stop.signal)).toBe(true);
    const waiting = slots.takeTurn(b!, stop.signal);
    expect(slots.queued).toBe(1);
    stop.abort();
    expect(await waiting).toBe(false);
    expect(slots.queued).toBe(0);
    // The turn it never got is not handed to anyone: the sender's release frees the slot.
    expect(slots.done(b!, 'none')).toStrictEqual({ endpoint: 1, project: 1 });
    expect(slots.done(a!, 'sent')).toStrictEqual({ endpoint: 0, project: 0 });
    expect(await slots.takeTurn(on('a'), new AbortController().signal)).toBe(true);
  });

  it("gives the endpoint's turn back when stopped while waiting for the project's", async () => {
    const slots = new SendSlots(1, 1);
    const stop = new AbortController();
    const live = new AbortController().signal;
    const a = on('a');
    expect(await slots.takeTurn(a, live)).toBe(true);
    const waiting = slots.takeTurn(on('b'), stop.signal); // b's endpoint is free; its (slow) project is not
    await settle();
    stop.abort();
    expect(await waiting).toBe(false);
    slots.done(a, 'sent');
    expect(await slots.takeTurn(on('b'), live)).toBe(true); // b's endpoint turn was given back
  });

  it("gives a slow project half the process's requests, and never fewer than two endpoints' worth", () => {
    expect(projectConcurrency(64, 8)).toBe(32);
    expect(projectConcurrency(4, 2)).toBe(4);
    expect(projectConcurrency(100, 1)).toBe(50);
  });
});
