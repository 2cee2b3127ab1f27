/**
 * Reminders benchmark (docs/lifecycle.md):
 *
 *   npm run build && npx tsx bench/reminders.ts      # PostgreSQL at BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, and PGlite
 *
 * 1. **Events/s.** 200,000 active memberships of one project (offsets `["1d"]`, a Discord bot
 *    connected, so each reminder also queues its message) all reach their reminder instant at once.
 *    The real job (RemindersJob over RemindersStore, with the batch size the worker runtime uses on
 *    that storage) runs one pass on a clock just past the instant: `membership.expiring` events ÷ the
 *    pass's wall time, each batch one statement writing the reminders, the events, the messages and
 *    the cursor's move. Target ≥ 20,000/s on PostgreSQL (as for expiry); PGlite shown.
 * 2. **Messages at the platform's ceiling.** The real server (`node dist/main.js`, worker in
 *    process) with the fake Discord (test/support/fake-discord.ts) enforcing Discord's global limit
 *    of 50 requests/s per bot. A DM is two requests (Create DM, then Create Message), so the ceiling
 *    is 25 messages/s. The fake's per-route bucket for Create Message is turned off here: Discord
 *    keys it by channel (a major parameter), and each member's DM is a channel of its own, while the
 *    fake keys it per bot, which would make the ceiling 1 message/s, a limit Discord does not have.
 *    N members (no plan: the message carries no link to make) reach their `1d` instant together;
 *    achieved = (messages − 1) ÷ (last Create Message − first), as the fake received them;
 *    ratio = achieved ÷ 25 (target ≥ 0.9).
 *
 * Writes the `reminders` section of bench/RESULTS.md. Knobs: BENCH_REMINDERS_MEMBERS (200000),
 * BENCH_REMINDERS_MESSAGES (1000), BENCH_REMINDERS_STORAGES (pg,pglite), BENCH_REMINDERS_PARTS (events,messages),
 * BENCH_REMINDERS_BOT=0 (part 1 without the bot row: events only, no messages queued, no planner queue rows).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../src/database/db.js';
import type { Clock } from '../src/domain/clock.js';
import { DEFAULT_REMINDERS_OPTIONS, RemindersJob } from '../src/domain/lifecycle/reminders.job.js';
import { createLogger } from '../src/logger.js';
import { RemindersStore } from '../src/store/reminders.store.js';
import { EMBEDDED_SWEEP_BATCH } from '../src/worker-runtime.js';
import { fakeSnowflake, startFakeDiscord, type FakeDiscord } from '../test/support/fake-discord.js';
import { seededStorage, type BenchContext } from './lib/context.js';
import { startServer, stopAll, type Server } from './lib/processes.js';
import { measuredCommit, writeSection } from './lib/report.js';
import { seedTenant } from './lib/seed.js';

type Storage = 'PostgreSQL' | 'PGlite';
const TARGET_EVENTS = 20_000;
const TARGET_RATIO = 0.9;
/** Discord's global limit per bot, and the requests a DM takes (Create DM, Create Message). */
const GLOBAL_PER_SECOND = 50;
const REQUESTS_PER_DM = 2;
const ALLOWED = GLOBAL_PER_SECOND / REQUESTS_PER_DM;
const MESSAGE_ROUTE = '/channels/{channel.id}/messages';

const DAY = 86_400_000;

