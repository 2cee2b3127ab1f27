/**
 * Dashboard benchmark (docs/dashboard-members.md, docs/dashboard.md): how long each dashboard
 * view's work takes for one project of 1,000,000 memberships and 10,000,000 payments (target: p95
 * under 200 ms for every view; the money view is bench/analytics.ts).
 *
 *   npx tsx bench/dashboard.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Seeding (through measureSeeded, bench/lib/seed.ts): the analytics bench's project
 * (bench/lib/money-seed.ts: 10 plans, memberships and payments over three years), then what the
 * members pages read (bench/lib/members-seed.ts: users with names, subscriptions, access rows,
 * bans, unreachable members, and one member with 5,000 payments more). PostgreSQL takes
 * BENCH_DASHBOARD_MEMBERS (1,000,000) and BENCH_DASHBOARD_PAYMENTS (10,000,000); PGlite takes
 * BENCH_DASHBOARD_PGLITE_MEMBERS (500,000) and BENCH_DASHBOARD_PGLITE_PAYMENTS (5,000,000), what
 * it seeds in five to seven minutes on this 2-core machine (fewer payments once
 * BENCH_DASHBOARD_PGLITE_SECONDS, 300, of seeding have passed), and the section says the sizes.
 *
 * Measured: the domain services' calls each page makes (src/http/dashboard/*.pages.ts), the
 * query read from the page's form fields by parseMemberQuery as the page reads it: the members
 * table (DashboardMembersService.plans and .table) for each saved view, status, a plan, a search
 * by id and by a name about 1 % of members share, each sort, and the 50th page by key; the
 * export until its download begins (the route answers after exportRows' first batch of 100 rows;
 * later batches grow to 2,000; the CSV text is the route's);
 * the overview (DashboardOverview.counts); a member's page (DashboardMembersService.member) of
 * the member with the most payments. Each BENCH_DASHBOARD_WARMUP (10) times to warm up, then
 * BENCH_DASHBOARD_RUNS (100) times one after another; p50, p95, p99 in ms. BENCH_DASHBOARD_ONLY
 * (a word of the case names, e.g. `search`) measures only the matching cases. Run as a script it
 * writes its section of bench/RESULTS.md.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import type { Database } from '../src/database/db.js';
import { parseMemberQuery, type MemberQuery } from '../src/domain/dashboard-members/member-query.js';
import type { Actor } from '../src/domain/dashboard/actor.js';
import { FIRST_EXPORT_BATCH } from '../src/domain/dashboard-members/members.service.js';
import { createLogger } from '../src/logger.js';
import { runStandalone, type BenchContext } from './lib/context.js';
import { seedMembers, type MembersSeed } from './lib/members-seed.js';
import { seedMoney, type MoneySeed } from './lib/money-seed.js';
import { measureSeeded, type Storage } from './lib/seed.js';
import { percentile } from './lib/stats.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SIZES: Record<Storage, { members: number; payments: number }> = {
  PostgreSQL: { members: env('BENCH_DASHBOARD_MEMBERS', 1_000_000), payments: env('BENCH_DASHBOARD_PAYMENTS', 10_000_000) },
  PGlite: {
    members: Math.min(env('BENCH_DASHBOARD_MEMBERS', 1_000_000), env('BENCH_DASHBOARD_PGLITE_MEMBERS', 500_000)),
    payments: Math.min(env('BENCH_DASHBOARD_PAYMENTS', 10_000_000), env('BENCH_DASHBOARD_PGLITE_PAYMENTS', 5_000_000)),
  },
};
const PGLITE_SECONDS = env('BENCH_DASHBOARD_PGLITE_SECONDS', 300);
const RUNS = env('BENCH_DASHBOARD_RUNS', 100);
const WARMUP = env('BENCH_DASHBOARD_WARMUP', 10);
const ONLY = process.env.BENCH_DASHBOARD_ONLY;
const TARGET_MS = 200;
const DEEP_PAGE = 50;
const COMMAND = 'npx tsx bench/dashboard.ts';

type Seeded = MoneySeed & MembersSeed;

/** What a case reads with: the services, the owner acting, the seed. */
interface Subject {
  services: Container['services'];
  actor: Actor;
  seeded: Seeded;
  /** The cursor of the deep page, found once. */
  deep?: Promise<string>;
}

