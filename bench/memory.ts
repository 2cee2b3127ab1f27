/**
 * Memory benchmark: the resident memory (VmRSS) and its peak (VmHWM) of the real server,
 * `node dist/main.js` started as `npm start` starts it, read from /proc from outside
 * (bench/lib/memory.ts), on embedded storage (PGlite) and on PostgreSQL:
 *
 * - at rest, BENCH_MEMORY_REST_S (30) seconds after a first start (an empty data directory or
 *   database: initdb and every migration) and after a later start (migrated and seeded);
 * - under the per-request load of the throughput benchmark (extend one member, 10 connections);
 * - during a bulk extend of every member (its answer awaited up to BENCH_MEMORY_BULK_TIMEOUT_S,
 *   3600 s), and during a CSV import of BENCH_MEMORY_IMPORT_ROWS (1,000,000) rows by `npx tenure
 *   membership import` (its own process: on embedded storage the server is stopped meanwhile, one
 *   process holds a data directory; on PostgreSQL it runs beside the server, whose memory is read
 *   too);
 * - over BENCH_MEMORY_STEADY_S (300; 3600 for the hour) of steady mixed load at
 *   BENCH_MEMORY_RATE (50) requests/s: extends, list pages, creates with an Idempotency-Key; the
 *   first tenth of the run against the last (for a run of 20 minutes or more, its first ten minutes against its last ten);
 * - with BENCH_MEMORY_SIZES memberships (10,000, 100,000 and 1,000,000; the steady run on
 *   BENCH_MEMORY_STEADY_SIZES, 10,000 and 1,000,000), and the disk each size takes.
 * Where the memory is (PGlite's WebAssembly memory, mapped files, the rest) comes from smaps.
 * On PGlite the per-request load also runs on two servers side by side, one with PGlite's own page
 * cache (TENURE_EMBEDDED_CACHE_MB=128) and one with tenure's default, alternating, to show what the
 * smaller cache costs in throughput.
 *
 *   npm run build && npx tsx bench/memory.ts     # BENCH_MEMORY_STORAGE=pg or pglite for one storage
 *
 * BENCH_MEMORY_PHASES (first,rest,load,bulk,steady,import,cache: all) picks the phases, e.g. the hour
 * alone: BENCH_MEMORY_PHASES=steady BENCH_MEMORY_SIZES=10000 BENCH_MEMORY_STEADY_S=3600. A phase
 * left out reads as "—" in the tables and counts in no target.
 *
 * Writes the memory section of bench/RESULTS.md (between its markers).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { adminQuery } from './lib/admin.js';
import { benchDatabase, copyPgliteDir, runStandalone, seededStorage, startFull, type BenchContext } from './lib/context.js';
import { extendOneLoad, timeBulkExtend } from './lib/load.js';
import { breakdownOf, runMeasured, sampled, tenths, type MemoryBreakdown } from './lib/memory.js';
import type { Server } from './lib/processes.js';
import type { Database } from '../src/database/db.js';
import { seedTenant, type Tenant } from './lib/seed.js';
import { alternate, median } from './lib/stats.js';
import { memoryMarkdown, type CacheRound, type SizeResult, type StorageResult } from './lib/memory-report.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const list = (name: string, fallback: string) => env(name, fallback).split(',').map(Number);
export const SETTINGS = {
  sizes: list('BENCH_MEMORY_SIZES', '10000,100000,1000000'),
  steadySizes: list('BENCH_MEMORY_STEADY_SIZES', '10000,1000000'),
  restS: Number(env('BENCH_MEMORY_REST_S', '30')),
  loadS: Number(env('BENCH_MEMORY_LOAD_S', '20')),
  steadyS: Number(env('BENCH_MEMORY_STEADY_S', '300')),
  rate: Number(env('BENCH_MEMORY_RATE', '50')),
  importRows: Number(env('BENCH_MEMORY_IMPORT_ROWS', '1000000')),
  cacheRounds: Number(env('BENCH_MEMORY_CACHE_ROUNDS', '3')),
  bulkTimeoutS: Number(env('BENCH_MEMORY_BULK_TIMEOUT_S', '3600')),
};
const PHASES = ['first', 'rest', 'load', 'bulk', 'steady', 'import', 'cache'] as const;
type Phase = (typeof PHASES)[number];
const chosen = env('BENCH_MEMORY_PHASES', PHASES.join(',')).split(',').map((p) => p.trim());
for (const p of chosen) if (!(PHASES as readonly string[]).includes(p)) throw new Error(`BENCH_MEMORY_PHASES: unknown phase "${p}" (phases: ${PHASES.join(', ')})`);
const runs = (phase: Phase) => chosen.includes(phase);
const SKIPPED: MemoryBreakdown = { rss: Number.NaN, peak: Number.NaN, wasmRss: Number.NaN, wasmSize: Number.NaN, files: Number.NaN, otherAnon: Number.NaN };
const skippedSample = { value: undefined, samples: [], max: Number.NaN, peak: Number.NaN };
const COMMAND = 'npm run build && npx tsx bench/memory.ts';
const YEAR_MS = 365 * 86_400_000;
type Storage = 'PostgreSQL' | 'PGlite';

/**
 * A seeded project, then what autovacuum has done to a table this size by the time it serves
 * traffic (the statistics, the visibility map), done at once: this machine's PostgreSQL runs
 * without autovacuum, and a count planned on no statistics reads every row's heap page. Embedded
 * storage's own vacuumer does it in the server; done here too, both storages start from the same
 * state.
 */
