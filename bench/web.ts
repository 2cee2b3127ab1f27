/**
 * The public plan page under load (docs/web.md): `GET /p/{project_id}` sent at 200 requests/s
 * (an open loop: one request every 5 ms whatever the others are doing) for 30 s against the real
 * server (`node dist/main.js`), on PostgreSQL and on embedded PGlite. The project sells 6 plans,
 * each granting a Discord role of a guild, with Login with Discord set up and a brand colour, so
 * the page has every part it can have. Targets: p99 < 50 ms, and the page's weight (the HTML, the
 * shared stylesheet and the project's brand stylesheet) < 50 KB.
 *
 *   npm run build && npx tsx bench/web.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * BENCH_WEB_RATE, BENCH_WEB_SECONDS and BENCH_WEB_STORAGES (`pg,pglite`) change the run. Writes the
 * `web` section of bench/RESULTS.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { openDatabase, type Database } from '../src/database/db.js';
import { createLogger } from '../src/logger.js';
import { benchDatabase, pgliteDir, startFull, type BenchContext } from './lib/context.js';
import { isEntryPoint } from './lib/phases.js';
import { stopAll } from './lib/processes.js';
import { measuredCommit, writeSection } from './lib/report.js';
import { seedTenant } from './lib/seed.js';

const TARGET_P99_MS = 50;
const TARGET_WEIGHT_BYTES = 50 * 1024;
const PLANS = 6;

type Storage = 'PostgreSQL' | 'PGlite';

interface Measured {
  storage: Storage;
  sent: number;
  failed: number;
  latencies: number[];
  weightBytes: number;
  htmlBytes: number;
  /** The host's 1-minute load average before and after the run: the bench shares two cores with whatever else runs. */
  load: [number, number];
}

/** A project with PLANS plans, each granting a role of one guild, Discord connected with a client secret, an accent colour. */
async function seedShop(database: Database): Promise<string> {
  const tenant = await seedTenant(database, 'The Night Owls', 0);
  const { services } = await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database });
  const unwrap = <T>(r: { ok: true; value: T } | { ok: false; error: Error }): T => {
    if (!r.ok) throw r.error;
    return r.value;
  };
  const guild = unwrap(await services.targets.create(tenant.projectId, { target_name: 'Night Owls HQ', platform: 'discord', kind: 'guild', external_id: '100000000000000001' }));
  for (let i = 1; i <= PLANS; i++) {
    const role = unwrap(
      await services.targets.create(tenant.projectId, { target_name: `Tier ${i} role`, platform: 'discord', kind: 'role', external_id: String(200000000000000000n + BigInt(i)), parent_target_id: guild.target_id }),
    );
    const plan = unwrap(
      await services.plans.create(tenant.projectId, {
        plan_name: `Tier ${i}`,
        plan_price: `${i * 5}.00`,
        plan_currency: 'USD',
        plan_duration: i % 2 ? '1 month' : '30 days',
        plan_data: { plan_recurring: i % 2 === 1, plan_one_time: i % 2 === 0 },
      }),
    );
    unwrap(await services.plans.addTarget(tenant.projectId, plan.plan_id, role.target_id));
  }
  // The page only asks whether a client secret is held: a placeholder stands in for a sealed one.
  await database.db.execute(sql`
    INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, application_id, verify_key, client_secret_sealed)
    VALUES (${tenant.projectId}, 'discord', 'v1.bench', '300000000000000001', 'owl-bot', '300000000000000001', ${'0'.repeat(64)}, 'v1.bench')`);
  unwrap(await services.settings.patch(tenant.projectId, { page_accent_color: '#0b6e4f', page_logo_url: 'https://cdn.example.com/owl.png' }));
  return tenant.projectId;
}

/** One request every 1000/rate ms for `seconds`, each timed from send to last byte. */
async function openLoop(url: string, rate: number, seconds: number): Promise<{ latencies: number[]; failed: number; sent: number }> {
  const latencies: number[] = [];
  let failed = 0;
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  const total = rate * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    sent++;
    const t0 = performance.now();
    inFlight.push(
      fetch(url)
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.status !== 200) failed++;
          // Timed from when the request was due: a late send counts against the page (no coordinated omission).
          latencies.push(performance.now() - Math.min(t0, due));
        })
        .catch(() => void failed++),
    );
  }
  await Promise.all(inFlight);
  return { latencies, failed, sent };
}

