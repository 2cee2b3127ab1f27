import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDED_VACUUM_THRESHOLDS, EmbeddedVacuumer } from '../../src/domain/retention/embedded.vacuumer.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf, type Database } from '../../src/database/db.js';
import { MaintenanceStore } from '../../src/store/maintenance.store.js';
import { openMigratedPglite } from '../support/harness.js';

/**
 * What a pass of embedded storage's vacuumer reclaims (docs/operations.md, "Embedded storage
 * maintenance"), on a PGlite of its own whatever the tier's storage: the vacuumer runs on embedded
 * storage only (test/storage/embedded-vacuum.test.ts), which runs no autovacuum.
 */

let database: Database;
beforeAll(async () => {
  database = await openMigratedPglite();
});
afterAll(() => database.close());

describe('embedded storage maintenance on PGlite', () => {
  it('reclaims the dead rows of churned tables, one table a statement, and leaves quiet ones alone', async () => {
    const db = database.db;
    // PGlite hands its counts to pg_stat_* at most once a second unless told to.
    const counts = async (table: string) => {
      await db.execute(sql`SELECT pg_stat_force_next_flush()`);
      return rowsOf<{ dead: number; vacuums: number }>(
        await db.execute(sql`
          SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums
          FROM pg_stat_user_tables WHERE relname = ${table}`),
      )[0]!;
    };
    // The broadcaster's churn: a row per event, pending, then marked broadcast (a new version each).
    const churnBroadcasts = async (from: number, n: number) => {
      await db.execute(sql`INSERT INTO event_broadcasts (seq) SELECT g FROM generate_series(${from}::bigint, ${from + n - 1}::bigint) g`);
      await db.execute(sql`UPDATE event_broadcasts SET broadcast_at = now() WHERE seq >= ${from} AND broadcast_at IS NULL`);
    };
    const base = 9_000_000_000;
    await churnBroadcasts(base, 5_000);
    // The planner's churn: a row per event, deleted once read.
    await db.execute(sql`INSERT INTO event_plan_queue (seq) SELECT g FROM generate_series(${base}::bigint, ${base + 1_999}::bigint) g`);
    await db.execute(sql`DELETE FROM event_plan_queue WHERE seq >= ${base}`);
    expect((await counts('event_broadcasts')).dead).toBeGreaterThanOrEqual(5_000);
    expect((await counts('event_plan_queue')).dead).toBeGreaterThanOrEqual(2_000);
    // A table nothing churned (below the threshold) is left alone.
    const quietBefore = await counts('idempotency_keys');

    const vacuumer = new EmbeddedVacuumer(new MaintenanceStore(db), createLogger('silent'), {
      intervalMs: 60_000,
      thresholds: EMBEDDED_VACUUM_THRESHOLDS,
    });
    const broadcastsBefore = await counts('event_broadcasts');
    const done = await vacuumer.vacuumOnce();
    expect(done.map((d) => d.table)).toEqual(expect.arrayContaining(['event_broadcasts', 'event_plan_queue']));
    expect(done.find((d) => d.table === 'event_broadcasts')).toMatchObject({ vacuumed: true });
    expect(await counts('event_broadcasts')).toStrictEqual({ dead: 0, vacuums: broadcastsBefore.vacuums + 1 });
    expect((await counts('event_plan_queue')).dead).toBe(0);
    expect(done.some((d) => d.table === 'idempotency_keys')).toBe(false);
    expect((await counts('idempotency_keys')).vacuums).toBe(quietBefore.vacuums);

    // The space of the reclaimed rows is used again: a second round of the same churn fits in the
    // pages of the first (without the vacuum it needs as much again).
    const size = async () =>
      rowsOf<{ heap: number; pending: number }>(
        await db.execute(sql`
          SELECT pg_relation_size('event_broadcasts')::int AS heap, pg_relation_size('event_broadcasts_pending_idx')::int AS pending`),
      )[0]!;
    await db.execute(sql`DELETE FROM event_broadcasts WHERE seq >= ${base}`);
    await vacuumer.vacuumOnce();
    const afterFirst = await size();
    await churnBroadcasts(base, 5_000);
    await db.execute(sql`DELETE FROM event_broadcasts WHERE seq >= ${base}`);
    await vacuumer.vacuumOnce();
    expect(await size()).toStrictEqual(afterFirst);

    // Nothing left to do: nothing done.
    expect((await vacuumer.vacuumOnce()).some((d) => d.table === 'event_broadcasts')).toBe(false);
  });
});
