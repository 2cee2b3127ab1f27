/**
 * Front desk benchmark (docs/front-desk.md): how fast tenure answers Discord's
 * interactions and opens a pay link, through the real server (`node dist/main.js`) on PostgreSQL,
 * pointed at the repo's fakes started in this process (test/support/fake-discord.ts,
 * test/support/fake-stripe.ts, both on 127.0.0.1, port 0):
 *
 * 1. **Interactions at 50/s**: signed interactions (Ed25519, with the key pair the fake Discord
 *    makes for the bot's application in this process; tenure reads the public key from the fake's
 *    `GET /applications/@me` when the bot is connected) POSTed to `/interactions/discord/{project}`
 *    at a steady 50 per second (an open loop: each is sent on its tick, whatever the earlier ones
 *    are doing), alternately `/subscribe` (answered at once with the plans as buttons) and a press
 *    of one of three plan buttons (answered deferred, then the pay link is made and the answer
 *    edited through the fake's follow-up webhook). Each from a member of its own. Measured: the
 *    time from sending to tenure's whole HTTP answer, p50/p99 (target p99 < 300 ms, a tenth of
 *    Discord's 3 s), and for the button presses the time from sending to the follow-up edit
 *    reaching the fake Discord (reported, no target). A first second of the same load warms the
 *    server up and is not counted.
 * 2. **`GET /pay/{id}` beyond Stripe's own time**: pay links made through the API
 *    (`POST /v2/projects/{id}/pay-links`), each opened once (`redirect: 'manual'`: the 303 to the
 *    fake's checkout page) by bench/lib/pay-opens.ts, in three shapes: at a steady 50 a second (an
 *    open loop; the target is judged on it), 10 in flight as fast as the host goes (a closed loop,
 *    shown with its own verdict) and one at a time. Stripe's time is measured per request, not
 *    estimated: tenure talks to the fake Stripe through a timing proxy (bench/lib/timing-proxy.ts)
 *    that times every call, and each Checkout Session create is matched to its link by the member
 *    in its metadata. Tenure's own time is the open's time minus its session create's (loopback hops
 *    between tenure and the proxy count as tenure's: conservative); the server's logged time of the
 *    same request, less the create, is shown beside it. Target p99 < 20 ms.
 *    Why the open loop: at 10 in flight the opens come as fast as the host answers them, ~250 a
 *    second, and the server, PostgreSQL and this process (client, proxy, both fakes) share the
 *    host's two cores; the p99 there is the queue for those cores, not an open's work. 50 opens a
 *    second is more than a community's members open pay links at its busiest.
 * A member joining → role granted (target p99 < 2 s) is bench/gateway.ts's.
 *
 *   npm run build && npx tsx bench/front-desk.ts            # full: 60 s of interactions, 400 pay links; writes its section
 *   npm run build && npx tsx bench/front-desk.ts --quick    # 10 s, 100 pay links; writes nothing
 *   npm run build && npx tsx bench/front-desk.ts --pay      # the pay links only; writes nothing
 *
 * Knobs: BENCH_FRONT_DESK_SECONDS (60; quick 10), BENCH_FRONT_DESK_RATE (50 interactions/s),
 * BENCH_FRONT_DESK_LINKS (400; quick 100), BENCH_FRONT_DESK_CONCURRENCY (10),
 * BENCH_FRONT_DESK_PAY_RATE (50 opens/s), BENCH_FRONT_DESK_MEMBERS (20,000 active members on the plans), BENCH_FRONT_DESK_BUILDS (`this=dist/main.js`; a list
 * `label=path,…` measures several builds side by side, e.g. the parent commit's dist/ beside this
 * one's, the first reported), BENCH_FRONT_DESK_NODE_ARGS (flags for the servers' node, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`). PostgreSQL at
 * BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test: a database of its own, dropped after.
 * `runFrontDeskBench` is what bench/run.ts calls (`BENCH_ONLY=front-desk`).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../src/database/db.js';
import { fakeSnowflake, startFakeDiscord, type FakeDiscord } from '../test/support/fake-discord.js';
import { startFakeStripe } from '../test/support/fake-stripe.js';
import { adminQuery } from './lib/admin.js';
import { EDITS_WAIT_MS, markdownOf, ms, PAY_WARMUP, ratiosOf, shapeOf, type Build, type InteractionFigures, type Measured, type PayRun } from './lib/front-desk-report.js';
import { benchDatabase, type BenchContext } from './lib/context.js';
import { isEntryPoint, type PhaseOptions, type PhaseResult } from './lib/phases.js';
import { openPayLinks, percentile, pool, type PayFigures, type PayLink, type Shape } from './lib/pay-opens.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { MEASURED_PATHS, measuredCommit, writeSection } from './lib/report.js';
import { seedTenant, type Tenant } from './lib/seed.js';
import { startTimingProxy, type TimingProxy } from './lib/timing-proxy.js';

/** Bounds on every wait: a request, and the follow-up edits after the last interaction. */
const REQUEST_TIMEOUT_MS = 10_000;

