import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContainer, type Container, type ContainerOptions } from '../../src/container.js';
import type { Services } from '../../src/services.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Database, type StorageOptions } from '../../src/database/db.js';
import { borrowPglite, dumpAt } from './pglite-pool.js';
import { systemResolver, type Resolver } from '../../src/webhooks/ssrf-guard.js';
import { startFakeDiscord, type FakeDiscord, type FakeDiscordOptions } from './fake-discord.js';
import { startFakeStripe, type FakeStripe } from './fake-stripe.js';
import { startFakeTelegram, type FakeTelegram, type FakeTelegramOptions } from './fake-telegram.js';

/**
 * The test harness: the real app in-process (`app.inject`) on a real database of its own — an
 * in-memory PGlite started from a migrated dump, or, when the suite runs on PostgreSQL, a database
 * cloned from this run's migrated template and dropped on close. Nothing is shared between
 * harnesses, so production code needs no test-only scoping. Every test seeds its own project and
 * key (`harness.tenant()`).
 */

export const onPostgres = process.env.TENURE_TEST_STORAGE === 'postgres';

/** A fresh database for one harness, and how to get rid of it. */
export interface TestDatabase {
  storage: StorageOptions;
  /** Drops the database (PostgreSQL); call after every connection to it is closed. */
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!onPostgres) {
    const seed = await dumpAt(inject('pgliteSeed'));
    return { storage: { kind: 'pglite-memory', seed }, drop: async () => undefined };
  }
  // Copying the template costs a few hundred milliseconds, mostly the server's fsyncs: each worker
  // copies the next file's database while this one's tests run. One made and never used is
  // dropped with the rest by the run's teardown (every name has the run's prefix).
  // (A worker serves one project's files, whose template it is; checked all the same.)
  const template = inject('pgTemplate');
  const copy = nextCopy?.template === template ? nextCopy.database : copyTemplate(template);
  nextCopy = { template, database: copyTemplate(template) };
  nextCopy.database.catch(() => undefined);
  return copy;
}

let nextCopy: { template: string; database: Promise<TestDatabase> } | undefined;

