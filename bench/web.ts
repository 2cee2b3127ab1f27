/**
 * The member pages under load (docs/web.md, docs/portal.md): the public plan page,
 * `GET /p/{project_id}`, then the member portal, `GET /portal/{token}` with the session cookie its
 * first open set (made once, as a member's browser holds it), each sent at 200 requests/s (an open
 * loop: one request every 5 ms whatever the others are doing) for 30 s against the real server
 * (`node dist/main.js`), on PostgreSQL and on embedded PGlite. The project sells 6 plans, each
 * granting a Discord role of a guild, with Login with Discord set up and a brand colour, so the
 * plan page has every part it can have; it has MEMBERS members with a payment each, and the portal's
 * member a membership, PAYMENTS payments and invoicing details. Targets: p99 < 50 ms, and each
 * page's weight (the HTML and the stylesheets it links) < 50 KB.
 *
 *   npm run build && npx tsx bench/web.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * BENCH_WEB_RATE, BENCH_WEB_SECONDS and BENCH_WEB_STORAGES (`pg,pglite`) change the run; BENCH_DIST
 * (a copy of an earlier build's dist/) measures that build instead, to compare two back to back.
 * Writes the `web` section of bench/RESULTS.md.
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
const MEMBERS = 10_000;
const PAYMENTS = 8;
const MEMBER = '400000000000000001';

type Storage = 'PostgreSQL' | 'PGlite';

interface Measured {
  storage: Storage;
  page: 'plan page' | 'portal';
  sent: number;
  failed: number;
  latencies: number[];
  weightBytes: number;
  htmlBytes: number;
  /** The host's 1-minute load average before and after the run: the bench shares two cores with whatever else runs. */
  load: [number, number];
}

interface Seeded {
  projectId: string;
  /** A portal link of MEMBER's, not opened yet. */
  portalToken: string;
}

/**
 * A project with PLANS plans, each granting a role of one guild, Discord connected with a client
 * secret, an accent colour; MEMBERS members with a payment each, and MEMBER's portal link.
 */
export async function seedShop(database: Database): Promise<Seeded> {
  const tenant = await seedTenant(database, 'The Night Owls', MEMBERS);
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
    if (i === 1) unwrap(await services.memberships.create(tenant.projectId, { user_id: MEMBER, plan_id: plan.plan_id, end_date: new Date(Date.now() + 20 * 86_400_000).toISOString() }));
  }
  // Payments as Stripe's events record them (the members' one each, and MEMBER's PAYMENTS), with a customer, so the portal offers Manage billing.
  await database.db.execute(sql`
    INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, customer_id, created_at)
    SELECT ${tenant.projectId}, 'stripe', 'pi_bench_' || g, CASE WHEN g <= ${PAYMENTS} THEN ${MEMBER} ELSE g::text END, 500, 'usd', 'succeeded', 'cus_bench_' || g,
           now() - g * interval '1 hour'
    FROM generate_series(1, ${MEMBERS + PAYMENTS}::int) AS g`);
  unwrap(await services.invoicing.update(tenant.projectId, MEMBER, { name: 'Ada Lovelace', company: 'Analytical Engines GmbH', vat_id: 'DE123456789', address: { line1: 'Hauptstraße 1', postal_code: '10115', city: 'Berlin', country: 'DE' } }));
  const link = unwrap(await services.portal.create(tenant.projectId, MEMBER));
  // The page only asks whether a client secret is held: a placeholder stands in for a sealed one.
  await database.db.execute(sql`
    INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, application_id, verify_key, client_secret_sealed)
    VALUES (${tenant.projectId}, 'discord', 'v1.bench', '300000000000000001', 'owl-bot', '300000000000000001', ${'0'.repeat(64)}, 'v1.bench')`);
  unwrap(await services.settings.patch(tenant.projectId, { page_accent_color: '#0b6e4f', page_logo_url: 'https://cdn.example.com/owl.png' }));
  return { projectId: tenant.projectId, portalToken: new URL(link.url).pathname.split('/').pop()! };
}

/** One request every 1000/rate ms for `seconds`, each timed from send to last byte. */
async function openLoop(url: string, rate: number, seconds: number, headers: Record<string, string> = {}): Promise<{ latencies: number[]; failed: number; sent: number; refusals: Record<string, number> }> {
  const latencies: number[] = [];
  // What the requests that were not 200 got, for the log: a status, or the fetch error's name.
  const refusals: Record<string, number> = {};
  const refused = (what: string) => {
    failed++;
    refusals[what] = (refusals[what] ?? 0) + 1;
  };
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
      fetch(url, { headers })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.status !== 200) refused(String(res.status));
          // Timed from when the request was due: a late send counts against the page (no coordinated omission).
          latencies.push(performance.now() - Math.min(t0, due));
        })
        .catch((err: unknown) => refused(err instanceof Error ? err.name : 'error')),
    );
  }
  await Promise.all(inFlight);
  return { latencies, failed, sent, refusals };
}

