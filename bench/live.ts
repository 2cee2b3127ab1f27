/**
 * Live-update benchmark: latency from a REST change to its receipt by 1,000
 * connected socket.io-client clients, p50/p99, on embedded PGlite and on PostgreSQL + Redis.
 *
 *   npm run build && npx tsx bench/live.ts                                 # PGlite, then PostgreSQL + Redis
 *   BENCH_LIVE_BACKENDS=pglite BENCH_LIVE_ROUNDS=1 npx tsx bench/live.ts   # one backend, one run
 *
 * The server is `node dist/main.js` in its own process (as `npm start` runs it). The clients run
 * in two worker threads of this process, each subscribed to `memberships` of one project. Extends
 * are sent one at a time at a steady rate to the same server; latency = a client's receipt of the
 * `membership.extended` event − the moment the PATCH was sent (so it includes the request, the
 * commit, the wake-up, the claim and the fan-out to every socket). Every client's receipt counts:
 * 1,000 samples per extend. Results go into the "Live updates" section of bench/RESULTS.md
 * (between markers; the rest of the file is left as it is).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { openDatabase, type Database } from '../src/database/db.js';
import { adminQuery } from './lib/admin.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { seedTenant, type Tenant } from './lib/seed.js';
import { alternate, median } from './lib/stats.js';
import { askThread } from './lib/threads.js';
import { measuredCommit } from './lib/report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const CLIENTS = Number(process.env.BENCH_LIVE_CLIENTS ?? 1_000);
const THREADS = 2;
const EXTENDS = Number(process.env.BENCH_LIVE_EXTENDS ?? 300);
const WARMUP = 20;
const RATE = Number(process.env.BENCH_LIVE_RATE ?? 20); // extends per second
const MEMBERS = 50;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BACKENDS = (process.env.BENCH_LIVE_BACKENDS ?? 'pglite,postgres').split(',');
/** Runs per backend, in alternating order: the machine is shared, so one run can be unlucky. */
const ROUNDS = Number(process.env.BENCH_LIVE_ROUNDS ?? 3);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

// ── The clients, in worker threads ────────────────────────────────────────────────────────────

