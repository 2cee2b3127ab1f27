/**
 * Export benchmark (docs/memberships.md, "Export"): rows per second of
 * `GET /v2/projects/{project_id}/memberships/export` (and payments') through the real server,
 * `node dist/main.js`, on PostgreSQL (target: at least 100,000 rows/s) and on embedded PGlite, and
 * how much the server's peak resident memory grows while it streams them (constant memory: the
 * growth must not follow the row count).
 *
 *   npm run build && npx tsx bench/export.ts   # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Each storage is seeded through seededStorage (bench/lib/context.ts): seedTenant's project with
 * BENCH_EXPORT_MEMBERS memberships (1,000,000 on PostgreSQL, BENCH_EXPORT_PGLITE_MEMBERS = 200,000
 * on PGlite), each member's user row with names (one in ten holding a comma and quotes, to be
 * escaped), 10 plans, and BENCH_EXPORT_PAYMENTS payments (a fifth of the members). The server
 * first answers a small export of another project (its code paths warm), its peak RSS (VmHWM) is
 * read, then each export runs once, alone, read as fast as the client can; the rows are counted
 * by line ends (the bench's names hold none), and the run fails unless every row arrived.
 * BENCH_EXPORT_STORAGE=pg or pglite runs one storage. Run as a script it writes the export
 * section of bench/RESULTS.md (between its markers).
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Database } from '../src/database/db.js';
import { runStandalone, seededStorage, startFull, type BenchContext } from './lib/context.js';
import type { Server } from './lib/processes.js';
import { seedTenant, type Tenant } from './lib/seed.js';

const MEMBERS = { PostgreSQL: Number(process.env.BENCH_EXPORT_MEMBERS ?? 1_000_000), PGlite: Number(process.env.BENCH_EXPORT_PGLITE_MEMBERS ?? 200_000) };
const TARGET_ROWS_PER_S = 100_000;
const COMMAND = 'npm run build && npx tsx bench/export.ts';

type Storage = 'PostgreSQL' | 'PGlite';

interface Seeded {
  big: Tenant;
  payments: number;
  /** A small project for the warm-up export. */
  small: Tenant;
}

async function seed(database: Database, members: number): Promise<Seeded> {
  const big = await seedTenant(database, 'export bench', members);
  await database.db.execute(sql`
    INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
    SELECT ${big.projectId}, 'Plan ' || g, 10, 'USD', '30 days', '$10.00' FROM generate_series(1, 10) AS g`);
  await database.db.execute(sql`
    UPDATE memberships m SET plan_id = p.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM plans WHERE project_id = ${big.projectId}) p
    WHERE m.project_id = ${big.projectId} AND p.n = 1 + m.user_id::bigint % 10`);
  await database.db.execute(sql`
    INSERT INTO users (project_id, user_id, first_name, username)
    SELECT ${big.projectId}, g::text, CASE WHEN g % 10 = 0 THEN 'Member ' || g || ', "the ' || g || 'th"' ELSE 'Member ' || g END, 'member_' || g
    FROM generate_series(1, ${members}::int) AS g`);
  const payments = Math.floor(members / 5);
  await database.db.execute(sql`
    INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, checkout_session_id, payment_intent_id, customer_id, created_at, updated_at)
    SELECT ${big.projectId}, 'stripe', 'pi_bench_' || g, g::text, 999 + g % 5000, 'USD', CASE WHEN g % 20 = 0 THEN 'refunded' ELSE 'succeeded' END,
           'cs_bench_' || g, 'pi_bench_' || g, 'cus_bench_' || g, now() - make_interval(secs => g), now() - make_interval(secs => g)
    FROM generate_series(1, ${payments}::int) AS g`);
  const small = await seedTenant(database, 'export bench warm-up', 5_000);
  await database.db.execute(sql`ANALYZE`);
  return { big, payments, small };
}

interface Run {
  storage: Storage;
  what: string;
  rows: number;
  seconds: number;
  mib: number;
  /** The server's peak RSS before this export and after it, in MiB. */
  peakBefore: number;
  peakAfter: number;
}

