import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../src/store/db.js';
import { adminQuery, machineFacts } from './lib/admin.js';
import { extendOneLoad, timeBulkExtend } from './lib/load.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { writeResults, type BulkResult, type PerRequestResult, type RunResult, type Side } from './lib/report.js';
import { seedTenant, type Tenant } from './lib/seed.js';
import { alternate } from './lib/stats.js';

/**
 * `npm run bench`: the full server (`node dist/main.js`) against a bare `node:http` server doing
 * only the same database work (bench/raw-server.ts), side by side in one run, on PostgreSQL and
 * on PGlite; then the bulk extend against the bare SQL UPDATE. Writes bench/RESULTS.md.
 * Only ratios are meaningful on a shared machine: the sides alternate so noise hits both.
 * bench/README.md explains the method; the knobs below are environment variables.
 */

const int = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const cfg = {
  adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  durationS: int('BENCH_DURATION', 10),
  warmupS: int('BENCH_WARMUP', 2),
  /** Once per server before its first run: PGlite's WASM takes ~10 s of load to reach full speed. */
  firstWarmupS: int('BENCH_FIRST_WARMUP', 10),
  rounds: int('BENCH_ROUNDS', 3),
  connections: int('BENCH_CONNECTIONS', 10),
  members: int('BENCH_MEMBERS', 10_000),
  bulkRows: int('BENCH_BULK_ROWS', 1_000_000),
  bulkReps: int('BENCH_BULK_REPS', 3),
  // PGlite at 1,000,000 rows: seeding and the settling pass take over a minute and each timed
  // UPDATE 20–40 s on a 2-core machine, so the phase alone takes 3–4 minutes, past its 2-minute
  // budget. 100,000 rows keep it to about one minute; BENCH_BULK_ROWS_PGLITE=1000000 runs the full size.
  bulkRowsPglite: int('BENCH_BULK_ROWS_PGLITE', 100_000),
  bulkRepsPglite: int('BENCH_BULK_REPS_PGLITE', 5),
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
  /** Phases to run, comma-separated: pg, bulk-pg, pglite, bulk-pglite (default: all). */
  only: new Set((process.env.BENCH_ONLY ?? 'pg,bulk-pg,pglite,bulk-pglite').split(',')),
};

const STARTUP_SETTLE_MS = 1_000;
const root = fileURLToPath(new URL('..', import.meta.url));
const FULL = ['dist/main.js'];
const RAW = ['--import', 'tsx', 'bench/raw-server.ts'];
const fullEnv = (storage: Record<string, string>) => ({
  ...storage,
  LOG_LEVEL: cfg.logLevel,
  TENURE_DEMO_PROJECT: 'false',
  // Raised, not bypassed: the limiter still runs on every request, it just never refuses.
  TENURE_RATE_LIMIT_KEY: '1000000000',
  TENURE_RATE_LIMIT_IP: '1000000000',
  TENURE_RATE_LIMIT_BURST: '1000000000',
});

const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

let tmp = '';
let benchDb = '';
let cleaning: Promise<void> | null = null;

const admin = (sqlText: string, url = cfg.adminUrl) => adminQuery(url, sqlText);

/** Stops the servers, removes the temp dir and drops the bench database; every caller awaits the same run. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (benchDb) await admin(`DROP DATABASE IF EXISTS "${benchDb}" WITH (FORCE)`).catch(() => undefined);
  })();
  return cleaning;
}

interface Target {
  server: Server;
  tenant: Tenant;
  query?: string;
}

/** Rounds of full / raw / bare runs, the order reversed every other round, each after a warm-up. */
async function perRequest(targets: Record<Side, Target>, beforeRun: () => Promise<unknown>): Promise<Record<Side, RunResult[]>> {
  const runs: Record<Side, RunResult[]> = { full: [], raw: [], bare: [] };
  // V8 compiles hot code (and PGlite's WASM) to optimised code in the background during the first
  // seconds of load; measured runs start once both servers are past that.
  for (const side of ['full', 'raw'] as const) {
    const { server, tenant } = targets[side];
    await extendOneLoad(server.url, tenant, { connections: cfg.connections, durationS: cfg.firstWarmupS });
  }
  for (let round = 0; round < cfg.rounds; round++) {
    for (const side of alternate(['full', 'raw', 'bare'] as const, round)) {
      const { server, tenant, query } = targets[side];
      await beforeRun();
      const options = { connections: cfg.connections, query };
      await extendOneLoad(server.url, tenant, { ...options, durationS: cfg.warmupS });
      const cpuBefore = server.cpuSeconds();
      const load = await extendOneLoad(server.url, tenant, { ...options, durationS: cfg.durationS });
      const serverCpuUs = ((server.cpuSeconds() - cpuBefore) * 1e6) / load.requests;
      if (load.failures > 0) throw new Error(`${side} run on ${server.name} had ${load.failures} failed requests`);
      runs[side].push({ ...load, serverCpuUs });
      log(`  round ${round + 1} ${side.padEnd(4)} ${load.rps.toFixed(0)} req/s, p50 ${load.p50} ms, p99 ${load.p99} ms, ${serverCpuUs.toFixed(0)} µs CPU/req`);
    }
  }
  return runs;
}