const CLIENTS_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { io } = require('socket.io-client');
const { url, socketPath, namespace, auth, count } = workerData;
const sockets = [];
const seen = [];
let subscribed = 0;
async function open() {
  // In batches, as clients of a real page load would arrive, not all in one tick.
  for (let i = 0; i < count; i += 50) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 50); j++) {
      const s = io(url + namespace, { path: socketPath, transports: ['websocket'], auth, reconnection: false, forceNew: true });
      s.on('membership.extended', (e) => seen.push([e.data.membership.membership_end_date, performance.timeOrigin + performance.now()]));
      s.on('connect_error', (err) => parentPort.postMessage({ error: err.message }));
      batch.push(new Promise((resolve) => s.on('message', (m) => {
        if (m.type === 'ready') s.emit('message', { action: 'subscribe', channel: 'memberships' });
        if (m.type === 'subscribed') { subscribed++; resolve(); }
      })));
      sockets.push(s);
    }
    await Promise.all(batch);
  }
  parentPort.postMessage({ subscribed });
}
open();
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ count: seen.length });
  if (m === 'take') parentPort.postMessage({ seen: seen.splice(0) });
  if (m === 'close') { for (const s of sockets) s.disconnect(); parentPort.postMessage({ closed: true }); }
});
`;

interface ClientThread {
  ask<T>(message: string, key: string): Promise<T>;
  close(): Promise<void>;
}

async function startClients(server: Server, tenant: Tenant, count: number): Promise<ClientThread> {
  const thread = new Worker(CLIENTS_THREAD, {
    eval: true,
    workerData: {
      url: server.url,
      socketPath: '/v2/live-updates/socket.io/',
      namespace: '/v2/live-updates',
      auth: { token: tenant.key, project_id: tenant.projectId },
      count,
    },
  });
  const ask = <T>(message: string, key: string) => askThread<T>(thread, message, key);
  const subscribed = await Promise.race([
    ask<number>('', 'subscribed'),
    ask<string>('', 'error').then((e) => Promise.reject(new Error(`a client was refused: ${e}`))),
  ]);
  if (subscribed !== count) throw new Error(`only ${subscribed} of ${count} clients subscribed`);
  return {
    ask,
    async close() {
      await ask('close', 'closed');
      await thread.terminate();
    },
  };
}

// ── One measured run ──────────────────────────────────────────────────────────────────────────

interface Row {
  backend: string;
  clients: number;
  extends: number;
  receipts: number;
  expected: number;
  p50: number;
  p99: number;
  max: number;
  restP50: number;
  connectS: number;
  /** The server process's CPU time (user + system) per measured extend. */
  serverCpuMs: number;
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function measure(backend: string, server: Server, tenant: Tenant): Promise<Row> {
  const began = now();
  const threads = await Promise.all(Array.from({ length: THREADS }, (_, i) => startClients(server, tenant, Math.floor(CLIENTS / THREADS) + (i < CLIENTS % THREADS ? 1 : 0))));
  const connectS = (now() - began) / 1000;
  log(`${backend}: ${CLIENTS} clients connected and subscribed in ${connectS.toFixed(1)} s`);
  const sent = new Map<string, number>();
  const rest: number[] = [];
  const base = Date.now() + 30 * 86_400_000;
  let cpuAtStart = Number.NaN;
  try {
    for (let i = 0; i < WARMUP + EXTENDS; i++) {
      if (i === WARMUP) cpuAtStart = server.cpuSeconds();
      const at = now();
      const endDate = new Date(base + i * 1000).toISOString();
      const res = await fetch(`${server.url}/v2/projects/${tenant.projectId}/memberships/${(i % MEMBERS) + 1}/extend`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ extend: endDate }),
      });
      if (res.status !== 200) throw new Error(`extend answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      if (i >= WARMUP) {
        sent.set(endDate, at);
        rest.push(now() - at);
      }
      // A steady rate: the next extend leaves on schedule, whatever this one took.
      const next = began + connectS * 1000 + ((i + 1) * 1000) / RATE;
      await sleep(Math.max(0, next - now()));
    }
    const expected = EXTENDS * CLIENTS;
    const total = async () => (await Promise.all(threads.map((t) => t.ask<number>('count', 'count')))).reduce((a, b) => a + b, 0);
    const deadline = Date.now() + 30_000;
    while ((await total()) < expected + WARMUP * CLIENTS && Date.now() < deadline) await sleep(100);
    const serverCpuMs = ((server.cpuSeconds() - cpuAtStart) * 1000) / EXTENDS;
    const seen = (await Promise.all(threads.map((t) => t.ask<[string, number][]>('take', 'seen')))).flat();
    const latencies = seen.filter(([end]) => sent.has(end)).map(([end, t]) => t - sent.get(end)!).sort((a, b) => a - b);
    const restSorted = [...rest].sort((a, b) => a - b);
    return {
      backend,
      clients: CLIENTS,
      extends: EXTENDS,
      receipts: latencies.length,
      expected,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1]!,
      restP50: percentile(restSorted, 50),
      connectS,
      serverCpuMs,
    };
  } finally {
    await Promise.all(threads.map((t) => t.close()));
  }
}

const serverEnv = (storage: Record<string, string>) => ({
  ...storage,
  LOG_LEVEL: 'warn',
  TENURE_DEMO_PROJECT: 'false',
  TENURE_WORKER: 'false',
  TENURE_RATE_LIMIT_KEY: '1000000000',
  TENURE_RATE_LIMIT_IP: '1000000000',
  TENURE_RATE_LIMIT_BURST: '1000000000',
  TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT: String(CLIENTS + 100),
  // Every client connects from 127.0.0.1, in batches of 50 per thread: all may be mid-handshake at once.
  TENURE_LIVE_MAX_PENDING_PER_IP: String(CLIENTS + 100),
});

async function seeded(database: Database): Promise<Tenant> {
  try {
    await database.migrate();
    return await seedTenant(database, 'bench live', MEMBERS);
  } finally {
    await database.close();
  }
}