interface Case {
  page: string;
  name: string;
  /** One view's work; returns what it showed (rows, matches), which must not be nothing. */
  run: (s: Subject) => Promise<string>;
}

function queryOf(fields: Record<string, string>): MemberQuery {
  const parsed = parseMemberQuery(fields);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/** The members page's two calls: the plans for the filter, then the page of the table. */
async function table(s: Subject, q: MemberQuery): Promise<string> {
  const [plans, page] = await Promise.all([s.services.dashboardMembers.plans(s.actor), s.services.dashboardMembers.table(s.actor, q)]);
  if (!page.ok) throw page.error;
  if (page.value.rows.length === 0 || plans.length === 0) throw new Error(`an empty table for ${JSON.stringify(q)}`);
  return `${page.value.rows.length} rows of ${page.value.capped ? `${page.value.total}+` : page.value.total}`;
}

const members = (name: string, fields: (s: Subject) => Record<string, string>): Case => ({ page: 'members', name, run: (s) => table(s, queryOf(fields(s))) });

/** The cursor of page `n` of the default table (newest first), read page by page as a reader would get there. */
async function cursorOfPage(s: Subject, n: number): Promise<string> {
  let after: string | null = null;
  for (let page = 1; page < n; page++) {
    const read = await s.services.dashboardMembers.table(s.actor, queryOf(after ? { after } : {}));
    if (!read.ok) throw read.error;
    after = read.value.next;
    if (!after) throw new Error(`the table has fewer than ${n} pages`);
  }
  return after!;
}

const CASES: Case[] = [
  members('view: expiring in 7 days', () => ({ view: 'expiring_7d' })),
  members('view: payment failed', () => ({ view: 'payment_failed' })),
  members('view: access failed', () => ({ view: 'access_failed' })),
  members('view: not linked', () => ({ view: 'not_linked' })),
  ...['active', 'in_grace', 'cancelling', 'trial', 'expired', 'banned'].map((status) => members(`status: ${status}`, () => ({ status }))),
  members('plan', (s) => ({ plan: s.seeded.planIds[3]! })),
  members('search: a user id', (s) => ({ q: String(Math.floor(s.seeded.memberships / 3) + 7) })),
  members('search: a first name (~1 % of members)', (s) => ({ q: s.seeded.commonName })),
  ...['-created', 'created', 'end_date', '-end_date', 'name', '-name'].map((sort) => members(`sort: ${sort}`, () => ({ sort }))),
  {
    page: 'members',
    name: `page ${DEEP_PAGE} (by key, newest first)`,
    run: async (s) => table(s, queryOf({ after: await (s.deep ??= cursorOfPage(s, DEEP_PAGE)) })),
  },
  {
    page: 'members export',
    name: `payment failed, until the download begins (its first batch, ${FIRST_EXPORT_BATCH} rows)`,
    run: async (s) => {
      const { cursor: _c, limit: _l, ...filter } = queryOf({ view: 'payment_failed' });
      const batches = s.services.dashboardMembers.exportRows(s.actor, filter);
      try {
        const first = await batches.next();
        if (first.done || first.value.length === 0) throw new Error('the export gave no rows');
        return `${first.value.length} rows read`;
      } finally {
        await batches.return(undefined);
      }
    },
  },
  {
    page: 'overview',
    name: 'counts',
    run: async (s) => {
      const c = await s.services.dashboardOverview.counts(s.actor.projectId);
      if (c.active === 0) throw new Error('an empty overview');
      return `${c.active} active (capped), ${c.endingSoon} ending soon`;
    },
  },
  {
    page: 'member',
    name: 'the member with the most payments',
    run: async (s) => {
      const page = await s.services.dashboardMembers.member(s.actor, s.seeded.whale);
      if (!page.ok) throw page.error;
      if (page.value.payments.items.length === 0 || page.value.notifications.items.length === 0) throw new Error('an empty member page');
      return `${page.value.payments.total} payments, ${page.value.notifications.total} messages`;
    },
  },
];

interface Row {
  storage: Storage;
  page: string;
  name: string;
  shown: string;
  p50: number;
  p95: number;
  p99: number;
}

async function measure(storage: Storage, database: Database, seeded: Seeded, log: (l: string) => void): Promise<Row[]> {
  const container = await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database });
  const actor: Actor = { projectId: seeded.projectId, projectName: 'bench', sessionId: 'bench', userId: null, name: null, method: 'link', permissions: ['all'] };
  const subject: Subject = { services: container.services, actor, seeded };
  const rows: Row[] = [];
  try {
    for (const c of CASES.filter((x) => !ONLY || `${x.page} ${x.name}`.includes(ONLY))) {
      let shown = '';
      for (let i = 0; i < WARMUP; i++) shown = await c.run(subject);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        shown = await c.run(subject);
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      const row = { storage, page: c.page, name: c.name, shown, p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) };
      log(`${storage} ${c.page} / ${c.name} (${shown}): p50 ${row.p50.toFixed(1)}, p95 ${row.p95.toFixed(1)}, p99 ${row.p99.toFixed(1)} ms`);
      rows.push(row);
    }
  } finally {
    await container.close();
  }
  return rows;
}