/** A project with offsets ["1d"], `members` active memberships ending at `end`, and (optionally) a Discord bot row. */
async function seed(database: Database, members: number, end: Date, botRow: boolean) {
  const tenant = await seedTenant(database, 'bench reminders', 0);
  const { db } = database;
  await db.execute(sql`INSERT INTO settings (project_id, key, value) VALUES (${tenant.projectId}, 'reminder_offsets', '["1d"]'::jsonb)`);
  // A bot row the reminders' statement sees (no worker runs in part 1: nothing is sent).
  if (botRow) {
    await db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name) VALUES (${tenant.projectId}, 'discord', 'unused', '1', 'bench')`);
  }
  await db.execute(sql`
    INSERT INTO users (project_id, user_id) SELECT ${tenant.projectId}, (400000000000000000 + g)::text FROM generate_series(1, ${members}::int) g`);
  await db.execute(sql`
    INSERT INTO memberships (project_id, user_id, end_date, status)
    SELECT ${tenant.projectId}, (400000000000000000 + g)::text, ${end.toISOString()}::timestamptz, 'active' FROM generate_series(1, ${members}::int) g`);
  if (database.kind === 'postgres') await db.execute(sql`VACUUM ANALYZE memberships`);
  return tenant;
}

interface EventsMeasured {
  storage: Storage;
  members: number;
  batch: number;
  seconds: number;
  events: number;
  messages: number;
}

async function measureEvents(ctx: BenchContext, storage: Storage, members: number): Promise<EventsMeasured> {
  const t0 = new Date();
  const end = new Date(t0.getTime() + DAY + 3_600_000);
  const { env, seeded } = await seededStorage(ctx, storage, 'reminders', (database) => seed(database, members, end, process.env.BENCH_REMINDERS_BOT !== '0'));
  const database =
    storage === 'PGlite' ? await openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR! }) : await openDatabase({ kind: 'postgres', url: env.DATABASE_URL!, poolSize: 2 });
  try {
    let now = t0;
    const clock: Clock = { now: () => now };
    const batch = storage === 'PGlite' ? EMBEDDED_SWEEP_BATCH : DEFAULT_REMINDERS_OPTIONS.batchSize;
    const job = new RemindersJob(new RemindersStore(database.db), clock, createLogger('silent'), { intervalMs: 60_000, batchSize: batch });
    // The first pass starts the cursor at t0 + 1d: nothing is due yet.
    if ((await job.passOnce()) !== 0) throw new Error('reminders bench: something was due before the instant');
    now = new Date(end.getTime() - DAY + 1_000);
    const started = process.hrtime.bigint();
    const written = await job.passOnce();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const [row] = rowsOf<{ events: number; messages: number }>(
      await database.db.execute(sql`
        SELECT (SELECT count(*)::int FROM events WHERE project_id = ${seeded.projectId} AND type = 'membership.expiring') AS events,
               (SELECT count(*)::int FROM notifications WHERE project_id = ${seeded.projectId} AND kind = 'reminder') AS messages`),
    );
    if (row!.events !== members || written !== members) throw new Error(`reminders bench: ${row!.events} events, ${written} written, for ${members} members`);
    ctx.log(`events ${storage}: ${members} in ${seconds.toFixed(2)} s = ${Math.round(members / seconds)}/s (batch ${batch})`);
    return { storage, members, batch, seconds, events: row!.events, messages: row!.messages };
  } finally {
    await database.close();
  }
}

interface MessagesMeasured {
  storage: Storage;
  messages: number;
  seconds: number;
  perSecond: number;
  rateLimited: number;
  requestsPerSecond: number;
}

async function measureMessages(ctx: BenchContext, storage: Storage, n: number): Promise<MessagesMeasured> {
  const fake: FakeDiscord = await startFakeDiscord({ globalPerSecond: GLOBAL_PER_SECOND, buckets: { createMessage: null } });
  let server: Server | null = null;
  try {
    const bot = { id: fakeSnowflake(), token: `bench.${randomBytes(24).toString('base64url')}`, username: 'tenure-bench' };
    fake.addBot(bot);
    // Far enough ahead that the server is up and its first pass has started the cursor (at now + 1d).
    const end = new Date(Date.now() + DAY + 25_000);
    const { env, seeded: tenant } = await seededStorage(ctx, storage, 'reminders-dm', (database) => seed(database, n, end, false));
    server = await startServer(
      `reminders-${storage === 'PostgreSQL' ? 'pg' : 'pglite'}`,
      ['dist/main.js'],
      { ...env, LOG_LEVEL: 'warn', TENURE_DEMO_PROJECT: 'false', TENURE_DISCORD_API_URL: fake.url, TENURE_DISCORD_GATEWAY: 'false' },
      ctx.tmp,
    );
    const res = await fetch(`${server.url}/v2/projects/${tenant.projectId}/integrations/discord`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ bot_token: bot.token }),
    });
    if (!res.ok) throw new Error(`connect: ${res.status} ${await res.text()}`);
    if (Date.now() > end.getTime() - DAY - 2_000) throw new Error('reminders bench: the server started too late for the instant');
    const sent = () => fake.calls.filter((c) => c.route === MESSAGE_ROUTE && c.status === 200);
    const deadline = end.getTime() - DAY + 60_000 + (n / ALLOWED) * 3_000;
    while (sent().length < n) {
      if (Date.now() > deadline) throw new Error(`reminders bench: ${sent().length} of ${n} messages\n${server.logTail()}`);
      await sleep(100);
    }
    const calls = sent();
    const seconds = (calls.at(-1)!.at - calls[0]!.at) / 1000;
    const window = fake.calls.filter((c) => c.botId === bot.id && c.at >= calls[0]!.at && c.at <= calls.at(-1)!.at);
    const stats = fake.stats(bot.id);
    const perSecond = (calls.length - 1) / seconds;
    ctx.log(`messages ${storage}: ${calls.length} in ${seconds.toFixed(1)} s = ${perSecond.toFixed(2)}/s, ratio ${(perSecond / ALLOWED).toFixed(3)}, 429s ${stats.rateLimited}`);
    return { storage, messages: calls.length, seconds, perSecond, rateLimited: stats.rateLimited, requestsPerSecond: window.length / seconds };
  } finally {
    await server?.stop();
    await fake.close();
  }
}

function markdownOf(events: EventsMeasured[], messages: MessagesMeasured[]): string {
  const lines = ['## Reminders: 200,000 memberships at one instant, and messages at the platform’s ceiling', ''];
  if (events.length > 0) {
    lines.push(
      '| storage | memberships reaching `1d` at once | batch | pass s | `membership.expiring` events/s | messages queued | target ≥ 20,000/s (PostgreSQL) |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...events.map(
        (e) =>
          `| ${e.storage} | ${e.members.toLocaleString('en-US')} | ${e.batch} | ${e.seconds.toFixed(2)} | **${Math.round(e.events / e.seconds).toLocaleString('en-US')}** | ${e.messages.toLocaleString('en-US')} | ${e.storage === 'PostgreSQL' ? (e.events / e.seconds >= TARGET_EVENTS ? 'met' : '**MISSED**') : 'shown'} |`,
      ),
      '',
    );
  }
  if (messages.length > 0) {
    lines.push(
      `| storage | reminder DMs | s (first → last message) | messages/s | allowed (50 req/s ÷ 2 requests a DM) | ratio (target ≥ ${TARGET_RATIO}) | requests/s at the fake | 429s |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...messages.map(
        (m) =>
          `| ${m.storage} | ${m.messages} | ${m.seconds.toFixed(1)} | ${m.perSecond.toFixed(2)} | ${ALLOWED} | **${(m.perSecond / ALLOWED).toFixed(3)}** ${m.perSecond / ALLOWED >= TARGET_RATIO ? 'met' : '**MISSED**'} | ${m.requestsPerSecond.toFixed(1)} | ${m.rateLimited} |`,
      ),
      '',
    );
  }
  lines.push(`- nproc: ${os.cpus().length}; node ${process.version}; the machine is shared (load at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')})`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const members = Number(process.env.BENCH_REMINDERS_MEMBERS ?? 200_000);
  const n = Number(process.env.BENCH_REMINDERS_MESSAGES ?? 1_000);
  const storages = (process.env.BENCH_REMINDERS_STORAGES ?? 'pg,pglite').split(',').map((s) => (s.trim() === 'pglite' ? 'PGlite' : 'PostgreSQL')) as Storage[];
  const parts = (process.env.BENCH_REMINDERS_PARTS ?? 'events,messages').split(',');
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const started = new Date();
  const commit = measuredCommit();
  const tmp = await mkdtemp(path.join(tmpdir(), 'tenure-bench-reminders-'));
  const cleanup: (() => Promise<unknown>)[] = [];
  const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
  const ctx: BenchContext = { tmp, adminUrl, logLevel: 'warn', log, onCleanup: (step) => cleanup.push(step) };
  try {
    const events: EventsMeasured[] = [];
    const messages: MessagesMeasured[] = [];
    for (const storage of storages) {
      if (parts.includes('events')) events.push(await measureEvents(ctx, storage, members));
      if (parts.includes('messages')) messages.push(await measureMessages(ctx, storage, n));
    }
    const markdown = markdownOf(events, messages).replace(
      /\n/,
      `\n\nCommand: \`npm run build && npx tsx bench/reminders.ts\` · commit: ${commit} · date: ${started.toISOString()} · whole run: ${Math.round((Date.now() - started.getTime()) / 1000)} s\n`,
    );
    await writeSection('reminders', 'npx tsx bench/reminders.ts', markdown);
    console.log(markdown);
    if (events.some((e) => e.storage === 'PostgreSQL' && e.events / e.seconds < TARGET_EVENTS) || messages.some((m) => m.perSecond / ALLOWED < TARGET_RATIO)) process.exitCode = 1;
  } finally {
    for (const step of cleanup.splice(0)) await step();
    await rm(tmp, { recursive: true, force: true });
    await stopAll();
  }
}