async function runPglite(tmp: string): Promise<Row> {
  const dir = path.join(tmp, 'pglite');
  const tenant = await seeded(await openDatabase({ kind: 'pglite', dataDir: dir }));
  const server = await startServer('live-pglite', [MAIN], serverEnv({ DATA_DIR: dir }), tmp);
  try {
    return await measure('PGlite (embedded, one process)', server, tenant);
  } finally {
    await server.stop();
  }
}

async function runPostgres(tmp: string): Promise<Row> {
  const name = `tenure_bench_live_${randomBytes(4).toString('hex')}`;
  await adminQuery(ADMIN_URL, `CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    const tenant = await seeded(await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 }));
    const env = serverEnv({ DATABASE_URL: url.toString(), REDIS_URL, REDIS_KEY_PREFIX: `bench-live-${name}:`, DATA_DIR: path.join(tmp, 'pg') });
    const server = await startServer('live-pg', [MAIN], env, tmp);
    try {
      return await measure('PostgreSQL + Redis (Redis adapter)', server, tenant);
    } finally {
      await server.stop();
    }
  } finally {
    await adminQuery(ADMIN_URL, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

/** Per backend: the median p99 of its runs, and whether it meets the target. */
function summary(rows: readonly Row[]): string {
  const backends = [...new Set(rows.map((r) => r.backend))];
  return backends
    .map((b) => {
      const p99 = median(rows.filter((r) => r.backend === b).map((r) => r.p99));
      return `${b} ${p99.toFixed(1)} ms ${p99 < 100 ? '**met**' : '**missed**'}`;
    })
    .join('; ');
}

async function main(): Promise<void> {
  const began = Date.now();
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-live-'));
  const rows: Row[] = [];
  const runs = { pglite: runPglite, postgres: runPostgres } as Record<string, (tmp: string) => Promise<Row>>;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const backend of alternate(BACKENDS, round)) rows.push(await runs[backend]!(tmp));
    }
  } finally {
    await stopAll();
    await rm(tmp, { recursive: true, force: true });
  }
  for (const r of rows) log(JSON.stringify(r));
  const section = [
    '<!-- live:begin (written by `npx tsx bench/live.ts`) -->',
    '## Live updates',
    '',
    `Command: \`npx tsx bench/live.ts\` (after \`npm run build\`) · commit: ${measuredCommit()} · date: ${new Date().toISOString()} · whole run: ${Math.round((Date.now() - began) / 1000)} s`,
    '',
    `- nproc: ${os.cpus().length}; node ${process.version}; the server is \`node dist/main.js\`; ${CLIENTS} socket.io-client clients (WebSocket) in ${THREADS} worker threads of the bench process, all subscribed to \`memberships\` of one project`,
    `- ${EXTENDS} extends (after ${WARMUP} of warm-up), one at a time at ${RATE}/s, over REST to the same server`,
    '- latency: a client\'s receipt of `membership.extended` − the moment the PATCH was sent (request, commit, wake-up, claim, fan-out); every client\'s receipt is a sample',
    '',
    '| storage | clients | receipts / expected | latency p50 ms | p99 ms | max ms | REST PATCH p50 ms | server CPU ms per extend | connect + subscribe all s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[...rows]
      .sort((a, b) => a.backend.localeCompare(b.backend))
      .map(
        (r) =>
          `| ${r.backend} | ${r.clients} | ${r.receipts} / ${r.expected} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.restP50.toFixed(1)} | ${r.serverCpuMs.toFixed(1)} | ${r.connectS.toFixed(1)} |`,
      ),
    '',
    `Each backend ran ${ROUNDS} times (a fresh server and fresh clients each time), alternating with the other.`,
    `Target (docs/live-updates.md): p99 < 100 ms at 1,000 connected clients; median p99 of the runs: ${summary(rows)}.`,
    'The clients share the machine (2 CPUs) with the server: their own event handling is in the figures.',
    'The machine is shared and noisy: numbers vary from run to run.',
    '<!-- live:end -->',
  ].join('\n');
  const file = `${ROOT}bench/RESULTS.md`;
  const current = await readFile(file, 'utf8').catch(() => '');
  const marked = /<!-- live:begin[\s\S]*?<!-- live:end -->/;
  await writeFile(file, marked.test(current) ? current.replace(marked, section) : `${current.trimEnd()}\n\n${section}\n`);
  console.log(section);
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
await main();
