import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { openDatabase } from '../src/database/db.js';
import { limiterMicroBench } from './lib/limiter-micro.js';
import { extendOneLoad, type LoadResult } from './lib/load.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { seedTenant } from './lib/seed.js';
import { alternate, median } from './lib/stats.js';
import { measuredCommit } from './lib/report.js';

/**
 * The rate limiter's cost (docs/rate-limits.md): full-stack `PATCH …/memberships/{user_id}/extend`
 * with limits off, on the in-memory limiter and on Redis, side by side in one run on PostgreSQL,
 * plus the in-memory limiter's own cost per request. Run by `npm run bench` after bench/run.ts;
 * writes its section of bench/RESULTS.md between the markers below.
 */

const int = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const cfg = {
  adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  durationS: int('BENCH_DURATION', 10),
  warmupS: int('BENCH_WARMUP', 2),
  rounds: int('BENCH_ROUNDS', 3),
  connections: int('BENCH_CONNECTIONS', 10),
  members: int('BENCH_MEMBERS', 10_000),
};

const BEGIN = '<!-- limits:begin -->';
const END = '<!-- limits:end -->';
const root = fileURLToPath(new URL('..', import.meta.url));
const results = path.join(root, 'bench', 'RESULTS.md');
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

type Mode = 'off' | 'memory' | 'redis';

async function admin(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: cfg.adminUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dbName = `tenure_limits_${randomBytes(4).toString('hex')}`;
  const prefix = `tenure-bench-${randomBytes(4).toString('hex')}:`;
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-limits-'));
  const url = new URL(cfg.adminUrl);
  url.pathname = `/${dbName}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  try {
    const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    await database.migrate();
    const tenant = await seedTenant(database, 'limits', cfg.members);
    await database.close();

    const raised = { TENURE_RATE_LIMIT_KEY: '1000000000', TENURE_RATE_LIMIT_IP: '1000000000', TENURE_RATE_LIMIT_BURST: '1000000000' };
    const base = { DATABASE_URL: url.toString(), LOG_LEVEL: 'info', TENURE_DEMO_PROJECT: 'false', TENURE_WORKER: 'false' };
    const envs: Record<Mode, Record<string, string>> = {
      off: { ...base, TENURE_RATE_LIMITS: 'false' },
      memory: { ...base, ...raised },
      redis: { ...base, ...raised, REDIS_URL: cfg.redisUrl, REDIS_KEY_PREFIX: prefix },
    };
    const servers = {} as Record<Mode, Server>;
    for (const mode of ['off', 'memory', 'redis'] as const) {
      servers[mode] = await startServer(`limits-${mode}`, ['dist/main.js'], envs[mode], tmp);
    }

    const runs: Record<Mode, LoadResult[]> = { off: [], memory: [], redis: [] };
    for (let round = 0; round < cfg.rounds; round++) {
      for (const mode of alternate(['off', 'memory', 'redis'] as const, round)) {
        const options = { connections: cfg.connections };
        await extendOneLoad(servers[mode].url, tenant, { ...options, durationS: cfg.warmupS });
        const load = await extendOneLoad(servers[mode].url, tenant, { ...options, durationS: cfg.durationS });
        if (load.failures > 0) throw new Error(`limits ${mode}: ${load.failures} failed requests`);
        runs[mode].push(load);
        log(`  limits round ${round + 1} ${mode.padEnd(6)} ${load.rps.toFixed(0)} req/s, p50 ${load.p50} ms, p99 ${load.p99} ms`);
      }
    }
    await stopAll();
    const micro = await limiterMicroBench();
    log(`  in-memory limiter: ${(micro.nsPerRequest / 1000).toFixed(2)} µs per request`);
    await writeSection(runs, micro.nsPerRequest);
  } finally {
    await stopAll();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
    const redis = new Redis(cfg.redisUrl, { lazyConnect: true });
    await redis
      .connect()
      .then(async () => {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
      })
      .catch(() => undefined);
    redis.disconnect();
  }
}

async function writeSection(runs: Record<Mode, LoadResult[]>, nsPerRequest: number): Promise<void> {
  const ratio = (mode: Mode) => median(runs[mode].map((r, i) => r.rps / runs.off[i]!.rps));
  const row = (mode: Mode, label: string) => {
    const rs = runs[mode];
    return `| ${label} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${mode === 'off' ? '—' : `${ratio(mode).toFixed(2)}×`} |`;
  };
  const section = [
    BEGIN,
    '## Rate limiter cost',
    '',
    `Command: \`npm run bench\` (this section: \`tsx bench/limits.ts\`) · commit: ${measuredCommit()} · ${new Date().toISOString()}`,
    '',
    `Full-stack \`PATCH …/memberships/{user_id}/extend\` on PostgreSQL, ${cfg.connections} connections, ` +
      `${cfg.rounds} alternating rounds of ${cfg.durationS} s after a ${cfg.warmupS} s warm-up; limits raised so nothing is ` +
      'refused but every policy (ip, key, burst, suspension read) is counted. The ratio is the median of per-round ratios.',
    '',
    '| limits | req/s (median) | p50 ms | p99 ms | ÷ limits off |',
    '|---|---:|---:|---:|---:|',
    row('off', 'off (`TENURE_RATE_LIMITS=false`)'),
    row('memory', 'in memory'),
    row('redis', 'Redis (one pipelined round trip)'),
    '',
    `In-memory limiter alone: **${(nsPerRequest / 1000).toFixed(2)} µs per request** (three policies and the suspension read, ` +
      `over 1,024 keys and addresses; target < 5 µs).`,
    END,
  ].join('\n');
  const current = await readFile(results, 'utf8').catch(() => '');
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + section + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n${section}\n`;
  await writeFile(results, next);
}

process.on('SIGINT', () => {
  void stopAll().finally(() => process.exit(130));
});

main().catch(async (err: unknown) => {
  await stopAll();
  console.error(err);
  process.exit(1);
});
