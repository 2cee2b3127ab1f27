import path from 'node:path';
import { openDatabase } from '../../src/database/db.js';
import { adminQuery } from './admin.js';
import { benchDatabase, copyPgliteDir, pgliteDir, startFull, startRaw, type BenchContext } from './context.js';
import { extendOneLoad } from './load.js';
import { databaseCpuSeconds, type Server } from './processes.js';
import { seedTenant, type Tenant } from './seed.js';
import { alternate, median } from './stats.js';
import type { Ratio } from './phases.js';

/**
 * `PATCH …/memberships/{user_id}/extend` on three servers side by side: the full stack, the raw
 * server running the same statement, and the raw server running a bare single-row UPDATE.
 */

export type Side = 'full' | 'raw' | 'bare';

/** One measured run: the load figures and the server process's CPU time per request. */
export interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  serverCpuUs: number;
  /** PostgreSQL only: the database server's CPU time per request (NaN on PGlite: it is in the server's). */
  databaseCpuUs: number;
}

export interface PerRequestResult {
  backend: 'PostgreSQL' | 'PGlite';
  /** One entry per round, in round order; a side not run has none. */
  runs: Record<Side, RunResult[]>;
}

export interface PerRequestSettings {
  connections: number;
  durationS: number;
  warmupS: number;
  /** Load on each server before its first measured run (V8, and PGlite's WASM, optimise hot code). */
  firstWarmupS: number;
  rounds: number;
  members: number;
  /** The sides measured (the quick form leaves out PGlite's bare side, which no target reads). */
  sides: readonly Side[];
}

interface Target {
  server: Server;
  tenant: Tenant;
  query?: string;
}

/** The last error a server logged (pino level ≥ 50), or its last lines, cut short for a terminal. */
function lastError(log: string): string {
  const lines = log.split('\n').filter(Boolean);
  const errors = lines.filter((l) => /"level":(50|60)/.test(l));
  return (errors.length ? errors.slice(-1) : lines.slice(-5)).map((l) => (l.length > 600 ? `${l.slice(0, 600)}…` : l)).join('\n');
}

/** Rounds of runs over the sides, the order reversed every other round, each after a warm-up. */
async function rounds(
  ctx: BenchContext,
  s: PerRequestSettings,
  targets: Record<Side, Target>,
  beforeRun: () => Promise<unknown>,
  databaseCpu: () => number,
): Promise<Record<Side, RunResult[]>> {
  const runs: Record<Side, RunResult[]> = { full: [], raw: [], bare: [] };
  // V8 compiles hot code (and PGlite's WASM) to optimised code in the background during the first
  // seconds of load; measured runs start once both servers are past that.
  if (s.firstWarmupS > 0) {
    for (const side of ['full', 'raw'] as const) {
      const { server, tenant } = targets[side];
      const warm = await extendOneLoad(server.url, tenant, { connections: s.connections, durationS: s.firstWarmupS });
      ctx.log(`  warm-up ${side.padEnd(4)} ${warm.rps.toFixed(0)} req/s over ${s.firstWarmupS} s`);
    }
  }
  for (let round = 0; round < s.rounds; round++) {
    for (const side of alternate(s.sides, round)) {
      const { server, tenant, query } = targets[side];
      await beforeRun();
      const options = { connections: s.connections, query };
      if (s.warmupS > 0) await extendOneLoad(server.url, tenant, { ...options, durationS: s.warmupS });
      const cpuBefore = server.cpuSeconds();
      const dbBefore = databaseCpu();
      const load = await extendOneLoad(server.url, tenant, { ...options, durationS: s.durationS });
      const serverCpuUs = ((server.cpuSeconds() - cpuBefore) * 1e6) / load.requests;
      const databaseCpuUs = ((databaseCpu() - dbBefore) * 1e6) / load.requests;
      if (load.failures > 0) throw new Error(`${side} run on ${server.name} had ${load.failures} failed requests; its log shows:\n${lastError(server.logTail())}`);
      runs[side].push({ rps: load.rps, p50: load.p50, p99: load.p99, requests: load.requests, serverCpuUs, databaseCpuUs });
      const dbNote = Number.isNaN(databaseCpuUs) ? '' : `, database ${databaseCpuUs.toFixed(0)} µs CPU/req`;
      ctx.log(`  round ${round + 1} ${side.padEnd(4)} ${load.rps.toFixed(0)} req/s, p50 ${load.p50} ms, p99 ${load.p99} ms, ${serverCpuUs.toFixed(0)} µs CPU/req${dbNote}`);
    }
  }
  return runs;
}

