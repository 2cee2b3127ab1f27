/**
 * Bulk extend benchmark (PostgreSQL): `PATCH /v2/projects/{project_id}/memberships/extend` on a
 * project of 1,000,000 memberships, through the real server (`node dist/main.js`), against the
 * bare `UPDATE memberships SET end_date=$1, status='active', updated_at=now() WHERE project_id=$2`
 * sent through bench/raw-server.ts on the same database; and the latency of single extends of the
 * same project sent at a steady rate while a bulk runs, against the same load without one.
 *
 *   npm run build && npx tsx bench/bulk.ts
 *
 * Needs PostgreSQL at postgres://postgres@127.0.0.1:5432/test (BENCH_DATABASE_URL overrides), where
 * it creates its own database and drops it afterwards. Knobs: BENCH_BULK_ROWS (1,000,000),
 * BENCH_BULK_REPS (3), BENCH_SINGLE_RATE (single extends per second, 100). Writes its section of
 * bench/RESULTS.md between the `bulk` markers. bench/run.ts calls `runBulkBench` for its quick mode.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/database/db.js';
import { adminQuery } from './lib/admin.js';
import { timeBulkExtend } from './lib/load.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { measuredCommit } from './lib/report.js';
import { seedTenant, type Tenant } from './lib/seed.js';
import { alternate, median } from './lib/stats.js';

export interface BulkBenchOptions {
  /** 100,000 memberships, two reps: the quick bench mode (about 25 s). */
  quick: boolean;
  /** A PostgreSQL URL allowed to CREATE DATABASE. */
  adminUrl: string;
  log: (line: string) => void;
}

