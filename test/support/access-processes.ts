import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, rowsOf, type Database } from '../../src/database/db.js';
import { fakeSnowflake, type FakeCall, type FakeDiscord } from './fake-discord.js';
import { createTestDatabase, onPostgres } from './harness.js';
import { productNode } from './processes.js';

/**
 * Access workers as real processes (`npx tenure worker`, the built CLI) against the local fake
 * Discord, for the crash test (test/storage/access-crash.test.ts, both storages) and the two-worker
 * test (test/cluster/access.multiworker.test.ts, PostgreSQL): the storage of a file of its own, a
 * project whose bot is connected with members spread over guilds, the workers, and what they did.
 * Telegram's crash test builds its project on the same storage and workers (telegram-processes.ts).
 */

const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const ROLE_CALL = '/guilds/{guild.id}/members/{user.id}/roles/{role.id}';
export const BURST = 800;
export const CONCURRENCY = 8;
export const LEASE_SECONDS = 3;
/** The burst's guilds: calls in different guilds run side by side, as they would for a real bot. */
export const GUILDS = 8;

export interface Guild {
  guildId: string;
  roleId: string;
  members: string[];
}

export interface World {
  projectId: string;
  bot: { id: string; token: string; username: string };
  guilds: Guild[];
  members: string[];
}