async function seed(database: Database, storage: Storage, log: (l: string) => void): Promise<Seeded> {
  const money = await seedMoney(database, storage, { ...SIZES[storage], pgliteSeconds: PGLITE_SECONDS }, log);
  return { ...money, ...(await seedMembers(database, storage, money, log)) };
}

export async function runDashboardBench(ctx: BenchContext, storages: Storage[] = ['PostgreSQL', 'PGlite']): Promise<string> {
  const started = Date.now();
  const { rows, seeds } = await measureSeeded(ctx, storages, {
    name: 'dashboard',
    seed: (d, storage) => seed(d, storage, ctx.log),
    measure: (storage, database, seeded) => measure(storage, database, seeded, ctx.log),
  });
  const ms = (n: number) => n.toFixed(1);
  const n = (x: number) => x.toLocaleString('en-US');
  return [
    '## Dashboard views (members table, export, overview, member page)',
    '',
    `One project: the analytics bench's 10 plans, memberships and payments over three years, with users (names), subscriptions, access rows, bans. ` +
      `The domain services' calls of each page (the members table: plans and a page of 50 with its capped count; the export until its first batch; the overview's counts; a member's page), ` +
      `${RUNS} runs after ${WARMUP} to warm up, one at a time. Machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ` +
      `load average ${os.loadavg()[0]!.toFixed(1)} at the end, ${((Date.now() - started) / 60_000).toFixed(0)} min in all. Target: p95 under ${TARGET_MS} ms.`,
    '',
    ...seeds.map(
      ({ storage, seeded, seconds }) =>
        `- ${storage}: ${n(seeded.memberships)} memberships and ${n(seeded.payments)} payments (the member's page: ${n(seeded.whalePayments)} payments) seeded in ${seconds.toFixed(0)} s` +
        (storage === 'PGlite' ? `: PGlite's smaller size (BENCH_DASHBOARD_PGLITE_MEMBERS, _PAYMENTS), so that its seeding takes minutes.` : '.'),
    ),
    '',
    '| Storage | Page | View | shown | p50 (ms) | p95 (ms) | p99 (ms) | p95 < 200 ms |',
    '|---|---|---|---|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.storage} | ${r.page} | ${r.name} | ${r.shown} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${r.p95 < TARGET_MS ? 'yes' : 'no'} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStandalone({ name: 'dashboard', command: COMMAND, storageVar: 'BENCH_DASHBOARD_STORAGE', run: runDashboardBench });
}
