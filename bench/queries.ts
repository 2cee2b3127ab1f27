/**
 * Membership queries benchmark (docs/memberships.md, "Listing and filtering"): how long a
 * filtered, sorted page of `GET /memberships` takes at 1,000,000 memberships of one project
 * (target: p99 under 50 ms on PostgreSQL).
 *
 *   npx tsx bench/queries.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Each storage is seeded through measureSeeded (bench/lib/seed.ts): one project, 10 plans and
 * BENCH_QUERIES_MEMBERS (1,000,000) memberships in one INSERT … SELECT generate_series, end dates
 * spread over a year around now (so about half are active), created over the last two years, one
 * in five backed by a subscription (some in a trial, some past_due, some with their renewal
 * cancelled), then VACUUMed and ANALYZEd (as autovacuum would after the insert). The database is then opened again and each query below runs both ways
 * a client may page: by offset through the real MembershipsStore.list (the page and its total, as
 * the route runs them), and by cursor through MembershipsStore.listAfter (the page after a key, no
 * total; at the query's offset, the key of the row before it), 20 times to warm up, then
 * BENCH_QUERIES_RUNS (300) times one after another; p50, p99 and max of each, in ms.
 * Run as a script it writes the queries section of bench/RESULTS.md (between its markers).
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '../src/database/db.js';
import { MembershipsStore } from '../src/store/memberships.store.js';
import type { MembershipFilter } from '../src/store/membership-queries.js';
import { runStandalone, type BenchContext } from './lib/context.js';
import { measureSeeded, seedTenant, type Storage } from './lib/seed.js';
import { percentile } from './lib/stats.js';

const MEMBERS = Number(process.env.BENCH_QUERIES_MEMBERS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_QUERIES_RUNS ?? 300);
const WARMUP = 20;
const TARGET_MS = 50;
const COMMAND = 'npx tsx bench/queries.ts';

interface Seeded {
  projectId: string;
  planId: string;
}

/** The project's memberships replaced by MEMBERS spread ones (seedTenant's own are half active, half expired, no plan). */
async function seed(database: Database): Promise<Seeded> {
  const tenant = await seedTenant(database, 'queries bench', 0);
  const plans = rowsOf<{ id: string }>(
    await database.db.execute(sql`
      INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
      SELECT ${tenant.projectId}, 'Plan ' || g, 10, 'USD', '30 days', '$10.00' FROM generate_series(1, 10) AS g RETURNING id`),
  );
  const ids = plans.map((p) => p.id);
  await database.db.execute(sql`
    INSERT INTO memberships (project_id, user_id, plan_id, end_date, status, created_at,
                             subscription_id, subscription_status, subscription_cancel_at_period_end, trial_ends_at)
    SELECT ${tenant.projectId}, g::text, (${`{${ids.join(",")}}`}::uuid[])[1 + g % 10],
           now() + make_interval(secs => ((g::bigint * 7919) % 31536000) - 15768000),
           CASE WHEN ((g::bigint * 7919) % 31536000) - 15768000 > 0 THEN 'active' ELSE 'expired' END,
           now() - make_interval(secs => (g::bigint * 104729) % 63072000),
           CASE WHEN g % 5 = 0 THEN 'sub_' || g END,
           CASE WHEN g % 5 <> 0 THEN NULL WHEN g % 100 = 0 THEN 'past_due' WHEN g % 35 = 0 THEN 'trialing' ELSE 'active' END,
           g % 5 = 0 AND g % 45 = 0,
           CASE WHEN g % 35 = 0 AND g % 5 = 0 THEN now() + make_interval(secs => ((g::bigint * 7919) % 31536000) - 15768000) END
    FROM generate_series(1, ${MEMBERS}::int) AS g`);
  // What autovacuum does to a table after a bulk insert (its insert threshold): the statistics, and
  // the visibility map that lets a count be answered from an index alone (an index-only scan).
  await database.db.execute(sql`VACUUM ANALYZE memberships`);
  return { projectId: tenant.projectId, planId: ids[3]! };
}

interface Query {
  name: string;
  filter: (s: Seeded, now: Date) => Omit<MembershipFilter, 'limit' | 'offset'>;
  offset?: number;
  /**
   * Also timed with its total counted by `count(*)`, as every list was before the kept count
   * (migration 0048, src/store/membership-counts.ts): the same first page (read as a cursor reads
   * it from the start, by the same index) beside the count, side by side with the kept total.
   */
  counted?: boolean;
}