async function seedAnalyzed(db: Database, members: number): Promise<Tenant> {
  const tenant = await seedTenant(db, 'memory bench', members);
  await db.db.execute(sql`VACUUM ANALYZE memberships`);
  return tenant;
}

/** Waits `restS` seconds with nothing sent, then reads where the server's memory is. */
async function atRest(server: Server): Promise<MemoryBreakdown> {
  await sleep(SETTINGS.restS * 1000);
  return breakdownOf(server.pid);
}

/** Extends, list pages and creates (each with its own Idempotency-Key), `rate` a second in all, for `seconds`. */
async function steadyMixed(ctx: BenchContext, server: Server, tenant: Tenant, seconds: number, rate: number) {
  const base = `/v2/projects/${tenant.projectId}/memberships`;
  const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' };
  const future = () => new Date(Date.now() + YEAR_MS + Math.floor(Math.random() * YEAR_MS)).toISOString();
  let created = 0;
  const run = await sampled(server.pid, 1000, () =>
    autocannon({
      url: server.url,
      connections: 4,
      duration: seconds,
      overallRate: rate,
      requests: [
        {
          method: 'PATCH',
          setupRequest: (r) => ({ ...r, headers, path: `${base}/${1 + Math.floor(Math.random() * tenant.members)}/extend`, body: JSON.stringify({ extend: future() }) }),
        },
        { method: 'GET', setupRequest: (r) => ({ ...r, headers: { authorization: headers.authorization }, path: `${base}?limit=20` }) },
        {
          method: 'POST',
          setupRequest: (r) => {
            created++;
            const body = JSON.stringify({ user_id: String(5_000_000_000 + created), end_date: future() });
            return { ...r, path: base, headers: { ...headers, 'idempotency-key': `memory-${randomBytes(8).toString('hex')}` }, body };
          },
        },
      ],
    }),
  );
  const failures = run.value.non2xx + run.value.errors + run.value.timeouts;
  ctx.log(`  steady: ${JSON.stringify(run.value.statusCodeStats)}, ${run.value.errors} errors, ${run.value.timeouts} timeouts`);
  if (failures > run.value.requests.total / 100) throw new Error(`steady load on ${server.name}: ${failures} of ${run.value.requests.total} requests failed (status codes ${JSON.stringify(run.value.statusCodeStats)}):\n${server.logTail().split('\n').filter((l) => /"statusCode":[45]/.test(l)).slice(-3).join('\n')}`);
  // Minute by minute, for runs long enough to read a trend from (the hour: first ten minutes against the last ten).
  for (let m = 0; m * 60 < seconds; m++) {
    const inMinute = run.samples.filter((s) => s.t >= m * 60 && s.t < (m + 1) * 60).map((s) => s.rss);
    if (inMinute.length > 0 && seconds >= 600) ctx.log(`  steady minute ${m + 1}: ${(inMinute.reduce((a, b) => a + b, 0) / inMinute.length).toFixed(1)} MiB (max ${Math.max(...inMinute).toFixed(1)})`);
  }
  return { ...tenths(run.samples), requests: run.value.requests.total, seconds };
}