async function copyTemplate(template: string): Promise<TestDatabase> {
  const admin = inject('pgAdminUrl');
  const name = `${inject('pgPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    storage: { kind: 'postgres', url: url.toString(), poolSize: 5 },
    drop: () => adminQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * An in-memory PGlite database nothing was applied to, as after initdb (tests of migrating, of
 * readiness before it): loaded from a dump of one, which costs a fraction of an initdb.
 */
export async function openUnmigratedPglite(): Promise<Database> {
  return openDatabase({ kind: 'pglite-memory', seed: await dumpAt(inject('pgliteEmptySeed')) });
}

/** An in-memory PGlite database migrated as the harness's are, whatever the tier's storage. */
export async function openMigratedPglite(): Promise<Database> {
  return openDatabase({ kind: 'pglite-memory', seed: await dumpAt(inject('pgliteSeed')) });
}

/** Runs one statement on its own connection to `url` (creating and dropping databases). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface Tenant {
  projectId: string;
  key: string;
  keyId: string;
  headers: { authorization: string };
  /** Sends a request with this tenant's key (override `headers` to change or drop it). */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** `/v2/projects/<projectId>` */
  base: string;
}

export interface Harness {
  app: FastifyInstance;
  container: Container;
  database: Database;
  /** Where `database` is: another "node" opens the same PostgreSQL database with it. */
  storage: StorageOptions;
  /** The PostgreSQL URL of `database` (child-process nodes get it as DATABASE_URL); null on PGlite. */
  databaseUrl: string | null;
  services: Services;
  config: Config;
  /** A fake Discord of this harness's own, which the app calls (TENURE_DISCORD_API_URL) unless `env` names another. */
  discord: FakeDiscord;
  /** A fake Telegram Bot API of this harness's own, which the app calls (TENURE_TELEGRAM_API_URL) unless `env` names another. */
  telegram: FakeTelegram;
  /** A fake Stripe API of this harness's own, which the app calls (TENURE_STRIPE_API_URL) unless `env` names another. */
  stripe: FakeStripe;
  tenant(): Promise<Tenant>;
  /**
   * Empties every table of the harness's database (all but the migrations and the instance's own
   * secrets), for files whose tests each need the whole database to themselves: a worker or a
   * sweeper acts on everything that is due, and the clock of one test must not make another's due.
   */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<Pick<ContainerOptions, 'clock' | 'resolve' | 'logger'>> {
  env?: Record<string, string>;
  /** Options of the harness's fake Discord (its limits, latency). */
  discord?: FakeDiscordOptions;
  /** Options of the harness's fake Telegram (its limits, latency). */
  telegram?: FakeTelegramOptions;
}

/**
 * The encryption key of every test configuration, on both storages (PostgreSQL has no key of its
 * own), and for child-process nodes sharing a harness's database. `TENURE_ENCRYPTION_KEY: ''`
 * in `env` unsets it.
 */
export const TEST_ENCRYPTION_KEY = 'dGVudXJlIHRlc3QgZW5jcnlwdGlvbiBrZXkgMzIgYiE=';

/** The test configuration: injected requests all come from one address, so limits are raised unless a test sets its own. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    TENURE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    TENURE_WEBHOOK_ALLOW_PRIVATE: 'false',
    TENURE_RATE_LIMIT_KEY: '1000000000',
    TENURE_RATE_LIMIT_IP: '1000000000',
    TENURE_RATE_LIMIT_BURST: '1000000000',
    ...env,
  });
}

/**
 * An app built as the server builds it, on a database the caller opened and closes (another node
 * sharing a harness's database, or a database a test takes away). `close()` leaves the database open.
 */
export async function appOn(
  database: Database,
  config: Config,
  logger = createLogger('silent'),
): Promise<{ app: FastifyInstance; container: Container; close(): Promise<void> }> {
  const container = await createContainer({ config, logger, database });
  await container.listen();
  const app = await buildApp(container);
  await app.ready();
  return {
    app,
    container,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

/**
 * Empties every table but the instance's secrets, in one statement. DELETE, not TRUNCATE: for the
 * handful of rows a test leaves, TRUNCATE's fixed cost per table (new files for each of ~30
 * tables and their indexes, synced at commit) was 110-150 ms a reset on PostgreSQL against ~2 ms.
 * Foreign keys and tenure's own triggers are off for it (session_replication_role = replica,
 * local to the statement's transaction: a superuser's setting, as the test databases' user is),
 * so the order of the tables does not matter: every table ends empty either way.
 */
const RESET_TABLES = sql`
  DO $$ DECLARE t text; BEGIN
    SET LOCAL session_replication_role = replica;
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'instance_secrets' LOOP
      EXECUTE format('DELETE FROM %I', t);
    END LOOP;
  END $$`;

/**
 * How a harness resolves webhook hosts unless a test passes its own: the tests' names under
 * example.com (reserved for documentation) do not resolve, answered here at once as DNS answers
 * them, and other names go to the system. Asking the machine's DNS made tests wait out the SSRF
 * guard's 5 s timeout whenever an answer was lost.
 */
const exampleResolver: Resolver = async (hostname) => {
  if (/(^|\.)example\.com$/i.test(hostname)) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return systemResolver(hostname);
};

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const discord = await startFakeDiscord(options.discord);
  const telegram = await startFakeTelegram(options.telegram);
  const stripe = await startFakeStripe();
  const config = testConfig({ TENURE_DISCORD_API_URL: discord.url, TENURE_TELEGRAM_API_URL: telegram.url, TENURE_STRIPE_API_URL: stripe.url, ...options.env });
  const testDb = await createTestDatabase();
  const logger = options.logger ?? createLogger('silent');
  // On PGlite the harness lends the container a database (which it then does not close).
  const lent = onPostgres ? undefined : await borrowPglite(logger);
  const container = await createContainer({
    config,
    logger,
    ...(lent ? { database: lent } : { storage: testDb.storage }),
    clock: options.clock,
    resolve: options.resolve ?? exampleResolver,
  });
  await container.listen();
  const app = await buildApp(container);
  await app.ready();
  const { services, database } = container;
  return {
    app,
    container,
    database,
    storage: testDb.storage,
    databaseUrl: testDb.storage.kind === 'postgres' ? testDb.storage.url : null,
    services,
    config,
    discord,
    telegram,
    stripe,
    async tenant() {
      const project = await services.projects.createProject(`test ${randomUUID()}`);
      if (!project.ok) throw project.error;
      const key = await services.projects.createKey(project.value.id, 'test', 'test');
      if (!key.ok) throw key.error;
      const headers = { authorization: `Bearer ${key.value.key}` };
      return {
        projectId: project.value.id,
        key: key.value.key,
        keyId: key.value.metadata.id,
        headers,
        base: `/v2/projects/${project.value.id}`,
        request: (o) => app.inject({ ...o, headers: { ...headers, ...o.headers } }),
      };
    },
    async reset() {
      await database.db.execute(RESET_TABLES);
    },
    async close() {
      await app.close();
      await container.close();
      await lent?.close();
      await testDb.drop();
      await discord.close();
      await telegram.close();
      await stripe.close();
    },
  };
}

/**
 * A test file's one line of set-up (`const h = useHarness()`): the harness is created before the
 * file's (or the enclosing describe's) tests and closed after them. `h` stands for it inside tests
 * and hooks; touching it outside them is a mistake and says so.
 */
export function useHarness(options: HarnessOptions = {}): Harness {
  let current: Harness | undefined;
  beforeAll(async () => {
    current = await createHarness(options);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as Harness, {
    get(_target, property) {
      if (!current) throw new Error('useHarness(): the harness exists inside tests and hooks only');
      const value: unknown = Reflect.get(current, property);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

/** A future instant `days` from now, in both accepted forms. */
export function future(days = 30): { ms: number; iso: string } {
  const ms = Date.now() + days * 86_400_000;
  return { ms, iso: new Date(ms).toISOString() };
}

/** A random numeric user id, Discord-style. */
export const userId = (): string => String(100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
