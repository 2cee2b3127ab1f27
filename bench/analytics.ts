/**
 * Money and growth benchmark (docs/analytics.md): how long `GET /analytics`'s work takes for a
 * project of 1,000,000 memberships and 10,000,000 payments (target: p95 under 200 ms for a
 * 30-day and a 12-month view, on PostgreSQL and on PGlite).
 *
 *   npx tsx bench/analytics.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Seeding (bench/lib/money-seed.ts, through seededStorage): one project, 10 plans (6 monthly USD,
 * 2 yearly EUR, 2 one-time USD), BENCH_ANALYTICS_MEMBERS (1,000,000) memberships over the three
 * years before now, and three years of payments in INSERT … SELECT generate_series chunks, one in
 * 50 refunded, one in 200 disputed, one in 30 failed, subscriptions' payments for the recurring
 * plans, with the payments' indexes and triggers off while the rows go in and the facts booked by
 * the migration's own backfill statements (drizzle/0043_analytics.sql). PostgreSQL takes
 * BENCH_ANALYTICS_PAYMENTS (10,000,000); PGlite takes chunks until BENCH_ANALYTICS_PGLITE_SECONDS
 * (300) of seeding have passed or it holds as many, and the section says how many it held.
 *
 * Measured: AnalyticsService.view (the route's work: fold, sums, plan names, the answer built),
 * each view 10 times to warm up (the first read folds the backfill's rows), then BENCH_ANALYTICS_RUNS
 * (200) times one after another; p50, p95, p99 in ms. Run as a script it writes its section of bench/RESULTS.md.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Database } from '../src/database/db.js';
import { AnalyticsService } from '../src/domain/analytics/analytics.service.js';
import type { AnalyticsInterval } from '../src/domain/analytics/period.js';
import { AnalyticsStore } from '../src/store/analytics.store.js';
import { runStandalone, type BenchContext } from './lib/context.js';
import { seedMoney, type MoneySeed } from './lib/money-seed.js';
import { measureSeeded, type Storage } from './lib/seed.js';
import { percentile } from './lib/stats.js';

const MEMBERS = Number(process.env.BENCH_ANALYTICS_MEMBERS ?? 1_000_000);
const PAYMENTS = Number(process.env.BENCH_ANALYTICS_PAYMENTS ?? 10_000_000);
const PGLITE_SECONDS = Number(process.env.BENCH_ANALYTICS_PGLITE_SECONDS ?? 300);
const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 200);
const WARMUP = 10;
const TARGET_MS = 200;
const COMMAND = 'npx tsx bench/analytics.ts';
const DAY = 86_400_000;

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

interface Row {
  storage: string;
  view: string;
  first: number;
  p50: number;
  p95: number;
  p99: number;
}

async function measure(storage: string, database: Database, seeded: MoneySeed, log: (l: string) => void): Promise<Row[]> {
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

export async function runAnalyticsBench(ctx: BenchContext, storages: Storage[] = ['PostgreSQL', 'PGlite']): Promise<string> {
  const { rows, seeds } = await measureSeeded(ctx, storages, {
    name: 'analytics',
    seed: (d, storage) => seedMoney(d, storage, { members: MEMBERS, payments: PAYMENTS, pgliteSeconds: PGLITE_SECONDS }, ctx.log),
    measure: (storage, database, seeded) => measure(storage, database, seeded, ctx.log),
  });
  const ms = (n: number) => n.toFixed(1);
  return [
    '## Money and growth (GET /analytics)',
    '',
    `One project: 10 plans, memberships and payments over the three years before now. ` +
      `AnalyticsService.view (the route's work: fold, sums, plan names, the answer), ${RUNS} runs after ${WARMUP} to warm up, one at a time; "first" is the first read, which folds the seed's fact rows. ` +
      `Machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${os.loadavg()[0]!.toFixed(1)} at the end. Target: p95 under ${TARGET_MS} ms.`,
    '',
    ...seeds.map(
      ({ storage, seeded }) =>
        `- ${storage}: ${seeded.memberships.toLocaleString('en-US')} memberships and ${seeded.payments.toLocaleString('en-US')} payments seeded in ` +
        `${seeded.seconds.toFixed(0)} s (${seeded.facts.toLocaleString('en-US')} fact rows before the first read folded them)` +
        (seeded.payments < PAYMENTS ? `: PGlite took ${PGLITE_SECONDS} s of seeding to hold these; the rest was not attempted.` : '.'),
    ),
    '',
    '| Storage | View | first (ms) | p50 (ms) | p95 (ms) | p99 (ms) | p95 < 200 ms |',
    '|---|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.storage} | ${r.view} | ${ms(r.first)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${r.p95 < TARGET_MS ? 'yes' : 'no'} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStandalone({ name: 'analytics', command: COMMAND, storageVar: 'BENCH_ANALYTICS_STORAGE', run: runAnalyticsBench });
}
