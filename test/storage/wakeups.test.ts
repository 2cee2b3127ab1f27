import { sql } from 'drizzle-orm';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { openDatabase, rowsOf, type Database } from '../../src/database/db.js';
import { insertEvent } from '../../src/store/outbox.js';
import { WAKE_INTERVAL_MS, type WakeTopic } from '../../src/database/wakeups.js';
import { future, onPostgres, useHarness, userId } from '../support/harness.js';

/**
 * Wake-ups after commit (src/database/wakeups.ts): a write of outbox rows wakes the subscribers of
 * its process once it has committed, never for a rolled-back one, and on PostgreSQL the other
 * processes too, by a NOTIFY sent outside the writing transaction. No trigger notifies any more
 * (test/storage/definitions.test.ts holds the database to drizzle/functions.sql).
 */

const h = useHarness();

/**
 * Subscribes to `topic` and records what `check` saw inside each wake-up. A trailing signal of an
 * earlier write in the same database may wake the subscriber first (and see nothing yet), so tests
 * claim that some wake-up saw the change, not that the first one did.
 */
async function recordWakes<T>(database: Database, topic: WakeTopic, check: () => Promise<T>) {
  const seen: T[] = [];
  const stop = await database.wakeups.subscribe(topic, () => {
    void check().then((value) => seen.push(value));
  });
  return { seen, stop };
}

const countEvents = async (database: Database, projectId: string) =>
  rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${projectId}`))[0]!.n;

const bulkEvent = (projectId: string) =>
  insertEvent('membership.bulk-extended', {
    projectId: sql`${projectId}::uuid`,
    data: { total: sql<number>`0`, new_end_date: sql<string>`'2030-01-01T00:00:00.000Z'::text` },
  });

describe(`wake-ups after commit (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it("wakes this process's subscribers once the change and its event are committed and visible", async () => {
    const t = await h.tenant();
    const { seen, stop } = await recordWakes(h.database, 'events', () => countEvents(h.database, t.projectId));
    try {
      const created = await h.services.memberships.create(t.projectId, { user_id: userId(), end_date: future().iso });
      expect(created.ok).toBe(true);
      await vi.waitFor(() => expect(seen).toContain(1), { timeout: 5_000, interval: 20 });
    } finally {
      stop();
    }
  });

  it('wakes after the whole transaction commits, and never for one rolled back', async () => {
    const t = await h.tenant();
    let woken = 0;
    const stop = await h.database.wakeups.subscribe('events', () => woken++);
    try {
      await expect(
        h.database.db.transaction(async (tx) => {
          await tx.execute(bulkEvent(t.projectId));
          throw new Error('abandon');
        }),
      ).rejects.toThrow('abandon');
      // Past any trailing wake-up of an earlier test's writes.
      await sleep(3 * WAKE_INTERVAL_MS);
      expect(woken).toBe(0);
      await h.database.db.transaction(async (tx) => {
        await tx.execute(bulkEvent(t.projectId));
        expect(woken).toBe(0); // not before the commit
      });
      await vi.waitFor(() => expect(woken).toBe(1));
      expect(await countEvents(h.database, t.projectId)).toBe(1);
    } finally {
      stop();
    }
  });

  it('does not wake for writes without outbox rows', async () => {
    const t = await h.tenant();
    let woken = 0;
    const stop = await h.database.wakeups.subscribe('events', () => woken++);
    await sleep(3 * WAKE_INTERVAL_MS);
    await h.database.db.execute(sql`UPDATE projects SET name = name WHERE id = ${t.projectId}`);
    await sleep(3 * WAKE_INTERVAL_MS);
    stop();
    expect(woken).toBe(0);
  });

  // Embedded storage has one process: there is no other to wake.
  if (onPostgres) it('wakes another process, by a NOTIFY sent after the commit', async () => {
    const other = await openDatabase(h.storage);
    try {
      const t = await h.tenant();
      const { seen, stop } = await recordWakes(other, 'deliveries', () => countEvents(other, t.projectId));
      try {
        await h.database.db.execute(bulkEvent(t.projectId));
        await vi.waitFor(() => expect(seen).toContain(1), { timeout: 5_000, interval: 20 });
      } finally {
        stop();
      }
    } finally {
      await other.close();
    }
  });
});