export interface BulkBenchRatio {
  name: string;
  value: number;
  target: string;
  met: boolean;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BULK_TARGET = 1.2;
const P99_TARGET_MS = 100;
const YEAR_MS = 365 * 86_400_000;

interface Settings {
  rows: number;
  reps: number;
  /** Single extends per second, sent at a steady pace whatever the answers take (an open loop). */
  rate: number;
}

function settingsOf(quick: boolean): Settings {
  const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const rate = env('BENCH_SINGLE_RATE', 100);
  return quick ? { rows: 100_000, reps: 2, rate } : { rows: env('BENCH_BULK_ROWS', 1_000_000), reps: env('BENCH_BULK_REPS', 3), rate };
}

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
  failures: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Single extends (`PATCH …/memberships/{user_id}/extend`, a random member, a random future date)
 * sent every 1000/rate ms until `until` settles, each timed from its own send: an open loop, so a
 * request that waits does not hold back the next ones (no coordinated omission).
 */
async function singleExtends(url: string, tenant: Tenant, rate: number, until: Promise<unknown>): Promise<Latencies> {
  const latencies: number[] = [];
  let failures = 0;
  const inFlight = new Set<Promise<void>>();
  const base = `${url}/v2/projects/${tenant.projectId}/memberships/`;
  const send = () => {
    const user = 1 + Math.floor(Math.random() * tenant.members);
    const extend = new Date(Date.now() + YEAR_MS + Math.floor(Math.random() * YEAR_MS)).toISOString();
    const started = performance.now();
    const request = fetch(`${base}${user}/extend`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ extend }),
      signal: AbortSignal.timeout(60_000),
    })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status === 200) latencies.push(performance.now() - started);
        else failures++;
      })
      .catch(() => {
        failures++;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  let done = false;
  until.then(
    () => (done = true),
    () => (done = true),
  );
  const interval = 1000 / rate;
  const start = performance.now();
  for (let i = 0; !done; i++) {
    send();
    const next = start + (i + 1) * interval;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  await Promise.all([...inFlight]);
  const sorted = latencies.sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, count: sorted.length, failures };
}

/** Drops the bench database if the run is interrupted (Ctrl-C) before its own clean-up. */
let dropOnInterrupt: (() => Promise<unknown>) | null = null;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const s = (ms: number) => (ms / 1000).toFixed(2);
const x = (ratio: number) => `${ratio.toFixed(2)}×`;
const ms1 = (v: number) => v.toFixed(1);

export async function runBulkBench(options: BulkBenchOptions): Promise<{ markdown: string; ratios: BulkBenchRatio[] }> {
  const { log } = options;
  const cfg = settingsOf(options.quick);
  const name = `tenure_bench_bulk_${randomBytes(4).toString('hex')}`;
  const url = new URL(options.adminUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-bulk-'));
  const servers: Server[] = [];
  await adminQuery(options.adminUrl, `CREATE DATABASE "${name}"`);
  dropOnInterrupt = () => adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  const database = await openDatabase({ kind: 'postgres', url: dbUrl, poolSize: 2 });
  try {
    await database.migrate();
    const seedStarted = performance.now();
    const tenant = await seedTenant(database, 'bench bulk', cfg.rows);
    // Another project's memberships beside it, as in a shared database: the bulk must not scan them.
    await seedTenant(database, 'bench neighbour', Math.round(cfg.rows / 10));
    // The first UPDATE of fresh rows grows the table; later ones reuse vacuumed space. One untimed
    // pass brings the table to the state every timed run sees.
    await database.db.execute(sql`UPDATE memberships SET updated_at = now() WHERE project_id = ${tenant.projectId}`);
    await adminQuery(dbUrl, 'VACUUM ANALYZE');
    log(`bulk: database ${name}, ${cfg.rows.toLocaleString('en-US')} memberships seeded in ${s(performance.now() - seedStarted)} s`);
    // Each timed run starts alike: no dead rows from the run before, nothing left to write out.
    const settle = async () => {
      await adminQuery(dbUrl, 'VACUUM memberships');
      await adminQuery(dbUrl, 'CHECKPOINT');
    };

    const full = await startServer(
      'full-bulk',
      ['dist/main.js'],
      {
        DATABASE_URL: dbUrl,
        DATA_DIR: path.join(tmp, 'data'),
        LOG_LEVEL: 'info',
        TENURE_DEMO_PROJECT: 'false',
        TENURE_RATE_LIMIT_KEY: '1000000000',
        TENURE_RATE_LIMIT_IP: '1000000000',
        TENURE_RATE_LIMIT_BURST: '1000000000',
      },
      tmp,
    );
    servers.push(full);
    const raw = await startServer('raw-bulk', ['--import', 'tsx', 'bench/raw-server.ts'], { DATABASE_URL: dbUrl }, tmp);
    servers.push(raw);

    // 1. The bulk extend through the full stack against the bare UPDATE, alternating.
    const sides = { full, bare: raw };
    const times = { full: [] as number[], bare: [] as number[] };
    for (let rep = 0; rep < cfg.reps; rep++) {
      for (const side of alternate(['full', 'bare'] as const, rep)) {
        await settle();
        const elapsed = await timeBulkExtend(sides[side].url, tenant);
        times[side].push(elapsed);
        log(`bulk: rep ${rep + 1} ${side.padEnd(4)} ${s(elapsed)} s`);
      }
    }
    const perRep = times.full.map((f, i) => f / times.bare[i]!);
    const ratio = median(perRep);

    // 2. Single extends of the same project at a steady rate: first without a bulk (as long as a
    // bulk takes), then while one runs.
    await settle();
    const window = median(times.full);
    const quiet = await singleExtends(full.url, tenant, cfg.rate, sleep(window));
    log(`bulk: single extends without a bulk: p50 ${ms1(quiet.p50)} ms, p99 ${ms1(quiet.p99)} ms (${quiet.count})`);
    await settle();
    let bulkMs = Number.NaN;
    const bulk = timeBulkExtend(full.url, tenant).then((elapsed) => (bulkMs = elapsed));
    const during = await singleExtends(full.url, tenant, cfg.rate, bulk);
    await bulk;
    log(`bulk: single extends during a bulk (${s(bulkMs)} s): p50 ${ms1(during.p50)} ms, p99 ${ms1(during.p99)} ms (${during.count})`);
    if (quiet.failures + during.failures > 0) throw new Error(`${quiet.failures + during.failures} single extends failed`);

    const ratios: BulkBenchRatio[] = [
      { name: 'bulk extend full ÷ bare UPDATE', value: ratio, target: `≤ ${BULK_TARGET}×`, met: ratio <= BULK_TARGET },
      { name: 'single extends during a bulk p99', value: during.p99, target: `< ${P99_TARGET_MS} ms`, met: during.p99 < P99_TARGET_MS },
    ];
    const markdown = [
      '## Bulk extend: `PATCH /v2/projects/{project_id}/memberships/extend` (PostgreSQL)',
      '',
      `A project of ${cfg.rows.toLocaleString('en-US')} memberships (half expired), beside another of ${Math.round(cfg.rows / 10).toLocaleString('en-US')}.`,
      '**Full**: the real server (`node dist/main.js`, info logging, worker runtime on): the bulk extend',
      'runs as a job of 5,000-membership batches, each its own transaction (docs/memberships.md).',
      "**Bare**: bench/raw-server.ts running `UPDATE memberships SET end_date=$1, status='active',",
      'updated_at=now() WHERE project_id=$2`, one statement. Same database, sides alternating, the table',
      'vacuumed and checkpointed before each run; the ratio is the median of the per-rep ratios.',
      '',
      '| memberships | full s (median) | bare UPDATE s (median) | full ÷ bare (median) | per rep | target |',
      '|---:|---:|---:|---:|---|---|',
      `| ${cfg.rows.toLocaleString('en-US')} | ${s(median(times.full))} | ${s(median(times.bare))} | **${x(ratio)}** | ${perRep.map(x).join(', ')} | ≤ ${BULK_TARGET}× ${ratio <= BULK_TARGET ? 'met' : '**MISSED**'} |`,
      '',
      `Single extends of members of the same project (\`PATCH …/memberships/{user_id}/extend\`, random member and`,
      `future date), sent at ${cfg.rate}/s in an open loop (each timed from its own send, none waiting for another),`,
      'to the full server: for as long as a bulk takes without one, then during a bulk.',
      '',
      '| single extends | requests | p50 ms | p99 ms | max ms | target |',
      '|---|---:|---:|---:|---:|---|',
      `| without a bulk | ${quiet.count} | ${ms1(quiet.p50)} | ${ms1(quiet.p99)} | ${ms1(quiet.max)} | |`,
      `| during a bulk (${s(bulkMs)} s) | ${during.count} | ${ms1(during.p50)} | ${ms1(during.p99)} | ${ms1(during.max)} | p99 < ${P99_TARGET_MS} ms ${during.p99 < P99_TARGET_MS ? 'met' : '**MISSED**'} |`,
      '',
      'The machine is shared and noisy (2 cores): absolute numbers move from run to run; compare side by side.',
    ].join('\n');
    return { markdown, ratios };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await database.close();
    await adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    dropOnInterrupt = null;
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Replaces (or appends) the section between `<!-- bulk:begin … -->` and `<!-- bulk:end -->`. */
async function writeSection(markdown: string, command: string): Promise<void> {
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const section = [
    `<!-- bulk:begin (written by \`${command}\`) -->`,
    markdown.split('\n')[0]!,
    '',
    `Command: \`${command}\` · commit: ${measuredCommit()} · date: ${new Date().toISOString()}`,
    ...markdown.split('\n').slice(1),
    '<!-- bulk:end -->',
  ].join('\n');
  const current = await readFile(file, 'utf8').catch(() => '');
  const marked = /<!-- bulk:begin[\s\S]*?<!-- bulk:end -->/;
  await writeFile(file, marked.test(current) ? current.replace(marked, () => section) : `${current.trimEnd()}\n\n${section}\n`);
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stopAll()
        .then(() => dropOnInterrupt?.())
        .finally(() => process.exit(130));
    });
  }
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const quick = process.argv.includes('--quick');
  const { markdown, ratios } = await runBulkBench({ quick, adminUrl, log: (line) => console.log(line) });
  await writeSection(markdown, `npx tsx bench/bulk.ts${quick ? ' --quick' : ''}`);
  console.log(markdown);
  const missed = ratios.filter((r) => !r.met);
  for (const r of missed) console.log(`FAILED: ${r.name}: ${r.value.toFixed(2)} (target ${r.target})`);
  process.exitCode = missed.length ? 1 : 0;
}

if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) await main();