const DAY = 86_400_000;
const QUERIES: Query[] = [
  { name: '`status=active&ends_before=+7d&sort=end_date` (who expires this week)', filter: (_s, now) => ({ status: 'active', endsBefore: new Date(now.getTime() + 7 * DAY), sort: 'end_date' }) },
  { name: '`plan_id&status=active&sort=-end_date`', filter: (s) => ({ planId: s.planId, status: 'active', sort: '-end_date' }) },
  { name: '`ends_after=-30d&ends_before=now&sort=-end_date` (ended this month)', filter: (_s, now) => ({ endsAfter: new Date(now.getTime() - 30 * DAY), endsBefore: now, sort: '-end_date' }) },
  { name: '`status=in_grace&sort=end_date`', filter: () => ({ status: 'in_grace', sort: 'end_date' }) },
  { name: '`status=expired` (newest first), offset 10,000', filter: () => ({ status: 'expired' }), offset: 10_000 },
  { name: 'no filter (newest first): the whole project', filter: () => ({}), counted: true },
];

interface Row {
  storage: string;
  query: string;
  /** `offset + total` or `cursor`. */
  paging: string;
  total: number;
  p50: number;
  p99: number;
  max: number;
}

/** p50, p99 and max of RUNS calls of `run` after WARMUP, in ms; each must give a page with items. */
async function timed(name: string, run: () => Promise<{ items: unknown[] }>): Promise<{ p50: number; p99: number; max: number }> {
  for (let i = 0; i < WARMUP; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const page = await run();
    times.push(performance.now() - start);
    if (page.items.length === 0) throw new Error(`${name}: an empty page`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1]! };
}

async function measure(storage: Storage, database: Database, seeded: Seeded, log: (l: string) => void): Promise<Row[]> {
  const store = new MembershipsStore(database.db);
  const rows: Row[] = [];
  for (const q of QUERIES) {
    const filter = { ...q.filter(seeded, new Date()), limit: 20 };
    const offset = q.offset ?? 0;
    const total = (await store.list(seeded.projectId, { ...filter, offset })).total;
    const byOffset = await timed(q.name, () => store.list(seeded.projectId, { ...filter, offset }));
    // The cursor a client holds after `offset` rows: the key of the row before the page.
    const after = offset === 0 ? null : (await store.listAfter(seeded.projectId, { ...filter, limit: offset }, null)).next;
    const byCursor = await timed(q.name, () => store.listAfter(seeded.projectId, filter, after));
    const timings: [string, { p50: number; p99: number; max: number }][] = [['offset + total', byOffset], ['cursor', byCursor]];
    if (q.counted) {
      const count = sql`SELECT count(*)::int AS total FROM memberships m WHERE m.project_id = ${seeded.projectId}`;
      const countedTotal = async () => (await Promise.all([store.listAfter(seeded.projectId, filter, after), database.db.execute(count)]))[0];
      timings.push(['offset + total by count(*) (before migration 0048)', await timed(q.name, countedTotal)]);
    }
    for (const [paging, t] of timings) {
      log(`${storage} ${q.name} (${paging}): total ${total}, p50 ${t.p50.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms`);
      rows.push({ storage, query: q.name, paging, total, ...t });
    }
  }
  return rows;
}

export async function runQueriesBench(ctx: BenchContext, storages: Storage[] = ['PostgreSQL', 'PGlite']): Promise<string> {
  const { rows } = await measureSeeded(ctx, storages, { name: 'queries', seed, measure: (storage, database, seeded) => measure(storage, database, seeded, ctx.log) });
  const ms = (n: number) => n.toFixed(1);
  return [
    '## Membership queries (GET /memberships filters and sorts)',
    '',
    `${MEMBERS.toLocaleString('en-US')} memberships of one project (10 plans, end dates over a year around now, one in five with a subscription), ` +
      `a page of 20 by offset through MembershipsStore.list (the page and its total, as the route runs them) and by cursor through ` +
      `MembershipsStore.listAfter (no total), ${RUNS} runs after ${WARMUP} to warm up, one at a time. ` +
      `Machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${os.loadavg()[0]!.toFixed(1)} at the end. Target: p99 under ${TARGET_MS} ms on PostgreSQL.`,
    '',
    '| Storage | Query | paging | total | p50 (ms) | p99 (ms) | max (ms) | p99 < 50 ms |',
    '|---|---|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.storage} | ${r.query} | ${r.paging} | ${r.total.toLocaleString('en-US')} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.p99 < TARGET_MS ? 'yes' : 'no'} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStandalone({ name: 'queries', command: COMMAND, storageVar: 'BENCH_QUERIES_STORAGE', run: runQueriesBench });
}
