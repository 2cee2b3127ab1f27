import { sql } from 'drizzle-orm';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { rowsOf } from '../../src/store/db.js';
import { MembershipsStore } from '../../src/store/memberships.store.js';
import { WAKE_INTERVAL_MS } from '../../src/store/wakeups.js';
import { future, onPostgres, useHarness, userId } from '../support/harness.js';

/**
 * extendOne runs as a named prepared statement (src/store/prepared.ts): on PostgreSQL each pooled
 * connection prepares it once and reuses it. These tests hold it to what the unnamed statement did:
 * the change and its event in one statement, the previous end date of the very row it changed
 * (concurrent extends of one member chain), a wake-up once committed, and, given a transaction's
 * handle, a statement of that transaction that wakes only at its commit.
 */

const h = useHarness();

const extendedEvents = async (projectId: string) =>
  rowsOf<{ membership_end_date: string; previous_end_date: string }>(
    await h.database.db.execute(sql`
      SELECT data->'membership'->>'membership_end_date' AS membership_end_date, data->>'previous_end_date' AS previous_end_date
      FROM events WHERE project_id = ${projectId} AND type = 'membership.extended' ORDER BY seq`),
  );

describe(`extendOne as a prepared statement (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('answers and records the previous end date on every pooled connection, one event per extend', async () => {
    const t = await h.tenant();
    const user = userId();
    let previous = future(1).iso;
    const created = await h.services.memberships.create(t.projectId, { user_id: user, end_date: previous });
    expect(created.ok).toBe(true);
    const store = new MembershipsStore(h.database.db);
    // More calls than the pool has connections, in sequence: each connection runs it at least
    // once prepared and then again from its own prepared statement.
    for (let day = 2; day <= 25; day++) {
      const next = new Date(future(day).ms);
      const extended = await store.extendOne(t.projectId, user, next);
      expect(extended?.previousEndDate).toBe(previous);
      previous = next.toISOString();
    }
    const events = await extendedEvents(t.projectId);
    expect(events).toHaveLength(24);
    for (let i = 1; i < events.length; i++) expect(events[i]!.previous_end_date).toBe(events[i - 1]!.membership_end_date);
    expect(await store.extendOne(t.projectId, userId(), new Date(future(3).ms))).toBeNull();
  });

  it('chains concurrent extends of one member: each event names the end date the one before it set', async () => {
    const t = await h.tenant();
    const user = userId();
    const start = future(1).iso;
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: start })).ok).toBe(true);
    const store = new MembershipsStore(h.database.db);
    const dates = Array.from({ length: 12 }, (_, i) => new Date(future(40 + i).ms));
    await Promise.all(dates.map((d) => store.extendOne(t.projectId, user, d)));
    const events = await extendedEvents(t.projectId);
    expect(events).toHaveLength(12);
    expect(events[0]!.previous_end_date).toBe(start);
    for (let i = 1; i < events.length; i++) expect(events[i]!.previous_end_date).toBe(events[i - 1]!.membership_end_date);
    expect(new Set(events.map((e) => e.membership_end_date))).toStrictEqual(new Set(dates.map((d) => d.toISOString())));
  });

  it('wakes the live broadcaster once the extend and its event are committed', async () => {
    const t = await h.tenant();
    const user = userId();
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: future(1).iso })).ok).toBe(true);
    await sleep(3 * WAKE_INTERVAL_MS);
    const seen: number[] = [];
    const stop = await h.database.wakeups.subscribe('events', () => {
      void extendedEvents(t.projectId).then((e) => seen.push(e.length));
    });
    try {
      await new MembershipsStore(h.database.db).extendOne(t.projectId, user, new Date(future(5).ms));
      await vi.waitFor(() => expect(seen).toContain(1), { timeout: 5_000, interval: 20 });
    } finally {
      stop();
    }
  });

  it("in a transaction, is one of the transaction's statements: rolled back with it, and no wake-up", async () => {
    const t = await h.tenant();
    const user = userId();
    const start = future(1).iso;
    expect((await h.services.memberships.create(t.projectId, { user_id: user, end_date: start })).ok).toBe(true);
    await sleep(3 * WAKE_INTERVAL_MS);
    let woken = 0;
    const stop = await h.database.wakeups.subscribe('events', () => woken++);
    try {
      await expect(
        h.database.db.transaction(async (tx) => {
          const extended = await new MembershipsStore(tx).extendOne(t.projectId, user, new Date(future(9).ms));
          expect(extended?.previousEndDate).toBe(start);
          throw new Error('abandon');
        }),
      ).rejects.toThrow('abandon');
      await sleep(3 * WAKE_INTERVAL_MS);
      expect(woken).toBe(0);
      expect(await extendedEvents(t.projectId)).toHaveLength(0);
      await h.database.db.transaction((tx) => new MembershipsStore(tx).extendOne(t.projectId, user, new Date(future(9).ms)));
      await vi.waitFor(() => expect(woken).toBeGreaterThan(0));
      expect(await extendedEvents(t.projectId)).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