/** A CSV of `rows` members (user ids from 1,000,000,000), end dates half past and half future. */
async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  let buffer = 'user_id,end_date\n';
  const now = Date.now();
  for (let i = 0; i < rows; i++) {
    buffer += `${1_000_000_000 + i},${new Date(now + (i % 2 === 0 ? 30 : -30) * 86_400_000).toISOString()}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}

/** `npx tenure membership import` of the CSV into the tenant's project, its memory read throughout. */
async function importRun(ctx: BenchContext, storageEnv: Record<string, string>, tenant: Tenant) {
  const file = path.join(ctx.tmp, `import-${randomBytes(3).toString('hex')}.csv`);
  await writeCsv(file, SETTINGS.importRows);
  // One V8 worker thread, as the image runs every command and docs/memory.md says to run the CLI
  // (BENCH_MEMORY_IMPORT_NODE_OPTIONS= for node's default of four: 354-483 MiB against 327-329 for
  // 1,000,000 rows, their malloc arenas the difference).
  const nodeOptions = process.env.BENCH_MEMORY_IMPORT_NODE_OPTIONS ?? '--v8-pool-size=1';
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', NODE_OPTIONS: nodeOptions, ...storageEnv };
  if (!storageEnv.DATABASE_URL) delete childEnv.DATABASE_URL;
  const args = ['dist/cli/main.js', 'membership', 'import', '--project', tenant.projectId, '--file', file, '--no-progress'];
  const run = await runMeasured(args, childEnv, process.cwd());
  if (!/inserted/i.test(run.output)) throw new Error(`import printed no summary:\n${run.output}`);
  return { peak: run.peak, seconds: run.seconds, rows: SETTINGS.importRows };
}

/** Disk the storage takes: the data directory, or the database. */
async function diskMiB(ctx: BenchContext, storageEnv: Record<string, string>): Promise<number> {
  if (storageEnv.DATABASE_URL) return Number(await adminQuery(storageEnv.DATABASE_URL, 'SELECT pg_database_size(current_database())')) / 2 ** 20;
  return Number(execFileSync('du', ['-sk', storageEnv.DATA_DIR!]).toString().split('\t')[0]) / 1024;
}

/** PGlite's own page cache (128 MB) against tenure's, side by side: extend-one req/s in alternating rounds. */
async function cacheRounds(ctx: BenchContext, dir: string, tenant: Tenant): Promise<CacheRound[]> {
  const sides = { before: '128', after: String(Number(env('TENURE_EMBEDDED_CACHE_MB', '16'))) } as const;
  const servers = {
    before: await startFull(ctx, `mem-cache-128-${tenant.members}`, { DATA_DIR: await copyPgliteDir(ctx, dir, `cache-128-${tenant.members}`), TENURE_EMBEDDED_CACHE_MB: sides.before }),
    after: await startFull(ctx, `mem-cache-${sides.after}-${tenant.members}`, { DATA_DIR: await copyPgliteDir(ctx, dir, `cache-new-${tenant.members}`), TENURE_EMBEDDED_CACHE_MB: sides.after }),
  };
  try {
    for (const side of ['before', 'after'] as const) await extendOneLoad(servers[side].url, tenant, { connections: 10, durationS: 5 });
    const rounds: CacheRound[] = [];
    for (let round = 0; round < SETTINGS.cacheRounds; round++) {
      const rps: Record<string, number> = {};
      for (const side of alternate(['before', 'after'] as const, round)) {
        await extendOneLoad(servers[side].url, tenant, { connections: 10, durationS: 2 });
        rps[side] = (await extendOneLoad(servers[side].url, tenant, { connections: 10, durationS: 6 })).rps;
      }
      rounds.push({ before: rps.before!, after: rps.after!, beforeRss: breakdownOf(servers.before.pid).rss, afterRss: breakdownOf(servers.after.pid).rss });
      ctx.log(`  cache round ${round + 1}: 128 MB ${rps.before!.toFixed(0)} req/s, ${sides.after} MB ${rps.after!.toFixed(0)} req/s`);
    }
    return rounds;
  } finally {
    await Promise.all([servers.before.stop(), servers.after.stop()]);
  }
}

async function measureSize(ctx: BenchContext, storage: Storage, members: number, withImport: boolean): Promise<SizeResult> {
  const name = `mem-${storage === 'PGlite' ? 'pglite' : 'pg'}-${members}`;
  const seeding = performance.now();
  const { env: seededEnv, seeded: tenant } = await seededStorage(ctx, storage, name, (db) => seedAnalyzed(db, members));
  const storageEnv = storage === 'PGlite' ? seededEnv : { ...seededEnv, DATA_DIR: path.join(ctx.tmp, `${name}-data`) };
  ctx.log(`${storage}, ${members} members: seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);
  const disk = await diskMiB(ctx, storageEnv);
  const cache = storage === 'PGlite' && SETTINGS.cacheRounds > 0 && runs('cache') ? await cacheRounds(ctx, storageEnv.DATA_DIR!, tenant) : [];
  const server = await startFull(ctx, name, storageEnv);
  let result: SizeResult;
  try {
    const rest = runs('rest') ? await atRest(server) : SKIPPED;
    ctx.log(`  later start, at rest: ${rest.rss.toFixed(0)} MiB (peak ${rest.peak.toFixed(0)}, WebAssembly ${rest.wasmRss.toFixed(0)} of ${rest.wasmSize.toFixed(0)})`);
    const load = runs('load') ? await sampled(server.pid, 250, () => extendOneLoad(server.url, tenant, { connections: 10, durationS: SETTINGS.loadS })) : { ...skippedSample, value: { rps: Number.NaN, failures: 0 } };
    if (load.value.failures > 0) throw new Error(`per-request load on ${name} had ${load.value.failures} failures:\n${server.logTail()}`);
    ctx.log(`  per-request load: ${load.value.rps.toFixed(0)} req/s, peak ${load.peak.toFixed(0)} MiB`);
    const afterLoad = runs('load') ? breakdownOf(server.pid) : SKIPPED;
    // A bulk extend that does not answer within BENCH_MEMORY_BULK_TIMEOUT_S (3600) is reported as
    // such, with the memory read meanwhile; the other phases still run.
    const bulk = runs('bulk') ? await sampled(server.pid, 250, () => timeBulkExtend(server.url, tenant, SETTINGS.bulkTimeoutS * 1000).catch((err: unknown) => (ctx.log(`  bulk extend failed: ${String(err)}`), Number.NaN))) : { ...skippedSample, value: Number.NaN };
    ctx.log(`  bulk extend of ${members}: ${(bulk.value / 1000).toFixed(1)} s, peak ${bulk.peak.toFixed(0)} MiB`);
    const steady = SETTINGS.steadySizes.includes(members) && runs('steady') ? await steadyMixed(ctx, server, tenant, SETTINGS.steadyS, SETTINGS.rate) : null;
    if (steady) ctx.log(`  steady: first ${steady.windowS.toFixed(0)} s ${steady.first.toFixed(0)} MiB, last ${steady.windowS.toFixed(0)} s ${steady.last.toFixed(0)} MiB`);
    result = { members, disk, rest, loadRps: load.value.rps, loadMax: load.max, loadPeak: load.peak, afterLoad, bulkS: bulk.value / 1000, bulkMax: bulk.max, bulkPeak: bulk.peak, steady, cache, import: null };
    if (withImport && storage === 'PostgreSQL') {
      const during = await sampled(server.pid, 250, () => importRun(ctx, storageEnv, tenant));
      result.import = { ...during.value, serverMax: during.max };
    }
  } finally {
    await server.stop();
  }
  if (withImport && storage === 'PGlite') result.import = { ...(await importRun(ctx, storageEnv, tenant)), serverMax: null };
  if (result.import) ctx.log(`  import of ${result.import.rows}: ${result.import.seconds.toFixed(0)} s, the import's peak ${result.import.peak.toFixed(0)} MiB`);
  return result;
}