async function weightOf(base: string, pagePath: string, headers: Record<string, string> = {}): Promise<{ total: number; html: number }> {
  const html = await (await fetch(`${base}${pagePath}`, { headers })).text();
  const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
  let total = Buffer.byteLength(html);
  for (const href of sheets) total += (await (await fetch(`${base}${href}`)).arrayBuffer()).byteLength;
  return { total, html: Buffer.byteLength(html) };
}

/** The portal's first open, as the member's browser makes it: the session cookie it sets. */
async function portalSession(base: string, token: string): Promise<Record<string, string>> {
  const res = await fetch(`${base}/portal/${token}`);
  await res.arrayBuffer();
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('tenure_portal='));
  if (res.status !== 200 || !cookie) throw new Error(`the portal link did not open a session (${res.status})`);
  return { cookie: cookie.split(';')[0]! };
}

async function measure(storage: Storage, ctx: BenchContext, rate: number, seconds: number): Promise<Measured[]> {
  let env: Record<string, string>;
  let seeded: Seeded;
  if (storage === 'PostgreSQL') {
    const db = await benchDatabase(ctx);
    const database = await openDatabase({ kind: 'postgres', url: db.url, poolSize: 5 });
    try {
      await database.migrate();
      seeded = await seedShop(database);
    } finally {
      await database.close();
    }
    env = { DATABASE_URL: db.url };
  } else {
    const [dir, id] = await pgliteDir(ctx, 'web-pglite', seedShop);
    seeded = id;
    env = { DATA_DIR: dir };
  }
  ctx.log(`${storage}: starting the server`);
  const server = await startFull(ctx, `web-${storage}`, { ...env, TENURE_WORKER: 'false' });
  try {
    const session = await portalSession(server.url, seeded.portalToken);
    const pages = [
      { page: 'plan page' as const, path: `/p/${seeded.projectId}`, headers: {} },
      { page: 'portal' as const, path: `/portal/${seeded.portalToken}`, headers: session },
    ];
    const results: Measured[] = [];
    for (const p of pages) {
      const url = `${server.url}${p.path}`;
      // Warm-up: the first requests compile templates and prepare statements.
      await openLoop(url, 50, 3, p.headers);
      const weight = await weightOf(server.url, p.path, p.headers);
      ctx.log(`${storage}: ${p.page} at ${rate}/s for ${seconds} s`);
      const before = loadavg()[0]!;
      const run = await openLoop(url, rate, seconds, p.headers);
      if (run.failed > 0) ctx.log(`${storage}: ${p.page}: not 200: ${JSON.stringify(run.refusals)}`);
      results.push({ storage, page: p.page, ...run, weightBytes: weight.total, htmlBytes: weight.html, load: [before, loadavg()[0]!] });
    }
    return results;
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
    return `| ${r.page} | ${r.storage} | ${r.sent} | ${r.failed} | ${quantile(r.latencies, 0.5).toFixed(1)} | ${p99.toFixed(1)} | ${Math.max(...r.latencies).toFixed(1)} | ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'} | ${(r.weightBytes / 1024).toFixed(1)} KB (HTML ${(r.htmlBytes / 1024).toFixed(1)} KB) | ${r.weightBytes < TARGET_WEIGHT_BYTES ? 'met' : 'MISSED'} | ${r.load.map((l) => l.toFixed(1)).join(' → ')} |`;
  });
  return [
    '## The public plan page and the portal',
    '',
    `\`GET /p/{project_id}\`, then the member portal \`GET /portal/{token}\` with the session cookie its first open set (made once), each at ${rate} requests/s (open loop) for ${seconds} s against \`node dist/main.js\` (worker off). The project: ${PLANS} plans each granting a Discord role, Login with Discord set up, an accent colour and a logo, ${MEMBERS.toLocaleString('en')} members with a payment each; the portal's member has a membership, ${PAYMENTS} payments and invoicing details. Times are from when each request was due to its last byte, on loopback, the bench on the same two cores. Weight: the HTML plus the stylesheets it links (pages.css, and the plan page's brand.css), uncompressed.`,
    '',
    '| page | storage | requests | not 200 | p50 ms | p99 ms (target < 50) | max ms | p99 | page weight (target < 50 KB) | weight | host load (1 min) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
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
    for (const storage of storages) results.push(...(await measure(storage, ctx, rate, seconds)));
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