function settings(quick: boolean) {
  const n = (name: string, full: number, fast: number) => Number(process.env[name] ?? (quick ? fast : full));
  // `label=path/to/main.js,…`: several builds measured side by side in one run (a parent commit's dist/ beside this one's).
  const builds = (process.env.BENCH_FRONT_DESK_BUILDS ?? 'this=dist/main.js').split(',').map((b): Build => {
    const [label, main] = b.includes('=') ? (b.split('=', 2) as [string, string]) : [b, b];
    return { label, main };
  });
  return {
    seconds: n('BENCH_FRONT_DESK_SECONDS', 60, 10),
    rate: n('BENCH_FRONT_DESK_RATE', 50, 50),
    links: n('BENCH_FRONT_DESK_LINKS', 400, 100),
    concurrency: n('BENCH_FRONT_DESK_CONCURRENCY', 10, 10),
    payRate: n('BENCH_FRONT_DESK_PAY_RATE', 50, 50),
    members: n('BENCH_FRONT_DESK_MEMBERS', 20_000, 20_000),
    builds,
    // Extra node flags for the servers (`--cpu-prof --cpu-prof-dir=…` to profile them).
    nodeArgs: (process.env.BENCH_FRONT_DESK_NODE_ARGS ?? '').split(' ').filter(Boolean),
  };
}
type Settings = ReturnType<typeof settings>;

interface Desk {
  build: Build;
  server: Server;
  /** The server's output (LOG_LEVEL info): its `request completed` lines time each request. */
  logFile: string;
  /** The server's database, on the bench's PostgreSQL. */
  database: string;
  tenant: Tenant;
  botId: string;
  guildId: string;
  planIds: string[];
}

async function api<T>(server: Server, tenant: Tenant, method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}/v2/projects/${tenant.projectId}${url}`, {
    method,
    headers: { authorization: `Bearer ${tenant.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}\n${server.logTail()}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** One guild with a role, three plans granting it, Stripe connected and the bot connected (its commands registered). */
