/**
 * Two sets of node options for the server, side by side: what a V8 or Node option
 * (`--max-semi-space-size=…`, say) buys in resident memory and costs in throughput, measured
 * in one run so the machine's noise hits both alike (docs/memory.md, "What each change bought").
 *
 * - At rest: BENCH_OPTIONS_STARTS (4) later starts of each side on a seeded copy of one database,
 *   alternating which starts first, each read BENCH_OPTIONS_REST_S (30) seconds after it answers.
 * - Under load: both servers up, extend-one load (10 connections) for BENCH_OPTIONS_ROUNDS (8)
 *   rounds of BENCH_OPTIONS_LOAD_S (10) seconds, alternating; req/s of B ÷ A per round, its
 *   median, and each side's peak resident memory (VmHWM) at the end.
 *
 *   npm run build && BENCH_OPTIONS_B='--v8-pool-size=1 --max-semi-space-size=4' npx tsx bench/node-options.ts
 *
 * Leading `NAME=value` words of a side are set in its server's environment instead (a malloc
 * setting of glibc's, say). BENCH_OPTIONS_A defaults to `npm start`'s options; BENCH_OPTIONS_STORAGE is pglite (default) or
 * pg; BENCH_OPTIONS_MEMBERS (10,000) members. Writes its section of bench/RESULTS.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { adminQuery } from './lib/admin.js';
import { copyPgliteDir, runStandalone, seededStorage, startFullWith, startWords, type BenchContext } from './lib/context.js';
import { extendOneLoad } from './lib/load.js';
import { rssOf } from './lib/memory.js';
import type { Server } from './lib/processes.js';
import { seedTenant } from './lib/seed.js';
import { alternate, median } from './lib/stats.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const words = (s: string) => s.split(' ').filter(Boolean);
const SETTINGS = {
  a: words(env('BENCH_OPTIONS_A', startWords().join(' '))),
  b: words(env('BENCH_OPTIONS_B', '')),
  storage: env('BENCH_OPTIONS_STORAGE', 'pglite') === 'pg' ? ('PostgreSQL' as const) : ('PGlite' as const),
  members: Number(env('BENCH_OPTIONS_MEMBERS', '10000')),
  starts: Number(env('BENCH_OPTIONS_STARTS', '4')),
  restS: Number(env('BENCH_OPTIONS_REST_S', '30')),
  rounds: Number(env('BENCH_OPTIONS_ROUNDS', '8')),
  loadS: Number(env('BENCH_OPTIONS_LOAD_S', '10')),
  connections: 10,
};
const SIDES = ['A', 'B'] as const;
type Side = (typeof SIDES)[number];
const wordsOf = (side: Side) => (side === 'A' ? SETTINGS.a : SETTINGS.b);
const show = (side: Side) => `\`${wordsOf(side).join(' ') || '(none)'}\``;
const f0 = (n: number) => n.toFixed(0);

async function compare(ctx: BenchContext): Promise<string> {
  if (SETTINGS.b.length === 0 && !process.env.BENCH_OPTIONS_B) throw new Error('BENCH_OPTIONS_B names the options to compare with (an empty string for none)');
  const { env: storageEnv, seeded: tenant } = await seededStorage(ctx, SETTINGS.storage, 'options', (db) => seedTenant(db, 'node options bench', SETTINGS.members));
  if (storageEnv.DATABASE_URL) await adminQuery(storageEnv.DATABASE_URL, 'VACUUM ANALYZE');
  // Each PGlite server gets a copy of the seeded directory (one process opens a directory at a time).
  let copies = 0;
  const storageFor = async (): Promise<Record<string, string>> =>
    storageEnv.DATA_DIR ? { ...storageEnv, DATA_DIR: await copyPgliteDir(ctx, storageEnv.DATA_DIR, `options-copy-${++copies}`) } : storageEnv;
  const start = async (side: Side, label: string) => startFullWith(ctx, `options-${side}-${label}`, wordsOf(side), await storageFor());

  const rest: Record<Side, number[]> = { A: [], B: [] };
  for (let i = 0; i < SETTINGS.starts; i++) {
    for (const side of alternate(SIDES, i)) {
      const server = await start(side, `rest-${i}`);
      await sleep(SETTINGS.restS * 1000);
      rest[side].push(rssOf(server.pid).rss);
      ctx.log(`  start ${i + 1} ${side}: ${f0(rest[side].at(-1)!)} MiB at rest`);
      await server.stop();
    }
  }

  const servers: Record<Side, Server> = { A: await start('A', 'load'), B: await start('B', 'load') };
  try {
    for (const side of SIDES) await extendOneLoad(servers[side].url, tenant, { connections: SETTINGS.connections, durationS: SETTINGS.loadS });
    const rps: Record<Side, number[]> = { A: [], B: [] };
    for (let round = 0; round < SETTINGS.rounds; round++) {
      for (const side of alternate(SIDES, round)) {
        const load = await extendOneLoad(servers[side].url, tenant, { connections: SETTINGS.connections, durationS: SETTINGS.loadS });
        if (load.failures > 0) throw new Error(`side ${side}: ${load.failures} failed requests:\n${servers[side].logTail()}`);
        rps[side].push(load.rps);
        ctx.log(`  round ${round + 1} ${side}: ${f0(load.rps)} req/s, p99 ${load.p99} ms`);
      }
    }
    const ratios = rps.B.map((b, i) => b / rps.A[i]!);
    const peak = { A: rssOf(servers.A.pid).peak, B: rssOf(servers.B.pid).peak };
    const range = (xs: number[]) => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))} (median ${f0(median(xs))})`;
    return [
      '## Node options side by side',
      '',
      `${SETTINGS.storage}, ${SETTINGS.members.toLocaleString('en-US')} members. A: ${show('A')}; B: ${show('B')}.`,
      '',
      '| | A | B |',
      '|---|---:|---:|',
      `| at rest, ${SETTINGS.starts} later starts each, ${SETTINGS.restS} s after answering (MiB) | ${range(rest.A)} | ${range(rest.B)} |`,
      `| extend-one req/s, ${SETTINGS.rounds} alternating rounds of ${SETTINGS.loadS} s | ${range(rps.A)} | ${range(rps.B)} |`,
      `| peak resident memory after the load (MiB) | ${f0(peak.A)} | ${f0(peak.B)} |`,
      '',
      `B ÷ A req/s by round: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median **${median(ratios).toFixed(2)}**.`,
    ].join('\n');
  } finally {
    await Promise.all(SIDES.map((side) => servers[side].stop()));
  }
}

await runStandalone({
  name: 'node-options',
  command: `npm run build && BENCH_OPTIONS_B='${SETTINGS.b.join(' ')}' BENCH_OPTIONS_STORAGE=${SETTINGS.storage === 'PGlite' ? 'pglite' : 'pg'} npx tsx bench/node-options.ts`,
  storageVar: 'BENCH_OPTIONS_STORAGE_UNUSED',
  run: (ctx) => compare(ctx),
});