/**
 * Timed bulk extends, alternating sides: `full` is the service's PATCH …/memberships/extend,
 * `bare` the raw server's bare UPDATE, on the same database. `settle` runs (untimed) before each.
 */
async function bulkReps(
  backend: string,
  reps: number,
  tenant: Tenant,
  sides: Record<'full' | 'bare', () => Promise<Server>>,
  settle: () => Promise<unknown>,
  release: (server: Server) => Promise<void>,
): Promise<BulkResult> {
  const ms = { full: [] as number[], bare: [] as number[] };
  for (let rep = 0; rep < reps; rep++) {
    for (const side of alternate(['full', 'bare'] as const, rep)) {
      await settle();
      const server = await sides[side]();
      const elapsed = await timeBulkExtend(server.url, tenant);
      await release(server);
      ms[side].push(elapsed);
      log(`  rep ${rep + 1} ${side.padEnd(4)} ${(elapsed / 1000).toFixed(2)} s`);
    }
  }
  return { backend, rows: tenant.members, fullMs: ms.full, bareMs: ms.bare };
}

/**
 * The first UPDATE of freshly inserted rows costs more than the next ones (the table grows instead
 * of reusing vacuumed space); one untimed pass brings the table to the state every timed rep sees.
 */
async function prepareBulk(database: Database, tenant: Tenant): Promise<void> {
  await database.db.execute(sql`UPDATE memberships SET updated_at = now() WHERE project_id = ${tenant.projectId}`);
}

async function postgresPhases(results: Results): Promise<void> {
  benchDb = `tenure_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE "${benchDb}"`);
  const url = new URL(cfg.adminUrl);
  url.pathname = `/${benchDb}`;
  const dbUrl = url.toString();
  const database = await openDatabase({ kind: 'postgres', url: dbUrl, poolSize: 2 });
  // Autovacuum may be off on a shared server: vacuum explicitly so one side's dead rows never slow the next.
  const vacuum = () => admin('VACUUM memberships', dbUrl);
  try {
    await database.migrate();
    const tenant = await seedTenant(database, 'bench per-request', cfg.members);
    await admin('VACUUM ANALYZE', dbUrl);
    log(`PostgreSQL: database ${benchDb}, ${cfg.members} memberships`);
    const full = await startServer('full-pg', FULL, fullEnv({ DATABASE_URL: dbUrl, DATA_DIR: path.join(tmp, 'pg-data') }), tmp);
    const raw = await startServer('raw-pg', RAW, { DATABASE_URL: dbUrl }, tmp);
    try {
      if (cfg.only.has('pg')) {
        const runs = await perRequest({ full: { server: full, tenant }, raw: { server: raw, tenant }, bare: { server: raw, tenant, query: '?sql=bare' } }, vacuum);
        results.perRequest.push({ backend: 'PostgreSQL', runs });
      }
      if (cfg.only.has('bulk-pg')) {
        const bulk = await seedTenant(database, 'bench bulk', cfg.bulkRows);
        await admin('VACUUM ANALYZE', dbUrl);
        await prepareBulk(database, bulk);
        log(`PostgreSQL bulk: ${cfg.bulkRows} memberships`);
        // Every timed UPDATE starts alike: dead rows vacuumed, dirty pages flushed.
        const settle = () => vacuum().then(() => admin('CHECKPOINT', dbUrl));
        const running = (s: Server) => () => Promise.resolve(s);
        results.bulk.push(await bulkReps('PostgreSQL', cfg.bulkReps, bulk, { full: running(full), bare: running(raw) }, settle, async () => undefined));
      }
    } finally {
      await full.stop();
      await raw.stop();
    }
  } finally {
    await database.close();
  }
  await admin(`DROP DATABASE IF EXISTS "${benchDb}" WITH (FORCE)`);
  benchDb = '';
}