async function setUp(ctx: BenchContext, discord: FakeDiscord, stripeUrl: string, stripeKey: string, build: Build, s: Settings): Promise<Desk> {
  const { url } = await benchDatabase(ctx);
  const database = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
  let tenant: Tenant;
  try {
    await database.migrate();
    tenant = await seedTenant(database, 'bench front desk', 0);
  } finally {
    await database.close();
  }
  const name = `front-desk-${build.label}`;
  const server = await startServer(
    name,
    [...s.nodeArgs, build.main],
    {
      DATABASE_URL: url,
      TENURE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: ctx.logLevel,
      TENURE_DEMO_PROJECT: 'false',
      TENURE_RATE_LIMIT_KEY: '1000000000',
      TENURE_RATE_LIMIT_IP: '1000000000',
      TENURE_RATE_LIMIT_BURST: '1000000000',
      TENURE_DISCORD_API_URL: discord.url,
      TENURE_STRIPE_API_URL: stripeUrl,
    },
    ctx.tmp,
  );
  const bot = { id: fakeSnowflake(), token: `bench.${randomBytes(24).toString('base64url')}`, username: 'tenure-bench' };
  const guildId = fakeSnowflake();
  const roleId = fakeSnowflake();
  discord.addBot(bot);
  discord.addGuild({ id: guildId, name: 'Club' });
  discord.addRole(guildId, { id: roleId, position: 1, name: 'VIP' });
  await api(server, tenant, 'POST', '/merchant-accounts', {
    provider: 'stripe',
    environment: 'sandbox',
    secret_key: stripeKey,
    webhook_secret: `whsec_${randomBytes(24).toString('base64')}`,
  });
  const guild = await api<{ target_id: string }>(server, tenant, 'POST', '/targets', { target_name: 'Club', platform: 'discord', kind: 'guild', external_id: guildId });
  const role = await api<{ target_id: string }>(server, tenant, 'POST', '/targets', {
    target_name: 'VIP',
    platform: 'discord',
    kind: 'role',
    external_id: roleId,
    parent_target_id: guild.target_id,
  });
  const planIds: string[] = [];
  for (const [name, price] of [['Gold', '10.00'], ['Silver', '5.00'], ['Bronze', '2.00']] as const) {
    const plan = await api<{ plan_id: string }>(server, tenant, 'POST', '/plans', {
      plan_name: name,
      plan_price: price,
      plan_currency: 'USD',
      plan_duration: '1 month',
      plan_price_formatted: `$${price}`,
    });
    await api(server, tenant, 'POST', `/plans/${plan.plan_id}/targets/${role.target_id}`);
    planIds.push(plan.plan_id);
  }
  if (s.members > 0) {
    // A community of that size, active on the three plans: reads that count a plan's members grow with it.
    const plans = planIds.map((id) => `'${id}'`).join(',');
    await adminQuery(
      url,
      `INSERT INTO memberships (project_id, user_id, plan_id, end_date, status)
       SELECT '${tenant.projectId}', (100000000000000000 + g)::text, (ARRAY[${plans}]::uuid[])[1 + g % 3], now() + interval '30 days', 'active'
       FROM generate_series(1, ${s.members}) AS g`,
    );
    await adminQuery(url, 'ANALYZE memberships');
  }
  await api(server, tenant, 'PUT', '/integrations/discord', { bot_token: bot.token });
  if (discord.guildCommands(bot.id, guildId).length === 0) throw new Error('front-desk bench: the bot connected but no command was registered in the guild');
  return { build, server, logFile: path.join(ctx.tmp, `${name}.log`), database: new URL(url).pathname.slice(1), tenant, botId: bot.id, guildId, planIds };
}

interface Sent {
  kind: 'subscribe' | 'button';
  token: string;
  sentAt: number;
  answerMs: number;
  status: number;
  type: number | null;
}

/** Sends `count` interactions at `rate`/s on a fixed schedule (an open loop), each bounded by REQUEST_TIMEOUT_MS. */
async function interactionsAt(desk: Desk, discord: FakeDiscord, rate: number, count: number): Promise<Sent[]> {
  const url = `${desk.server.url}/interactions/discord/${desk.tenant.projectId}`;
  const start = performance.now();
  const pending: Promise<Sent>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const kind = i % 2 === 0 ? 'subscribe' : 'button';
    const member = { user: { id: fakeSnowflake(), username: 'member' }, permissions: '0' };
    const fields =
      kind === 'subscribe'
        ? { type: 2, guild_id: desk.guildId, channel_id: fakeSnowflake(), member, data: { id: fakeSnowflake(), name: 'subscribe', type: 1 } }
        : { type: 3, guild_id: desk.guildId, channel_id: fakeSnowflake(), member, data: { custom_id: `tenure:plan:${desk.planIds[i % desk.planIds.length]}`, component_type: 2 } };
    const signed = discord.signInteraction(desk.botId, fields);
    const token = String(signed.interaction.token);
    pending.push(
      (async (): Promise<Sent> => {
        const sentAt = Date.now();
        const t0 = performance.now();
        try {
          const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          const text = await res.text();
          const answerMs = performance.now() - t0;
          const type = res.ok ? ((JSON.parse(text) as { type?: number }).type ?? null) : null;
          return { kind, token, sentAt, answerMs, status: res.status, type };
        } catch {
          return { kind, token, sentAt, answerMs: performance.now() - t0, status: 0, type: null };
        }
      })(),
    );
  }
  return Promise.all(pending);
}