/** One export read to its end; its rows (line ends less the CSV header), bytes and seconds. */
async function exportOnce(server: Server, tenant: Tenant, resource: string, format: 'csv' | 'ndjson'): Promise<{ rows: number; bytes: number; seconds: number }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/v2/projects/${tenant.projectId}/${resource}/export?format=${format}`, {
    headers: { authorization: `Bearer ${tenant.key}` },
  });
  if (res.status !== 200 || !res.body) throw new Error(`${resource} export: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { rows: format === 'csv' ? lines - 1 : lines, bytes, seconds: (performance.now() - started) / 1000 };
}

async function measure(ctx: BenchContext, storage: Storage, env: Record<string, string>, seeded: Seeded): Promise<Run[]> {
  const server = await startFull(ctx, `export-${storage}`, env);
  try {
    await exportOnce(server, seeded.small, 'memberships', 'csv');
    await exportOnce(server, seeded.small, 'memberships', 'ndjson');
    const runs: Run[] = [];
    const cases: [string, string, 'csv' | 'ndjson', number][] = [
      ['memberships, CSV', 'memberships', 'csv', seeded.big.members],
      ['memberships, NDJSON', 'memberships', 'ndjson', seeded.big.members],
      ['payments, CSV', 'payments', 'csv', seeded.payments],
    ];
    for (const [what, resource, format, expected] of cases) {
      const peakBefore = server.memoryMiB().peak;
      const got = await exportOnce(server, seeded.big, resource, format);
      if (got.rows !== expected) throw new Error(`${storage} ${what}: ${got.rows} rows arrived, ${expected} expected`);
      const run = { storage, what, rows: got.rows, seconds: got.seconds, mib: got.bytes / 1024 / 1024, peakBefore, peakAfter: server.memoryMiB().peak };
      ctx.log(
        `${storage} ${what}: ${run.rows} rows in ${run.seconds.toFixed(1)} s = ${Math.round(run.rows / run.seconds)} rows/s, ` +
          `${run.mib.toFixed(0)} MiB; server peak RSS ${run.peakBefore.toFixed(0)} -> ${run.peakAfter.toFixed(0)} MiB`,
      );
      runs.push(run);
    }
    return runs;
  } finally {
    await server.stop();
  }
}

export async function runExportBench(ctx: BenchContext, storages: Storage[] = ['PostgreSQL', 'PGlite']): Promise<string> {
  const runs: Run[] = [];
  for (const storage of storages) {
    const started = Date.now();
    const { env, seeded } = await seededStorage(ctx, storage, 'export', (database) => seed(database, MEMBERS[storage]));
    ctx.log(`${storage}: seeded ${MEMBERS[storage]} memberships and ${seeded.payments} payments in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    runs.push(...(await measure(ctx, storage, env, seeded)));
  }
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    '## Export (GET …/memberships/export and …/payments/export)',
    '',
    `One export at a time through the real server (\`node dist/main.js\`, LOG_LEVEL=info), read by a client in another process as fast as it can, ` +
      `after a warm-up export of a 5,000-member project. Peak RSS is the server's VmHWM before and after each export. ` +
      `Machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${os.loadavg()[0]!.toFixed(1)} at the end. ` +
      `Target: at least ${n(TARGET_ROWS_PER_S)} rows/s on PostgreSQL; peak RSS growth that does not follow the row count.`,
    '',
    '| Storage | Export | rows | MiB | seconds | rows/s | server peak RSS before → after (MiB) | growth (MiB) | ≥ 100,000 rows/s |',
    '|---|---|---:|---:|---:|---:|---|---:|---|',
    ...runs.map(
      (r) =>
        `| ${r.storage} | ${r.what} | ${n(r.rows)} | ${n(r.mib)} | ${r.seconds.toFixed(1)} | ${n(r.rows / r.seconds)} | ${n(r.peakBefore)} → ${n(r.peakAfter)} | ${n(r.peakAfter - r.peakBefore)} | ` +
        `${r.storage === 'PostgreSQL' ? (r.rows / r.seconds >= TARGET_ROWS_PER_S ? 'yes' : 'no') : '(no target)'} |`,
    ),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStandalone({ name: 'export', command: COMMAND, storageVar: 'BENCH_EXPORT_STORAGE', run: runExportBench });
}