/** A migrated PGlite data directory under the temp dir, seeded by `seed`, closed again. */
async function pgliteDir<T>(name: string, seed: (database: Database) => Promise<T>): Promise<[string, T]> {
  const dir = path.join(tmp, name);
  const database = await openDatabase({ kind: 'pglite', dataDir: dir });
  try {
    await database.migrate();
    return [dir, await seed(database)];
  } finally {
    await database.close();
  }
}

async function pglitePhases(results: Results): Promise<void> {
  if (cfg.only.has('pglite')) {
    // A data directory is open in one process at a time: each server gets its own, seeded alike.
    const [fullDir, tenant] = await pgliteDir('pglite-full', (db) => seedTenant(db, 'bench per-request', cfg.members));
    const [rawDir, rawTenant] = await pgliteDir('pglite-raw', (db) => seedTenant(db, 'bench per-request', cfg.members));
    log(`PGlite: ${cfg.members} memberships in each of two data directories`);
    const full = await startServer('full-pglite', FULL, fullEnv({ DATA_DIR: fullDir }), tmp);
    const raw = await startServer('raw-pglite', RAW, { DATA_DIR: rawDir }, tmp);
    try {
      const runs = await perRequest(
        { full: { server: full, tenant }, raw: { server: raw, tenant: rawTenant }, bare: { server: raw, tenant: rawTenant, query: '?sql=bare' } },
        async () => undefined,
      );
      results.perRequest.push({ backend: 'PGlite', runs });
    } finally {
      await full.stop();
      await raw.stop();
    }
  }
  if (cfg.only.has('bulk-pglite')) {
    const [dir, bulk] = await pgliteDir('pglite-bulk', async (db) => {
      const seeded = await seedTenant(db, 'bench bulk', cfg.bulkRowsPglite);
      await prepareBulk(db, seeded);
      return seeded;
    });
    log(`PGlite bulk: ${cfg.bulkRowsPglite} memberships; the two servers open the same data directory in turn`);
    const settle = () => pgliteDir('pglite-bulk', (db) => db.db.execute(sql`VACUUM memberships`));
    // The full server sweeps expired memberships as it starts (a scan of the table on PGlite's one
    // connection); the timed UPDATE starts after that, and the raw server is given the same pause.
    const settled = async (server: Promise<Server>) => {
      const s = await server;
      await sleep(STARTUP_SETTLE_MS);
      return s;
    };
    const sides = {
      full: () => settled(startServer('full-pglite-bulk', FULL, fullEnv({ DATA_DIR: dir }), tmp)),
      bare: () => settled(startServer('raw-pglite-bulk', RAW, { DATA_DIR: dir }, tmp)),
    };
    const result = await bulkReps('PGlite', cfg.bulkRepsPglite, bulk, sides, settle, (s) => s.stop());
    if (cfg.bulkRowsPglite < 1_000_000) {
      result.note =
        `PGlite runs the bulk at ${cfg.bulkRowsPglite.toLocaleString('en-US')} memberships: at 1,000,000, seeding and the settling ` +
        'pass take over a minute and each timed UPDATE 20–40 s on this 2-core machine (single-threaded WASM ' +
        'PostgreSQL), so the phase would take 3–4 minutes, past its 2-minute budget. `BENCH_BULK_ROWS_PGLITE=1000000` runs it.';
    }
    results.bulk.push(result);
  }
}

type Results = { perRequest: PerRequestResult[]; bulk: BulkResult[] };

async function main(): Promise<void> {
  process.chdir(root);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  const started = Date.now();
  const facts = await machineFacts(cfg.adminUrl, root);
  tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-'));
  const results: Results = { perRequest: [], bulk: [] };
  try {
    if (cfg.only.has('pg') || cfg.only.has('bulk-pg')) await postgresPhases(results);
    if (cfg.only.has('pglite') || cfg.only.has('bulk-pglite')) await pglitePhases(results);
  } finally {
    await cleanup();
  }
  const file = await writeResults(path.join(root, 'bench/RESULTS.md'), {
    command: 'npm run bench',
    date: new Date(started),
    facts,
    settings: {
      connections: cfg.connections,
      'run s': cfg.durationS,
      'warm-up': `${cfg.firstWarmupS} s per server, then ${cfg.warmupS} s per run`,
      rounds: cfg.rounds,
      memberships: cfg.members,
      'bulk reps (PostgreSQL / PGlite)': `${cfg.bulkReps} / ${cfg.bulkRepsPglite}`,
      'server LOG_LEVEL': cfg.logLevel,
    },
    ...results,
    elapsedS: (Date.now() - started) / 1000,
  });
  log(`wrote ${path.relative(root, file)} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

await main();
