/**
 * Gateway benchmark: a member who paid before joining joins the guild → their role is given. From
 * the instant the fake Discord's member joins (its gateway sends GUILD_MEMBER_ADD to the bot's
 * connection) to the instant the fake receives the role `PUT`, per member; target p99 < 2 s.
 * Against the local fake Discord (test/support/fake-discord.ts and its gateway) at Discord's
 * published limits (50 requests/s per bot, member-role bucket 10 per 10 s per guild), through the
 * real server (`node dist/main.js`, its worker in process), drift repair a day apart so every
 * grant is the gateway's.
 *
 *   npm run build && npx tsx bench/gateway.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * Setup per storage: a database of its own, one project, GUILDS guilds each with one role and a plan
 * granting it (the guild a parent target), N members with active memberships spread over the
 * plans, none of them in a guild yet. The server starts, the bot is connected (`PUT
 * …/integrations/discord`): every grant is tried once and waits (`10007`, `waiting_for_member`),
 * the gateway connects, the first drift comparison lists the guilds, and the member-role windows
 * those grants spent pass. Then the members join, one
 * every 1000 / BENCH_GATEWAY_JOINS_PER_SECOND ms (default 10/s, over the guilds in turn: half a
 * join per second per guild, within its bucket). Knobs: BENCH_GATEWAY_MEMBERS (200),
 * BENCH_GATEWAY_STORAGES (`pg,pglite`). Run as a script it writes the gateway section of
 * bench/RESULTS.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '../src/database/db.js';
import { fakeSnowflake, startFakeDiscord, type FakeDiscord } from '../test/support/fake-discord.js';
import { seededStorage, type BenchContext } from './lib/context.js';
import { isEntryPoint } from './lib/phases.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { measuredCommit, writeSection } from './lib/report.js';
import { seedTenant, type Tenant } from './lib/seed.js';

const TARGET_P99_MS = 2_000;
const GUILDS = 20;
const ROLE_CALL = '/guilds/{guild.id}/members/{user.id}/roles/{role.id}';
/** The fake's member-role bucket window (Discord's, as observed: 10 per 10 s per guild). */
const ROLE_WINDOW_MS = 10_000;

type Storage = 'PostgreSQL' | 'PGlite';

interface Guild {
  guildId: string;
  roleId: string;
}

interface Measured {
  storage: Storage;
  members: number;
  perSecond: number;
  latencies: number[];
}

const memberId = (g: number) => String(300_000_000_000_000_000n + BigInt(g));
const guildOf = (g: number, guilds: Guild[]) => guilds[g % guilds.length]!;

async function seed(database: Database, members: number, guilds: Guild[]): Promise<Tenant> {
  const tenant = await seedTenant(database, 'bench gateway', 0);
  const { db } = database;
  for (const [i, g] of guilds.entries()) {
    const [plan] = rowsOf<{ id: string }>(
      await db.execute(sql`
        INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
        VALUES (${tenant.projectId}, ${`Plan ${i}`}, '10.00', 'USD', '1 month', '$10.00') RETURNING id`),
    );
    const [guild] = rowsOf<{ id: string }>(
      await db.execute(sql`INSERT INTO targets (project_id, name, platform, kind, external_id) VALUES (${tenant.projectId}, 'Guild', 'discord', 'guild', ${g.guildId}) RETURNING id`),
    );
    const [role] = rowsOf<{ id: string }>(
      await db.execute(sql`
        INSERT INTO targets (project_id, name, platform, kind, external_id, parent_target_id)
        VALUES (${tenant.projectId}, 'Member', 'discord', 'role', ${g.roleId}, ${guild!.id}) RETURNING id`),
    );
    await db.execute(sql`INSERT INTO plan_targets (plan_id, target_id) VALUES (${plan!.id}, ${role!.id})`);
    const ids = Array.from({ length: members }, (_, k) => k + 1).filter((k) => k % guilds.length === i).map(memberId);
    await db.execute(sql`
      INSERT INTO memberships (project_id, user_id, plan_id, end_date)
      SELECT ${tenant.projectId}, u, ${plan!.id}, now() + interval '30 days' FROM unnest(${sql.param(ids)}::text[]) AS u`);
  }
  return { ...tenant, members };
}