async function weightOf(base: string, projectId: string): Promise<{ total: number; html: number }> {
  const html = await (await fetch(`${base}/p/${projectId}`)).text();
  const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
  let total = Buffer.byteLength(html);
  for (const href of sheets) total += (await (await fetch(`${base}${href}`)).arrayBuffer()).byteLength;
  return { total, html: Buffer.byteLength(html) };
}

async function measure(storage: Storage, ctx: BenchContext, rate: number, seconds: number): Promise<Measured> {
  let env: Record<string, string>;
  let projectId: string;
  if (storage === 'PostgreSQL') {
    const db = await benchDatabase(ctx);
    const database = await openDatabase({ kind: 'postgres', url: db.url, poolSize: 5 });
    try {
      await database.migrate();
      projectId = await seedShop(database);
    } finally {
      await database.close();
    }
    env = { DATABASE_URL: db.url };
  } else {
    const [dir, id] = await pgliteDir(ctx, 'web-pglite', seedShop);
    projectId = id;
    env = { DATA_DIR: dir };
  }
  ctx.log(`${storage}: starting the server`);
  const server = await startFull(ctx, `web-${storage}`, { ...env, TENURE_WORKER: 'false' });
  try {
    const url = `${server.url}/p/${projectId}`;
    // Warm-up: the first requests compile templates and prepare statements.
    await openLoop(url, 50, 3);
    const weight = await weightOf(server.url, projectId);
    ctx.log(`${storage}: ${rate}/s for ${seconds} s`);
    const before = loadavg()[0]!;
    const run = await openLoop(url, rate, seconds);
    return { storage, ...run, weightBytes: weight.total, htmlBytes: weight.html, load: [before, loadavg()[0]!] };
  } finally {
    await server.stop();
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

function markdownOf(results: Measured[], rate: number, seconds: number): string {
  const rows = results.map((r) => {
    const p99 = quantile(r.latencies, 0.99);
    return `| ${r.storage} | ${r.sent} | ${r.failed} | ${quantile(r.latencies, 0.5).toFixed(1)} | ${p99.toFixed(1)} | ${Math.max(...r.latencies).toFixed(1)} | ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'} | ${(r.weightBytes / 1024).toFixed(1)} KB (HTML ${(r.htmlBytes / 1024).toFixed(1)} KB) | ${r.weightBytes < TARGET_WEIGHT_BYTES ? 'met' : 'MISSED'} | ${r.load.map((l) => l.toFixed(1)).join(' → ')} |`;
  });
  return [
    '## The public plan page',
    '',
    `\`GET /p/{project_id}\` at ${rate} requests/s (open loop) for ${seconds} s against \`node dist/main.js\` (worker off), a project of ${PLANS} plans each granting a Discord role, Login with Discord set up, an accent colour and a logo. Times are from when each request was due to its last byte, on loopback, the bench on the same two cores. Weight: the HTML plus the stylesheets it links (pages.css and the project's brand.css), uncompressed.`,
    '',
    '| storage | requests | not 200 | p50 ms | p99 ms (target < 50) | max ms | p99 | page weight (target < 50 KB) | weight | host load (1 min) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

if (isEntryPoint(import.meta.url)) {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const rate = Number(process.env.BENCH_WEB_RATE ?? 200);
  const seconds = Number(process.env.BENCH_WEB_SECONDS ?? 30);
  const storages = (process.env.BENCH_WEB_STORAGES ?? 'pg,pglite').split(',').map((s) => (s.trim() === 'pglite' ? 'PGlite' : 'PostgreSQL')) as Storage[];
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const started = new Date();
  const commit = measuredCommit();
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-web-'));
  const cleanup: (() => Promise<unknown>)[] = [];
  const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
  const ctx: BenchContext = { tmp, adminUrl, logLevel: 'warn', log, onCleanup: (step) => cleanup.push(step) };
  try {
    const results: Measured[] = [];
    for (const storage of storages) results.push(await measure(storage, ctx, rate, seconds));
    const markdown = markdownOf(results, rate, seconds).replace(
      /\n/,
      `\n\nCommand: \`npm run build && npx tsx bench/web.ts\` · commit: ${commit} · date: ${started.toISOString()} · whole run: ${Math.round((Date.now() - started.getTime()) / 1000)} s\n`,
    );
    await writeSection('web', 'npx tsx bench/web.ts', markdown);
    console.log(markdown);
    if (results.some((r) => quantile(r.latencies, 0.99) >= TARGET_P99_MS || r.weightBytes >= TARGET_WEIGHT_BYTES || r.failed > 0)) process.exitCode = 1;
  } finally {
    for (const step of cleanup.splice(0)) await step();
    await rm(tmp, { recursive: true, force: true });
    await stopAll();
  }
}