async function measureInteractions(desk: Desk, discord: FakeDiscord, s: Settings, log: (l: string) => void): Promise<InteractionFigures> {
  // Warm-up: one second of the same load, not counted.
  await interactionsAt(desk, discord, s.rate, s.rate);
  await sleep(1_000);
  const started = performance.now();
  const sent = await interactionsAt(desk, discord, s.rate, Math.round(s.rate * s.seconds));
  const seconds = (sent.at(-1)!.sentAt - sent[0]!.sentAt) / 1000;
  const ok = (x: Sent) => x.status === 200 && x.type === (x.kind === 'subscribe' ? 4 : 5);
  const failed = sent.filter((x) => !ok(x)).length;
  if (failed) log(`front-desk: ${failed} interactions not answered as expected: ${JSON.stringify(sent.filter((x) => !ok(x)).slice(0, 3))}`);
  const ms = (xs: Sent[]) => xs.map((x) => x.answerMs);
  // The follow-up edits of the button presses, bounded by EDITS_WAIT_MS after the last answer.
  const buttons = sent.filter((x) => x.kind === 'button' && ok(x));
  const tokens = new Set(buttons.map((b) => b.token));
  const deadline = Date.now() + EDITS_WAIT_MS;
  const editsOf = () => discord.originalEdits.filter((e) => tokens.has(e.token));
  while (editsOf().length < buttons.length && Date.now() < deadline) await sleep(200);
  const editAt = new Map(editsOf().map((e) => [e.token, e.at]));
  const editMs = buttons.flatMap((b) => (editAt.has(b.token) ? [editAt.get(b.token)! - b.sentAt] : []));
  log(`front-desk: ${sent.length} interactions in ${((performance.now() - started) / 1000).toFixed(1)} s, ${editMs.length} of ${buttons.length} edits`);
  return {
    sent: sent.length,
    seconds,
    achievedRate: (sent.length - 1) / seconds,
    failed,
    all: { p50: percentile(ms(sent), 50), p99: percentile(ms(sent), 99), max: Math.max(...ms(sent)) },
    subscribe: { p50: percentile(ms(sent.filter((x) => x.kind === 'subscribe')), 50), p99: percentile(ms(sent.filter((x) => x.kind === 'subscribe')), 99) },
    button: { p50: percentile(ms(sent.filter((x) => x.kind === 'button')), 50), p99: percentile(ms(sent.filter((x) => x.kind === 'button')), 99) },
    edits: { n: editMs.length, missing: buttons.length - editMs.length, p50: percentile(editMs, 50), p99: percentile(editMs, 99), max: Math.max(...editMs) },
  };
}

/** Makes `count` pay links through the API, one member each. */
async function payLinksOf(desk: Desk, count: number, concurrency: number): Promise<PayLink[]> {
  const members = Array.from({ length: count }, () => fakeSnowflake());
  return pool(members, concurrency, async (user, i) => ({
    user,
    url: (await api<{ url: string }>(desk.server, desk.tenant, 'POST', '/pay-links', { plan_id: desk.planIds[i % desk.planIds.length], user_id: user })).url,
  }));
}

async function measurePay(desks: Desk[], proxy: TimingProxy, s: Settings, adminUrl: string, log: (l: string) => void): Promise<PayRun[]> {
  const shapes: Shape[] = [{ kind: 'closed', concurrency: 1 }, { kind: 'open', rate: s.payRate }, { kind: 'closed', concurrency: s.concurrency }];
  const figures = desks.map(() => [] as PayFigures[]);
  for (const [k, shape] of shapes.entries()) {
    const n = shape.kind === 'closed' && shape.concurrency === 1 ? Math.max(20, Math.round(s.links / 4)) : s.links;
    // Builds take turns, in the other order each shape: neither always runs on the warmer host.
    const order = desks.map((_, j) => j);
    if (k % 2 === 1) order.reverse();
    for (const j of order) {
      const desk = desks[j]!;
      const links = await payLinksOf(desk, PAY_WARMUP + n, s.concurrency);
      await sleep(500);
      const f = await openPayLinks({ server: desk.server, logFile: desk.logFile, adminUrl, database: desk.database }, proxy, links, PAY_WARMUP, shape, REQUEST_TIMEOUT_MS);
      log(`front-desk: ${desk.build.label}: ${shapeOf(f)}: ${f.links} opens, tenure's own p50 ${ms(f.beyond.p50)} p99 ${ms(f.beyond.p99)} ms, server's ${ms(f.server.p99)}, server CPU ${f.serverCpuMs.toFixed(2)} ms an open, its PostgreSQL backends ${f.backendsCpuMs.toFixed(2)}`);
      figures[j]![k] = f;
    }
  }
  return desks.map((d, j) => ({ build: d.build.label, serial: figures[j]![0]!, paced: figures[j]![1]!, closed: figures[j]![2]! }));
}