async function until(what: string, check: () => boolean, timeoutMs: number, server: Server): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gateway bench: not within ${timeoutMs} ms: ${what}\n${server.logTail()}`);
    await sleep(20);
  }
}

async function measure(storage: Storage, members: number, perSecond: number, ctx: BenchContext): Promise<Measured> {
  const fake: FakeDiscord = await startFakeDiscord({ globalPerSecond: 50 });
  let server: Server | null = null;
  try {
    const bot = { id: fakeSnowflake(), token: `bench.${randomBytes(24).toString('base64url')}`, username: 'tenure-bench' };
    const guilds: Guild[] = Array.from({ length: GUILDS }, () => ({ guildId: fakeSnowflake(), roleId: fakeSnowflake() }));
    fake.addBot(bot);
    for (const g of guilds) {
      fake.addGuild({ id: g.guildId });
      fake.addRole(g.guildId, { id: g.roleId, position: 1, name: 'Member' });
    }
    const { env, seeded: tenant } = await seededStorage(ctx, storage, 'gateway', (database) => seed(database, members, guilds));
    server = await startServer(
      `gateway-${storage === 'PostgreSQL' ? 'pg' : 'pglite'}`,
      ['dist/main.js'],
      { ...env, LOG_LEVEL: 'warn', TENURE_DEMO_PROJECT: 'false', TENURE_DISCORD_API_URL: fake.url, TENURE_ACCESS_RECONCILE_SECONDS: '86400' },
      ctx.tmp,
    );
    const res = await fetch(`${server.url}/v2/projects/${tenant.projectId}/integrations/discord`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ bot_token: bot.token }),
    });
    if (!res.ok) throw new Error(`connect: ${res.status} ${await res.text()}`);
    // Every grant tried once and waiting for its member; the gateway up; the first comparison over.
    const waited = () => fake.calls.filter((c) => c.route === ROLE_CALL && c.status === 404).length;
    await until(`${members} grants waiting`, () => waited() >= members && fake.gateway.openConnections(bot.id) === 1, 120_000, server);
    const listed = () => fake.calls.filter((c) => c.route === '/guilds/{guild.id}/members' && c.method === 'GET').length;
    await until('the first drift comparison', () => listed() >= GUILDS, 60_000, server);
    // The grants tried at the connection spent each guild's member-role window (10 per 10 s): joins
    // start once it has passed, as a member who joins later than the minute they paid finds it.
    const lastRoleCall = fake.calls.filter((c) => c.route === ROLE_CALL).at(-1)!.at;
    await sleep(Math.max(1_000, lastRoleCall + ROLE_WINDOW_MS + 500 - Date.now()));

    const joinedAt = new Map<string, number>();
    const from = fake.calls.length;
    const started = Date.now();
    for (let g = 1; g <= members; g++) {
      const wait = started + ((g - 1) * 1000) / perSecond - Date.now();
      if (wait > 0) await sleep(wait);
      const user = memberId(g);
      joinedAt.set(user, Date.now());
      fake.addMember(guildOf(g, guilds).guildId, user);
    }
    const granted = () => fake.calls.slice(from).filter((c) => c.route === ROLE_CALL && c.method === 'PUT' && c.status === 204);
    await until(`${members} roles given`, () => granted().length >= members, 120_000, server);
    const latencies = granted().map((c) => c.at - joinedAt.get(/\/members\/(\d+)\/roles\//.exec(c.path)![1]!)!);
    const lost = Array.from({ length: members }, (_, k) => k + 1).filter((g) => !fake.memberRoles(guildOf(g, guilds).guildId, memberId(g))?.includes(guildOf(g, guilds).roleId));
    if (lost.length > 0) throw new Error(`gateway bench: ${lost.length} members without their role`);
    ctx.log(`gateway ${storage}: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${Math.max(...latencies)} ms`);
    return { storage, members, perSecond, latencies };
  } finally {
    await server?.stop();
    await fake.close();
  }
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function markdownOf(results: Measured[]): string {
  const rows = results.map((r) => {
    const p99 = quantile(r.latencies, 0.99);
    return `| ${r.storage} | ${r.members} | ${r.perSecond} | ${quantile(r.latencies, 0.5)} | **${p99}** | ${Math.max(...r.latencies)} | ${p99 < TARGET_P99_MS ? 'met' : '**missed**'} |`;
  });
  return [
    '## Gateway: a member joining → their role',
    '',
    `- the fake Discord with its gateway (test/support/fake-discord-gateway.ts), Discord's limits (50 requests/s per bot, member-role`,
    `  bucket 10 per 10 s per guild), on loopback; the real server (\`node dist/main.js\`, worker in process), drift repair a day apart`,
    `- N members paid before joining (their grants \`waiting_for_member\`), spread over ${GUILDS} guilds; they join one after another;`,
    '  latency = the fake receiving the role `PUT` − the member joining on the fake (GUILD_MEMBER_ADD sent at that instant)',
    '',
    `| storage | members | joins/s | p50 ms | p99 ms (target < ${TARGET_P99_MS}) | max ms | target |`,
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows,
  ].join('\n');
}

if (isEntryPoint(import.meta.url)) {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const members = Number(process.env.BENCH_GATEWAY_MEMBERS ?? 200);
  const perSecond = Number(process.env.BENCH_GATEWAY_JOINS_PER_SECOND ?? 10);
  const storages = (process.env.BENCH_GATEWAY_STORAGES ?? 'pg,pglite').split(',').map((s) => (s.trim() === 'pglite' ? 'PGlite' : 'PostgreSQL')) as Storage[];
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const started = new Date();
  const commit = measuredCommit();
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-gateway-'));
  const cleanup: (() => Promise<unknown>)[] = [];
  const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
  const ctx: BenchContext = { tmp, adminUrl, logLevel: 'warn', log, onCleanup: (step) => cleanup.push(step) };
  try {
    const results: Measured[] = [];
    for (const storage of storages) results.push(await measure(storage, members, perSecond, ctx));
    const markdown = markdownOf(results).replace(
      /\n/,
      `\n\nCommand: \`npm run build && npx tsx bench/gateway.ts\` · commit: ${commit} · date: ${started.toISOString()} · whole run: ${Math.round((Date.now() - started.getTime()) / 1000)} s\n`,
    );
    await writeSection('gateway', 'npx tsx bench/gateway.ts', markdown);
    console.log(markdown);
    if (results.some((r) => quantile(r.latencies, 0.99) >= TARGET_P99_MS)) process.exitCode = 1;
  } finally {
    for (const step of cleanup.splice(0)) await step();
    await rm(tmp, { recursive: true, force: true });
    await stopAll();
  }
}
