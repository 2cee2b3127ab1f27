import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { insertEvent } from '../store/outbox.js';
import { markWrites, topicsWritten, WAKE_CHANNELS, Wakeups, type WakeTransport } from './wakeups.js';

describe('topicsWritten', () => {
  it('finds the marks of fragments nested anywhere in a statement', () => {
    const event = insertEvent('membership.bulk-extended', {
      projectId: sql`${'p'}`,
      data: { total: sql<number>`1`, new_end_date: sql<string>`'x'` },
    });
    const statement = sql`WITH upd AS (UPDATE memberships SET end_date = now()), ev AS (${event}) SELECT 1`;
    expect(topicsWritten(statement)).toEqual(new Set(['events', 'deliveries']));
    expect(topicsWritten(sql`SELECT ${[sql`1`, markWrites(sql`2`, ['deliveries'])]}`)).toEqual(new Set(['deliveries']));
  });

  it('finds nothing in a statement that writes no outbox row', () => {
    expect(topicsWritten(sql`UPDATE memberships SET end_date = ${new Date()} WHERE id = ${'x'}`).size).toBe(0);
    expect(topicsWritten('INSERT INTO events')).toEqual(new Set());
  });
});

describe('Wakeups', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const fakeTransport = () => {
    const sent: [string, string][] = [];
    const listeners = new Map<string, (payload: string | null) => void>();
    const transport: WakeTransport = {
      send: async (channel, payload) => void sent.push([channel, payload]),
      listen: async (channel, handler) => {
        listeners.set(channel, handler);
        return () => listeners.delete(channel);
      },
    };
    return { sent, listeners, transport };
  };

  it('wakes at once for the first write, then at most once per interval while writes keep coming', async () => {
    const w = new Wakeups(() => undefined, 10);
    const woken = vi.fn();
    await w.subscribe('events', woken);
    w.written(['events']);
    expect(woken).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 50; i++) w.written(['events']);
    expect(woken).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10);
    expect(woken).toHaveBeenCalledTimes(2); // the trailing edge: the writes of the interval
    vi.advanceTimersByTime(10);
    expect(woken).toHaveBeenCalledTimes(2); // nothing since
    vi.advanceTimersByTime(100);
    w.written(['events']);
    expect(woken).toHaveBeenCalledTimes(3); // idle again: at once
  });

  it('wakes only the subscribers of the topics written', async () => {
    const w = new Wakeups(() => undefined, 10);
    const events = vi.fn();
    const deliveries = vi.fn();
    await w.subscribe('events', events);
    const stop = await w.subscribe('deliveries', deliveries);
    w.written(['deliveries']);
    expect([events.mock.calls.length, deliveries.mock.calls.length]).toEqual([0, 1]);
    stop();
    vi.advanceTimersByTime(20);
    w.written(['deliveries']);
    expect(deliveries).toHaveBeenCalledTimes(1);
  });

  it('tells other processes once per interval, with its id, and ignores its own signal', async () => {
    const { sent, listeners, transport } = fakeTransport();
    const w = new Wakeups(() => undefined, 10);
    w.connect(transport);
    const woken = vi.fn();
    await w.subscribe('deliveries', woken);
    for (let i = 0; i < 20; i++) w.written(['deliveries']);
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toEqual([
      [WAKE_CHANNELS.deliveries, w.nodeId],
      [WAKE_CHANNELS.deliveries, w.nodeId],
    ]);
    expect(woken).toHaveBeenCalledTimes(2);
    const hear = listeners.get(WAKE_CHANNELS.deliveries)!;
    await vi.advanceTimersByTimeAsync(100);
    hear(w.nodeId);
    expect(woken).toHaveBeenCalledTimes(2);
    hear('another-node');
    expect(woken).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(100);
    hear(null); // the listener reconnected: signals may have been missed
    expect(woken).toHaveBeenCalledTimes(4);
  });

  it('sends what is pending on flush, and reports a failed send without throwing', async () => {
    const errors: unknown[] = [];
    const w = new Wakeups((err) => errors.push(err), 10);
    w.connect({ send: () => Promise.reject(new Error('down')), listen: async () => () => undefined });
    w.written(['events']);
    w.written(['events']);
    await w.flush();
    expect(errors).toHaveLength(2);
  });
});