export async function runFrontDeskBench(options: PhaseOptions & { payOnly?: boolean }): Promise<PhaseResult> {
  const s = settings(options.quick);
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-front-desk-'));
  const cleanup: (() => Promise<unknown>)[] = [];
  const ctx: BenchContext = { tmp, adminUrl: options.adminUrl, logLevel: 'info', log: options.log, onCleanup: (step) => cleanup.push(step) };
  const discord = await startFakeDiscord();
  const stripe = await startFakeStripe();
  const proxy = await startTimingProxy(stripe.url);
  const desks: Desk[] = [];
  try {
    const before = loadavg();
    const { secretKey } = stripe.world.addAccount({ livemode: false });
    for (const build of s.builds) desks.push(await setUp(ctx, discord, proxy.url, secretKey, build, s));
    options.log(`front-desk: ${desks.length} server(s) up (${s.builds.map((b) => `${b.label}: ${b.main}`).join(', ')}), bot connected`);
    const interactions = options.payOnly ? null : await measureInteractions(desks[0]!, discord, s, options.log);
    const pay = await measurePay(desks, proxy, s, options.adminUrl, options.log);
    const measured: Measured = { s, interactions, pay, load: { before, after: loadavg() } };
    return { markdown: markdownOf(measured), ratios: ratiosOf(measured) };
  } finally {
    for (const desk of desks) await desk.server.stop();
    await proxy.close();
    await stripe.close();
    await discord.close();
    for (const step of cleanup.splice(0)) await step();
    await rm(tmp, { recursive: true, force: true });
  }
}

if (isEntryPoint(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const payOnly = process.argv.includes('--pay');
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const started = new Date();
  const commit = measuredCommit();
  // What made the commit -dirty: on this shared host, often other sessions' work in progress, which dist/ was built from.
  const dirty = commit.endsWith('-dirty')
    ? execFileSync('git', ['status', '--porcelain', '--', ...MEASURED_PATHS], { encoding: 'utf8' }).trimEnd().split('\n').map((l) => l.slice(3))
    : [];
  const builds = process.env.BENCH_FRONT_DESK_BUILDS;
  const command = `npm run build && ${builds ? `BENCH_FRONT_DESK_BUILDS=${builds} ` : ''}npx tsx bench/front-desk.ts${quick ? ' --quick' : ''}${payOnly ? ' --pay' : ''}`;
  const result = await runFrontDeskBench({ quick, payOnly, adminUrl, log: (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`) });
  const markdown = result.markdown.replace(
    /\n/,
    `\n\nCommand: \`${command}\` · commit: ${commit} · date: ${started.toISOString()} · whole run: ${Math.round((Date.now() - started.getTime()) / 1000)} s\n${
      dirty.length ? `\nUncommitted at the start (dist/ built from this tree): ${dirty.slice(0, 8).map((f) => `\`${f}\``).join(', ')}${dirty.length > 8 ? ` and ${dirty.length - 8} more` : ''}.\n` : ''
    }`,
  );
  if (!quick && !payOnly) await writeSection('front-desk', 'npx tsx bench/front-desk.ts', markdown);
  console.log(markdown);
  for (const r of result.ratios) console.log(`${r.met ? 'met   ' : 'MISSED'} ${r.name}: ${r.value.toFixed(1)} (target ${r.target})`);
  if (result.ratios.some((r) => !r.met)) process.exitCode = 1;
}