async function firstStart(ctx: BenchContext, storage: Storage): Promise<MemoryBreakdown> {
  let storageEnv: Record<string, string>;
  if (storage === 'PGlite') {
    storageEnv = { DATA_DIR: path.join(ctx.tmp, `first-${randomBytes(3).toString('hex')}`) };
  } else {
    const { url } = await benchDatabase(ctx);
    storageEnv = { DATABASE_URL: url, TENURE_ENCRYPTION_KEY: randomBytes(32).toString('base64'), DATA_DIR: path.join(ctx.tmp, 'first-pg-data') };
  }
  const server = await startFull(ctx, `mem-first-${storage}`, storageEnv);
  try {
    const rest = await atRest(server);
    ctx.log(`${storage}: first start, at rest ${rest.rss.toFixed(0)} MiB (peak ${rest.peak.toFixed(0)})`);
    return rest;
  } finally {
    await server.stop();
  }
}

export async function runMemoryBench(ctx: BenchContext, storages: Storage[]): Promise<string> {
  const results: StorageResult[] = [];
  for (const storage of storages) {
    const first = runs('first') ? await firstStart(ctx, storage) : SKIPPED;
    const sizes: SizeResult[] = [];
    // The import goes into the smallest size's project, after its other phases.
    for (const [i, members] of SETTINGS.sizes.entries()) sizes.push(await measureSize(ctx, storage, members, i === 0 && SETTINGS.importRows > 0 && runs('import')));
    results.push({ storage, first, sizes });
  }
  return memoryMarkdown(results, SETTINGS, median);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  // One storage alone writes a section of its own, so the two may run side by side (two processes).
  const only = process.env.BENCH_MEMORY_STORAGE;
  const name = only === 'pg' || only === 'pglite' ? `memory-${only}` : 'memory';
  await runStandalone({ name, command: only ? `${COMMAND} (BENCH_MEMORY_STORAGE=${only})` : COMMAND, storageVar: 'BENCH_MEMORY_STORAGE', run: runMemoryBench });
}
