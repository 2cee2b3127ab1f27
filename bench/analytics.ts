/**
 * Money and growth benchmark (docs/analytics.md): how long `GET /analytics`'s work takes for a
 * project of 1,000,000 memberships and 10,000,000 payments (target: p95 under 200 ms for a
 * 30-day and a 12-month view, on PostgreSQL and on PGlite).
 *
 *   npx tsx bench/analytics.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Seeding (bench/lib/context.ts seededStorage): one project, 10 plans (6 monthly USD, 2 yearly EUR,
 * 2 one-time USD), BENCH_ANALYTICS_MEMBERS (1,000,000) memberships over the three years before
 * now, and the payments in INSERT … SELECT generate_series chunks of 1,000,000 (server-side rows:
 * no bytes cross the socket, which COPY from the client would send), three years of them, one in
 * 50 refunded, one in 200 disputed, one in 30 failed, subscriptions' payments for the recurring
 * plans. To fit minutes, the payments' indexes and triggers are off while the rows go in and are
 * built once at the end, and the facts are booked by the migration's own backfill statements
 * (drizzle/0043_analytics.sql), which book what the triggers would have row by row. PostgreSQL
 * takes BENCH_ANALYTICS_PAYMENTS (10,000,000); PGlite takes chunks until BENCH_ANALYTICS_PGLITE_SECONDS
 * (300) of seeding have passed or it holds as many, and the section says how many it held.
 *
 * Measured: AnalyticsService.view (the route's work: fold, sums, plan names, the answer built),
 * each view 10 times to warm up (the first read folds the backfill's rows), then BENCH_ANALYTICS_RUNS
 * (200) times one after another; p50, p95, p99 in ms. Run as a script it writes its section of bench/RESULTS.md.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../src/database/db.js';
import { AnalyticsService } from '../src/domain/analytics/analytics.service.js';
import type { AnalyticsInterval } from '../src/domain/analytics/period.js';
import { AnalyticsStore } from '../src/store/analytics.store.js';
import { runStandalone, seededStorage, type BenchContext } from './lib/context.js';
import { seedTenant } from './lib/seed.js';

const MEMBERS = Number(process.env.BENCH_ANALYTICS_MEMBERS ?? 1_000_000);
const PAYMENTS = Number(process.env.BENCH_ANALYTICS_PAYMENTS ?? 10_000_000);
const PGLITE_SECONDS = Number(process.env.BENCH_ANALYTICS_PGLITE_SECONDS ?? 300);
const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 200);
const CHUNK = 1_000_000;
const WARMUP = 10;
const TARGET_MS = 200;
const COMMAND = 'npx tsx bench/analytics.ts';
const DAY = 86_400_000;
const SPAN_SECONDS = 3 * 365 * 86_400;

interface Seeded {
  projectId: string;
  payments: number;
  memberships: number;
  facts: number;
  seconds: number;
}

const backfill = async () =>
  (await readFile(new URL('../drizzle/0043_analytics.sql', import.meta.url), 'utf8'))
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter((s) => s.replace(/^--.*$/gm, '').trim().startsWith('INSERT INTO "analytics_days"'));

export async function seed(database: Database, storage: 'PostgreSQL' | 'PGlite', log: (l: string) => void): Promise<Seeded> {
  const started = Date.now();
  const db = database.db;
  const tenant = await seedTenant(database, 'analytics bench', 0);
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
    FROM generate_series(1, ${MEMBERS}::int) AS g, LATERAL (SELECT now() - make_interval(secs => (g::bigint * 7919) % ${SPAN_SECONDS}) AS s) t`);
  await db.execute(sql.raw('ALTER TABLE memberships ENABLE TRIGGER tenure_analytics_memberships_ins'));
  log(`${storage}: ${MEMBERS} memberships in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  // The payments: indexes and triggers (foreign keys' too) off while rows go in, built once after.
  const indexes = rowsOf<{ indexname: string; indexdef: string }>(
    await db.execute(sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'payments' AND indexname <> 'payments_pkey'`),
  );
  for (const i of indexes) await db.execute(sql.raw(`DROP INDEX ${i.indexname}`));
  await db.execute(sql.raw('ALTER TABLE payments DROP CONSTRAINT payments_pkey'));
  await db.execute(sql.raw('ALTER TABLE payments DISABLE TRIGGER ALL'));
  let payments = 0;
  while (payments < PAYMENTS) {
    const n = Math.min(CHUNK, PAYMENTS - payments);
    await db.execute(sql`
      INSERT INTO payments (id, project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${p}, 'stripe', 'in_' || g, (g % ${MEMBERS}::int)::text, (${ids}::uuid[])[1 + k], CASE WHEN k < 6 THEN 500 * (k + 1) WHEN k < 8 THEN 10000 ELSE 4900 END,
             CASE WHEN k IN (6, 7) THEN 'EUR' ELSE 'USD' END,
             CASE WHEN g % 200 = 0 THEN 'disputed' WHEN g % 50 = 0 THEN 'refunded' WHEN g % 30 = 0 THEN 'failed' ELSE 'succeeded' END,
             CASE WHEN k < 8 THEN 'sub_' || (g % ${MEMBERS}::int) END, c, CASE WHEN g % 50 = 0 OR g % 200 = 0 THEN c + interval '3 days' ELSE c END
      FROM generate_series(${payments + 1}::bigint, ${payments + n}::bigint) AS g,
           LATERAL (SELECT (g % 10)::int AS k, now() - make_interval(secs => (g * 104729) % ${SPAN_SECONDS}) AS c) t`);
    payments += n;
    log(`${storage}: ${payments} payments after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (storage === 'PGlite' && (Date.now() - started) / 1000 > PGLITE_SECONDS) break;
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
  return { projectId: p, payments, memberships: MEMBERS, facts, seconds };
}

interface View {
  name: string;
  days: number;
  interval: AnalyticsInterval;
}

const VIEWS: View[] = [
  { name: '30 days by day', days: 30, interval: 'day' },
  { name: '12 months by month', days: 365, interval: 'month' },
  { name: '12 months by week', days: 365, interval: 'week' },
  { name: '12 months by day', days: 365, interval: 'day' },
];

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface Row {
  storage: string;
  view: string;
  first: number;
  p50: number;
  p95: number;
  p99: number;
}

async function measure(storage: string, database: Database, seeded: Seeded, log: (l: string) => void): Promise<Row[]> {
  const service = new AnalyticsService(new AnalyticsStore(database.db), { now: () => new Date() });
  const today = Math.floor(Date.now() / DAY) * DAY;
  const rows: Row[] = [];
  for (const v of VIEWS) {
    const input = { from: new Date(today + DAY - v.days * DAY), to: new Date(today + DAY), interval: v.interval };
    let start = performance.now();
    const answer = await service.view(seeded.projectId, input);
    const first = performance.now() - start;
    if (answer.totals.active_members === 0 || answer.totals.revenue.length === 0) throw new Error(`${v.name}: an empty answer`);
    for (let i = 1; i < WARMUP; i++) await service.view(seeded.projectId, input);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      start = performance.now();
      await service.view(seeded.projectId, input);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const row = { storage, view: v.name, first, p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) };
    log(`${storage} ${v.name}: first ${first.toFixed(1)} ms, p50 ${row.p50.toFixed(1)}, p95 ${row.p95.toFixed(1)}, p99 ${row.p99.toFixed(1)} ms`);
    rows.push(row);
  }
  return rows;
}

export async function runAnalyticsBench(ctx: BenchContext, storages: ('PostgreSQL' | 'PGlite')[] = ['PostgreSQL', 'PGlite']): Promise<string> {
  const rows: Row[] = [];
  const seeds: string[] = [];
  for (const storage of storages) {
    const { env, seeded } = await seededStorage(ctx, storage, 'analytics', (d) => seed(d, storage, ctx.log));
    seeds.push(
      `${storage}: ${seeded.memberships.toLocaleString('en-US')} memberships and ${seeded.payments.toLocaleString('en-US')} payments seeded in ` +
        `${seeded.seconds.toFixed(0)} s (${seeded.facts.toLocaleString('en-US')} fact rows before the first read folded them)` +
        (seeded.payments < PAYMENTS ? `: PGlite took ${PGLITE_SECONDS} s of seeding to hold these; the rest was not attempted.` : '.'),
    );
    const database = await openDatabase(env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL, poolSize: 4 } : { kind: 'pglite', dataDir: env.DATA_DIR! });
    try {
      rows.push(...(await measure(storage, database, seeded, ctx.log)));
    } finally {
      await database.close();
    }
  }
  const ms = (n: number) => n.toFixed(1);
  return [
    '## Money and growth (GET /analytics)',
    '',
    `One project: 10 plans, memberships and payments over the three years before now. ` +
      `AnalyticsService.view (the route's work: fold, sums, plan names, the answer), ${RUNS} runs after ${WARMUP} to warm up, one at a time; "first" is the first read, which folds the seed's fact rows. ` +
      `Machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${os.loadavg()[0]!.toFixed(1)} at the end. Target: p95 under ${TARGET_MS} ms.`,
    '',
    ...seeds.map((s) => `- ${s}`),
    '',
    '| Storage | View | first (ms) | p50 (ms) | p95 (ms) | p99 (ms) | p95 < 200 ms |',
    '|---|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.storage} | ${r.view} | ${ms(r.first)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${r.p95 < TARGET_MS ? 'yes' : 'no'} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStandalone({ name: 'analytics', command: COMMAND, storageVar: 'BENCH_ANALYTICS_STORAGE', run: runAnalyticsBench });
}
