import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { useHarness } from '../support/harness.js';

/**
 * Migration 0043's backfill books existing rows as the triggers of drizzle/functions.sql book the
 * same rows written in their present state (docs/analytics.md, "Upgrading"), on both storages.
 * bench/analytics.ts seeds its facts with these statements, so they must agree.
 */
describe('analytics: the migration backfill books what the triggers book', () => {
  const h = useHarness();

  it('the same sums per day, plan and currency for memberships and payments of every kind', async () => {
    const t = await h.tenant();
    const db = h.database.db;
    const plans = rowsOf<{ id: string }>(
      await db.execute(sql`
        INSERT INTO plans (project_id, name, price, currency, duration, price_formatted, recurring, one_time) VALUES
          (${t.projectId}, 'M', 10, 'USD', '1 month', 'x', true, false), (${t.projectId}, 'D', 7, 'EUR', '30 days', 'x', true, false),
          (${t.projectId}, 'Y', 99, 'USD', '1 year', 'x', true, false)
        RETURNING id`),
    );
    const ids = `{${plans.map((p) => p.id).join(',')}}`;
    await db.execute(sql`
      INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date)
      SELECT ${t.projectId}, 'u' || g, CASE WHEN g % 4 = 0 THEN NULL ELSE (${ids}::uuid[])[1 + g % 3] END,
             timestamptz '2026-01-01T00:00:00Z' + make_interval(hours => g * 7), timestamptz '2026-01-01T00:00:00Z' + make_interval(hours => g * 7 + 24 * (1 + g % 40))
      FROM generate_series(1, 400) AS g`);
    await db.execute(sql`
      INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
      SELECT ${t.projectId}, 'stripe', 'k' || g, 'u' || g, CASE WHEN g % 5 = 0 THEN NULL ELSE (${ids}::uuid[])[1 + g % 3] END, 100 + g,
             CASE WHEN g % 3 = 1 THEN 'EUR' ELSE 'USD' END,
             CASE WHEN g % 11 = 0 THEN 'refunded' WHEN g % 13 = 0 THEN 'disputed' WHEN g % 7 = 0 THEN 'failed' ELSE 'succeeded' END,
             CASE WHEN g % 2 = 0 THEN 'sub_' || g END,
             timestamptz '2026-01-01T00:00:00Z' + make_interval(hours => g * 5),
             timestamptz '2026-01-01T00:00:00Z' + make_interval(hours => g * 5 + CASE WHEN g % 11 = 0 OR g % 13 = 0 THEN 24 * (g % 50) ELSE 0 END)
      FROM generate_series(1, 600) AS g`);
    const facts = async () =>
      rowsOf<Record<string, string>>(
        await db.execute(sql`
          SELECT day::text, plan_key::text, currency, sum(members_started)::text AS s, sum(members_ended)::text AS e, sum(gross_count)::text AS gc,
            sum(gross_minor)::text AS gm, sum(refunded_count)::text AS rc, sum(refunded_minor)::text AS rm, sum(disputed_count)::text AS dc,
            sum(disputed_minor)::text AS dm, sum(failed_count)::text AS fc, round(sum(mrr_minor), 6)::text AS mrr
          FROM analytics_days WHERE project_id = ${t.projectId}
          GROUP BY 1, 2, 3
          HAVING sum(members_started) <> 0 OR sum(members_ended) <> 0 OR sum(gross_count) <> 0 OR sum(refunded_count) <> 0
            OR sum(disputed_count) <> 0 OR sum(failed_count) <> 0 OR round(sum(mrr_minor), 6) <> 0
          ORDER BY 1, 2, 3`),
      );
    const booked = await facts();
    expect(booked.length).toBeGreaterThan(100);
    await db.execute(sql`DELETE FROM analytics_days WHERE project_id = ${t.projectId}`);
    const statements = readFileSync(new URL('../../drizzle/0043_analytics.sql', import.meta.url), 'utf8')
      .split('--> statement-breakpoint')
      .filter((s) => s.replace(/^--.*$/gm, '').trim().startsWith('INSERT INTO "analytics_days"'));
    expect(statements).toHaveLength(2);
    // Only this project's rows: other projects of the database keep what their triggers booked.
    await db.transaction(async (tx) => {
      await tx.execute(sql`CREATE TEMP TABLE keep ON COMMIT DROP AS SELECT * FROM analytics_days WHERE project_id <> ${t.projectId}`);
      for (const s of statements) await tx.execute(sql.raw(s));
      await tx.execute(sql`DELETE FROM analytics_days WHERE project_id <> ${t.projectId}`);
      await tx.execute(sql`INSERT INTO analytics_days SELECT * FROM keep`);
    });
    expect(await facts()).toStrictEqual(booked);
  });
});
