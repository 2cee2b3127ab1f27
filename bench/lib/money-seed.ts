import { readFile } from 'node:fs/promises';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '../../src/database/db.js';
import { seedTenant, type Storage } from './seed.js';

/**
 * One project with three years of memberships and payments (bench/analytics.ts, bench/dashboard.ts):
 * 10 plans (6 monthly USD, 2 yearly EUR, 2 one-time USD), `members` memberships (users "1" …)
 * started over the three years before now, and the payments in INSERT … SELECT generate_series
 * chunks of 1,000,000 (server-side rows: no bytes cross the socket, which COPY from the client
 * would send), one in 50 refunded, one in 200 disputed, one in 30 failed, subscriptions' payments
 * for the recurring plans, member `g % members` paying the g-th. To fit minutes, the payments'
 * indexes and triggers are off while the rows go in and are built once at the end, and the facts
 * are booked by the migration's own backfill statements (drizzle/0043_analytics.sql), which book
 * what the triggers would have row by row. PGlite stops taking chunks once `pgliteSeconds` of
 * seeding have passed, and says how many it held.
 */

export interface MoneySeed {
  projectId: string;
  /** The plans in the order above. */
  planIds: string[];
  payments: number;
  memberships: number;
  facts: number;
  seconds: number;
}

export interface MoneySizes {
  members: number;
  payments: number;
  pgliteSeconds: number;
}

const CHUNK = 1_000_000;
const SPAN_SECONDS = 3 * 365 * 86_400;

const backfill = async () =>
  (await readFile(new URL('../../drizzle/0043_analytics.sql', import.meta.url), 'utf8'))
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter((s) => s.replace(/^--.*$/gm, '').trim().startsWith('INSERT INTO "analytics_days"'));

export async function seedMoney(database: Database, storage: Storage, sizes: MoneySizes, log: (l: string) => void): Promise<MoneySeed> {
  const started = Date.now();
  const db = database.db;
  const { members } = sizes;
  const tenant = await seedTenant(database, 'money bench', 0);
  const p = tenant.projectId;
  const plans = rowsOf<{ id: string }>(
    await db.execute(sql`
      INSERT INTO plans (project_id, name, price, currency, duration, price_formatted, recurring, one_time)
      SELECT ${p}, 'Plan ' || g, CASE WHEN g <= 6 THEN 5 * g WHEN g <= 8 THEN 100 ELSE 49 END,
             CASE WHEN g IN (7, 8) THEN 'EUR' ELSE 'USD' END,
             CASE WHEN g <= 6 THEN '1 month' WHEN g <= 8 THEN '1 year' ELSE '30 days' END, 'x', g <= 8, g > 8
      FROM generate_series(1, 10) AS g ORDER BY g RETURNING id`),
  );
  const ids = `{${plans.map((x) => x.id).join(',')}}`;
  await db.execute(sql.raw('ALTER TABLE memberships DISABLE TRIGGER tenure_analytics_memberships_ins'));
  await db.execute(sql`
    INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date, status, created_at)
    SELECT ${p}, g::text, (${ids}::uuid[])[1 + g % 10], s, s + interval '30 days' * (1 + g % 7),
           CASE WHEN s + interval '30 days' * (1 + g % 7) > now() THEN 'active' ELSE 'expired' END, s
    FROM generate_series(1, ${members}::int) AS g, LATERAL (SELECT now() - make_interval(secs => (g::bigint * 7919) % ${SPAN_SECONDS}) AS s) t`);
  await db.execute(sql.raw('ALTER TABLE memberships ENABLE TRIGGER tenure_analytics_memberships_ins'));
  log(`${storage}: ${members} memberships in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  // The payments: indexes and triggers (foreign keys' too) off while rows go in, built once after.
  const indexes = rowsOf<{ indexname: string; indexdef: string }>(
    await db.execute(sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'payments' AND indexname <> 'payments_pkey'`),
  );
  for (const i of indexes) await db.execute(sql.raw(`DROP INDEX ${i.indexname}`));
  await db.execute(sql.raw('ALTER TABLE payments DROP CONSTRAINT payments_pkey'));
  await db.execute(sql.raw('ALTER TABLE payments DISABLE TRIGGER ALL'));
  let payments = 0;
  while (payments < sizes.payments) {
    const n = Math.min(CHUNK, sizes.payments - payments);
    await db.execute(sql`
      INSERT INTO payments (id, project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${p}, 'stripe', 'in_' || g, (g % ${members}::int)::text, (${ids}::uuid[])[1 + k], CASE WHEN k < 6 THEN 500 * (k + 1) WHEN k < 8 THEN 10000 ELSE 4900 END,
             CASE WHEN k IN (6, 7) THEN 'EUR' ELSE 'USD' END,
             CASE WHEN g % 200 = 0 THEN 'disputed' WHEN g % 50 = 0 THEN 'refunded' WHEN g % 30 = 0 THEN 'failed' ELSE 'succeeded' END,
             CASE WHEN k < 8 THEN 'sub_' || (g % ${members}::int) END, c, CASE WHEN g % 50 = 0 OR g % 200 = 0 THEN c + interval '3 days' ELSE c END
      FROM generate_series(${payments + 1}::bigint, ${payments + n}::bigint) AS g,
           LATERAL (SELECT (g % 10)::int AS k, now() - make_interval(secs => (g * 104729) % ${SPAN_SECONDS}) AS c) t`);
    payments += n;
    log(`${storage}: ${payments} payments after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (storage === 'PGlite' && (Date.now() - started) / 1000 > sizes.pgliteSeconds) break;
  }
  await db.execute(sql.raw('ALTER TABLE payments ENABLE TRIGGER ALL'));
  await db.execute(sql.raw('ALTER TABLE payments ADD PRIMARY KEY (id)'));
  for (const i of indexes) await db.execute(sql.raw(i.indexdef));
  log(`${storage}: payments' indexes built after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const statement of await backfill()) await db.execute(sql.raw(statement));
  await db.execute(sql.raw('ANALYZE'));
  const facts = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM analytics_days WHERE project_id = ${p}`))[0]!.n;
  const seconds = (Date.now() - started) / 1000;
  log(`${storage}: seeded in ${seconds.toFixed(0)} s, ${facts} fact rows before the first fold`);
  return { projectId: p, planIds: plans.map((x) => x.id), payments, memberships: members, facts, seconds };
}