/** Registers the file's set-up and tear-down; call inside its describe. */
export function useAccessProcesses() {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | null = null;
  let databaseUrl: string | null = null;
  /** PostgreSQL: this file's own connection to the workers' database, for looking at rows while they run. */
  let observer: Database | null = null;
  const children = new Set<ChildProcess>();
  const outputOf = new Map<ChildProcess, string>();
  /** The fakes the workers call (Discord's, Telegram's), closed after the file. */
  const fakes: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tenure-access-crash-'));
    const { DATABASE_URL: _admin, ...rest } = process.env;
    env = {
      ...rest,
      DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'warn',
      TENURE_DEMO_PROJECT: 'false',
      TENURE_ACCESS_CONCURRENCY: String(CONCURRENCY),
      TENURE_ACCESS_LEASE_SECONDS: String(LEASE_SECONDS),
      // A killed worker's DATA_DIR lock is taken over after this (10 s by default): the restart after a kill -9 waits it out.
      TENURE_DATA_DIR_LOCK_STALE_SECONDS: '2',
    };
    if (onPostgres) {
      const database = await createTestDatabase();
      dropDatabase = database.drop;
      if (database.storage.kind === 'postgres') databaseUrl = env.DATABASE_URL = database.storage.url;
      env.TENURE_ENCRYPTION_KEY = randomBytes(32).toString('base64');
      observer = await openDatabase({ kind: 'postgres', url: databaseUrl!, poolSize: 2 });
    } else {
      // A migrated data directory, copied: an initdb and the migrations cost seconds of CPU.
      await cp(inject('pgliteDataDir'), env.DATA_DIR!, { recursive: true });
    }
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([...children].map((c) => new Promise((resolve) => c.once('exit', resolve))));
    await Promise.all(fakes.map((f) => f.close()));
    await observer?.close();
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  /** `npx tenure worker` with this suite's environment; its output is kept for failure messages. */
  function startWorker(extra: NodeJS.ProcessEnv): ChildProcess {
    const child = spawn(process.execPath, productNode([BIN, 'worker']), { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    outputOf.set(child, '');
    const keep = (c: Buffer) => outputOf.set(child, outputOf.get(child) + c.toString());
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  const logs = () => [...outputOf.values()].join('\n---\n').slice(-4_000);

  /**
   * The suite's storage, opened in this process with the workers' configuration and `extra` (the
   * fake's URL: TENURE_DISCORD_API_URL, TENURE_TELEGRAM_API_URL); embedded: only while no worker runs.
   */
  async function withContainer<T>(extra: Record<string, string>, work: (c: Container) => Promise<T>): Promise<T> {
    const config = loadConfig({ ...(env as Record<string, string>), ...extra });
    const c = await createContainer({ config, logger: createLogger('silent') });
    try {
      return await work(c);
    } finally {
      await c.close();
    }
  }

  /**
   * A project with `guilds` guilds, each with one role (the guild its parent target) granted by a
   * plan of its own, `n` members spread over them, active and in their guild, and its bot connected
   * through the integrations service (the token checked with the fake): connecting plans the
   * project, so `n` grants are pending when this returns. Several guilds, so calls run side by side
   * (the library sends one call at a time per guild's bucket).
   */
  async function world(fake: FakeDiscord, n: number, guildCount: number): Promise<World> {
    const bot = { id: fakeSnowflake(), token: `crash.${randomBytes(24).toString('base64url')}`, username: 'tenure-crash' };
    fake.addBot(bot);
    const base = 300_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)) * 10_000n;
    const members = Array.from({ length: n }, (_, i) => String(base + BigInt(i)));
    const guilds: Guild[] = Array.from({ length: guildCount }, (_, g) => ({
      guildId: fakeSnowflake(),
      roleId: fakeSnowflake(),
      members: members.filter((_, i) => i % guildCount === g),
    }));
    for (const g of guilds) {
      fake.addGuild({ id: g.guildId });
      fake.addRole(g.guildId, { id: g.roleId, position: 1 });
      for (const m of g.members) fake.addMember(g.guildId, m);
    }
    const projectId = await withContainer({ TENURE_DISCORD_API_URL: fake.url }, async (c) => {
      const project = await c.services.projects.createProject('access crash');
      if (!project.ok) throw project.error;
      const id = project.value.id;
      const { db } = c.database;
      for (const g of guilds) {
        const [plan] = rowsOf<{ id: string }>(
          await db.execute(sql`
            INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
            VALUES (${id}, 'Gold', '10.00', 'USD', '1 month', '$10.00') RETURNING id`),
        );
        const [guild] = rowsOf<{ id: string }>(
          await db.execute(sql`INSERT INTO targets (project_id, name, platform, kind, external_id) VALUES (${id}, 'Guild', 'discord', 'guild', ${g.guildId}) RETURNING id`),
        );
        const [role] = rowsOf<{ id: string }>(
          await db.execute(sql`
            INSERT INTO targets (project_id, name, platform, kind, external_id, parent_target_id)
            VALUES (${id}, 'Member', 'discord', 'role', ${g.roleId}, ${guild!.id}) RETURNING id`),
        );
        await db.execute(sql`INSERT INTO plan_targets (plan_id, target_id) VALUES (${plan!.id}, ${role!.id})`);
        await db.execute(sql`
          INSERT INTO memberships (project_id, user_id, plan_id, end_date)
          SELECT ${id}, u, ${plan!.id}, now() + interval '30 days' FROM unnest(${sql.param(g.members)}::text[]) AS u`);
      }
      const connected = await c.services.integrations.connect(id, 'discord', bot.token);
      if (!connected.ok) throw connected.error;
      return id;
    });
    return { projectId, bot, guilds, members };
  }

  /**
   * Reads the suite's storage from this process: PostgreSQL through the observer, even while
   * workers run; embedded by opening the data directory, so only while no worker holds it (a
   * killed one's lock is taken over once stale).
   */
  async function withDatabase<T>(read: (database: Database) => Promise<T>): Promise<T> {
    if (observer) return read(observer);
    const database = await openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR!, lockStaleMs: 2_000 });
    try {
      return await read(database);
    } finally {
      await database.close();
    }
  }

  /** The access rows of the project by state (embedded: only while no worker holds the data directory). */
  async function rowsByState(projectId: string): Promise<{ synced: Set<string>; states: Record<string, number> }> {
    const rows = await withDatabase(async (database) =>
      rowsOf<{ user_id: string; state: string }>(await database.db.execute(sql`SELECT user_id, state FROM access WHERE project_id = ${projectId}`)),
    );
    const states: Record<string, number> = {};
    for (const r of rows) states[r.state] = (states[r.state] ?? 0) + 1;
    return { synced: new Set(rows.filter((r) => r.state === 'synced').map((r) => r.user_id)), states };
  }

  const grantsOf = (calls: readonly FakeCall[], w: World) =>
    calls.filter((c) => c.botId === w.bot.id && c.route === ROLE_CALL && c.method === 'PUT' && c.status === 204);
  const userOf = (c: FakeCall) => /\/members\/(\d+)\/roles\//.exec(c.path)![1]!;


  /** The process holding the bot's lease now, or null. */
  async function leaseOwner(projectId: string): Promise<string | null> {
    const [row] = rowsOf<{ owner: string | null }>(
      await observer!.db.execute(sql`SELECT lease_owner AS owner FROM integrations WHERE project_id = ${projectId} AND lease_expires_at > now()`),
    );
    return row?.owner ?? null;
  }

  return { env: () => env, fakes, startWorker, stop, logs, withContainer, withDatabase, world, rowsByState, grantsOf, userOf, leaseOwner };
}

/** What `useAccessProcesses` gives a file. */
export type AccessProcesses = ReturnType<typeof useAccessProcesses>;

/** Whether every member holds their guild's role on the fake. */
export function allGranted(fake: FakeDiscord, w: World): boolean {
  return w.guilds.every((g) => g.members.every((m) => fake.memberRoles(g.guildId, m)?.includes(g.roleId) ?? false));
}