/** PostgreSQL: both servers share one bench database, each with its own pool of 10 connections. */
export async function perRequestPostgres(ctx: BenchContext, s: PerRequestSettings): Promise<PerRequestResult> {
  const { url, drop } = await benchDatabase(ctx);
  const database = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
  let tenant: Tenant;
  try {
    await database.migrate();
    tenant = await seedTenant(database, 'bench per-request', s.members);
  } finally {
    await database.close();
  }
  // Autovacuum may be off on a shared server: vacuum explicitly so one side's dead rows never slow the next.
  await adminQuery(url, 'VACUUM ANALYZE');
  ctx.log(`PostgreSQL: ${s.members} memberships`);
  const starting = performance.now();
  const [full, raw] = await Promise.all([
    startFull(ctx, 'full-pg', { DATABASE_URL: url, DATA_DIR: path.join(ctx.tmp, 'pg-data') }),
    startRaw(ctx, 'raw-pg', { DATABASE_URL: url }),
  ]);
  ctx.log(`  servers answering after ${((performance.now() - starting) / 1000).toFixed(1)} s`);
  try {
    const targets = { full: { server: full, tenant }, raw: { server: raw, tenant }, bare: { server: raw, tenant, query: '?sql=bare' } };
    // What autovacuum would do between runs (this server may have it off): the rows each extend
    // churns, the membership and its event's broadcast mark (and planning queue rows).
    const vacuum = () => adminQuery(url, 'VACUUM memberships, event_broadcasts, event_plan_queue');
    const runs = await rounds(ctx, s, targets, vacuum, databaseCpuSeconds);
    return { backend: 'PostgreSQL', runs };
  } finally {
    await Promise.all([full.stop(), raw.stop()]);
    await drop();
  }
}

/** PGlite: a data directory is open in one process at a time, so each server gets its own copy. */
export async function perRequestPglite(ctx: BenchContext, s: PerRequestSettings): Promise<PerRequestResult> {
  const [fullDir, tenant] = await pgliteDir(ctx, 'pglite-full', (db) => seedTenant(db, 'bench per-request', s.members));
  const rawDir = await copyPgliteDir(ctx, fullDir, 'pglite-raw');
  ctx.log(`PGlite: ${s.members} memberships, one data directory per server (copies)`);
  const starting = performance.now();
  const [full, raw] = await Promise.all([startFull(ctx, 'full-pglite', { DATA_DIR: fullDir }), startRaw(ctx, 'raw-pglite', { DATA_DIR: rawDir })]);
  ctx.log(`  servers answering after ${((performance.now() - starting) / 1000).toFixed(1)} s`);
  try {
    const targets = { full: { server: full, tenant }, raw: { server: raw, tenant }, bare: { server: raw, tenant, query: '?sql=bare' } };
    return { backend: 'PGlite', runs: await rounds(ctx, s, targets, async () => undefined, () => Number.NaN) };
  } finally {
    await Promise.all([full.stop(), raw.stop()]);
  }
}

/** Ratio of `a` to `b` in each round, then the median: the two sides of a round share its noise. */
export const pairedRatio = (a: readonly number[], b: readonly number[]) => median(a.map((v, i) => v / b[i]!));

export const PER_REQUEST_TARGETS = { raw: 0.8, bare: 0.6 } as const;

/**
 * The per-request targets: full ÷ raw (same statement) ≥ 0.8× on both storages, and full ÷ bare
 * single-row UPDATE ≥ 0.6× on PostgreSQL (on PGlite the bare side is shown, with no target).
 */
export function perRequestRatios(p: PerRequestResult): Ratio[] {
  const rps = (side: Side) => p.runs[side].map((r) => r.rps);
  const ratios: Ratio[] = [];
  const add = (vs: 'raw' | 'bare', label: string) => {
    const value = pairedRatio(rps('full'), rps(vs));
    const target = PER_REQUEST_TARGETS[vs];
    ratios.push({ name: `extend-one full ÷ ${label}, ${p.backend}`, value, target: `≥ ${target}×`, met: value >= target });
  };
  if (p.runs.raw.length) add('raw', 'raw same statement');
  if (p.backend === 'PostgreSQL' && p.runs.bare.length) add('bare', 'bare single-row UPDATE');
  return ratios;
}
