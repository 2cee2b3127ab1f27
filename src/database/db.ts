import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { Logger } from 'pino';
import * as schema from '../store/schema.js';
import { reportingOnce, survivingConnectionLoss } from './connection-loss.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { encloseDataDir, tightenDataDir } from './data-dir-modes.js';
import { createApart, embeddedOptions } from './embedded-start.js';
import { applyDefinitions, DEFINITIONS_FILE, definitionsPending, readDefinitions } from './definitions.js';
import { EmbeddedNotifications, PostgresNotifications, type Notifications } from './notifications.js';
import { wakingDb, Wakeups } from './wakeups.js';
import { collectUntilGone } from './collect-garbage.js';

/** The Drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export type StorageOptions =
  | {
      kind: 'pglite';
      dataDir: string;
      /** A lock not refreshed for this long is taken over (default 10 s). */
      lockStaleMs?: number;
      /** The embedded database's page cache, in MiB (default EMBEDDED_CACHE_MB). */
      cacheMb?: number;
    }
  | { kind: 'pglite-memory'; /** A dump (from `dumpDataDir`) to start from, e.g. an already-migrated database. */ seed?: Blob }
  | { kind: 'postgres'; url: string; poolSize: number };

export interface Database {
  /** What stores write through: a write of outbox rows wakes their readers after commit (`wakeups`). */
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  /** The PostgreSQL URL, for dedicated connections (LISTEN); null on embedded storage. */
  readonly url: string | null;
  /** Wake-ups after commits of events and deliveries, in this process and, on PostgreSQL, in the others. */
  readonly wakeups: Wakeups;
  /** LISTEN/NOTIFY on this database: one connection, opened at the first subscription, closed with the handle. */
  readonly notifications: Notifications;
  /**
   * Applies pending migrations, then the functions and triggers of drizzle/functions.sql if they
   * changed; safe to call from several nodes at once.
   */
  migrate(): Promise<void>;
  /** The whole embedded database as a tarball (PGlite only), for seeding test databases. */
  dump(): Promise<Blob>;
  /** True when every migration in `drizzle/` is applied, and drizzle/functions.sql too. */
  migrationsApplied(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** How long to wait for another process to release an embedded data directory (0: fail at once). */
  lockWaitMs?: number;
  /** Called if the data-directory lock is lost while open (another process could then write). */
  onLockCompromised?: (err: Error) => void;
  /** Where a lost LISTEN connection or a failed wake-up is reported. */
  logger?: Pick<Logger, 'warn'>;
}

const silent: Pick<Logger, 'warn'> = { warn: () => undefined };

/** When the instance closed by embedded storage's reopen is collected: 1, 2, 4, 8, 16 s after (collect-garbage.ts). */
const REOPEN_COLLECT = { firstMs: 1_000, tries: 5 } as const;

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));
// Any fixed number: all tenure nodes agree on it so only one migrates at a time.
const MIGRATION_LOCK_ID = 7_346_221_001;

export async function openDatabase(storage: StorageOptions, options: OpenOptions = {}): Promise<Database> {
  switch (storage.kind) {
    case 'postgres':
      return openPostgres(storage.url, storage.poolSize, options.logger ?? silent);
    case 'pglite-memory':
      return pgliteDatabase(await PGlite.create(storage.seed ? { loadDataDir: storage.seed } : {}), options);
    case 'pglite': {
      // The data directory is the owner's alone (data-dir-modes.ts): enclosed before PGlite writes
      // into it, and everything in it tightened once it is open (PGlite makes files 0666).
      const logger = options.logger ?? silent;
      await mkdir(storage.dataDir, { recursive: true, mode: 0o700 });
      await encloseDataDir(storage.dataDir, logger);
      const lock = await acquireDataDirLock(storage.dataDir, { ...options, staleMs: storage.lockStaleMs });
      try {
        const pgDir = path.join(storage.dataDir, 'pglite');
        await createApart(pgDir);
        // Each open (the first, and the reopen after migrating) writes files of its own
        // (pg_internal.init among them): the directory is tightened after each.
        const open = async () => {
          const opened = await PGlite.create(pgDir, await embeddedOptions(storage.cacheMb));
          await tightenDataDir(storage.dataDir, logger);
          return opened;
        };
        return openPglite(await open(), lock, logger, open);
      } catch (err) {
        await lock.release();
        throw err;
      }
    }
  }
}

/**
 * A database over a PGlite the caller opened (in memory, or a data directory it holds): closing it
 * closes `client`. The test harness hands one PGlite from test file to test file this way.
 */
export function pgliteDatabase(client: PGlite, options: OpenOptions = {}): Database {
  return openPglite(client, null, options.logger ?? silent);
}

/**
 * `reopen` (a data directory): after migrations were applied, the instance is closed and opened
 * again. A WebAssembly memory only grows: what the migrations made it grow to would otherwise stay
 * with the process for good; a fresh instance starts at its initial size, and a full collection
 * then frees the closed one's.
 */
function openPglite(first: PGlite, lock: DataDirLock | null, logger: Pick<Logger, 'warn'>, reopen?: () => Promise<PGlite>): Database {
  let client = first;
  let db = drizzlePglite({ client, schema }) as unknown as Db;
  // One process holds the database: wake-ups stay in it.
  const wakeups = new Wakeups((err) => logger.warn({ err }, 'wake-up failed'));
  let waking = wakingDb(db, (topics) => wakeups.written(topics));
  let notifications: EmbeddedNotifications | null = null;
  return {
    get db() {
      return waking;
    },
    kind: 'pglite',
    url: null,
    wakeups,
    get notifications() {
      return (notifications ??= new EmbeddedNotifications(client));
    },
    // One process holds the data directory (the lock), so no migration lock is needed.
    async migrate() {
      const pending = reopen !== undefined && (await pendingMigrations(db)).length > 0;
      await migratePglite(drizzlePglite({ client, schema }), { migrationsFolder });
      await applyDefinitions(db, readDefinitions(migrationsFolder));
      if (!pending) return;
      await notifications?.close();
      notifications = null;
      await client.close();
      // The closed instance's memory goes back only once V8 collects it, which at rest may not come
      // for minutes: collections from a second on, until it is gone.
      collectUntilGone(client, REOPEN_COLLECT.firstMs, REOPEN_COLLECT.tries);
      client = await reopen();
      db = drizzlePglite({ client, schema }) as unknown as Db;
      waking = wakingDb(db, (topics) => wakeups.written(topics));
    },
    migrationsApplied: () => migrationsApplied(db),
    dump: () => client.dumpDataDir('none'),
    async close() {
      await wakeups.flush();
      await notifications?.close();
      await client.close();
      await lock?.release();
    },
  };
}

/**
 * How long opening one connection may take: an unreachable database must become a prompt 503, not
 * a request that hangs.
 */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a statement may wait for a pooled connection while every one is busy. A burst (a
 * thousand Stripe events at once, a renewal run) queues behind a healthy database for longer than
 * a connection takes to open; it is served in turn, and only a queue stalled this long is a 503.
 */
const POOL_WAIT_MS = 30_000;

/** node-postgres uses one option for both waits; its clients get the connect timeout alone. */
class PromptClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

function openPostgres(url: string, poolSize: number, logger: Pick<Logger, 'warn'>): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    Client: PromptClient,
    connectionTimeoutMillis: POOL_WAIT_MS,
    application_name: 'tenure',
  });
  survivingConnectionLoss(pool, logger);
  const db = drizzlePg({ client: pool, schema }) as unknown as Db;
  let notifications: PostgresNotifications | null = null;
  const listener = () => (notifications ??= new PostgresNotifications(url, logger));
  const wakeups = new Wakeups((err) => logger.warn({ err }, 'could not notify other processes of a write; their polls will'));
  // Other processes hear of this one's writes by a NOTIFY sent after commit, on its own statement.
  wakeups.connect({
    send: async (channel, payload) => void (await pool.query('SELECT pg_notify($1, $2)', [channel, payload])),
    listen: (channel, handler) => listener().subscribe(channel, handler),
  });
  return {
    db: wakingDb(db, (topics) => wakeups.written(topics)),
    kind: 'postgres',
    url,
    wakeups,
    get notifications() {
      return listener();
    },
    async migrate() {
      const client = new pg.Client({ connectionString: url, application_name: 'tenure-migrate' });
      // A lost connection fails the migration's statements (and so the start), never the process.
      client.on('error', reportingOnce(logger, 'the migration\'s database connection was lost'));
      await client.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        const migrator = drizzlePg({ client, schema });
        await migratePg(migrator, { migrationsFolder });
        await applyDefinitions(migrator as unknown as Db, readDefinitions(migrationsFolder));
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
        await client.end();
      }
    },
    migrationsApplied: () => migrationsApplied(db),
    dump: () => Promise.reject(new Error('dump is for embedded storage only')),
    async close() {
      await wakeups.flush();
      await notifications?.close();
      await pool.end();
    },
  };
}

async function migrationsApplied(db: Db): Promise<boolean> {
  try {
    return (await pendingMigrations(db)).length === 0;
  } catch {
    return false;
  }
}

/**
 * Names of the migrations in `drizzle/` not yet applied, in order (`/readyz`, `npx tenure doctor`).
 * A database nothing was ever applied to has them all. "Applied" is decided as drizzle's migrator
 * decides what to run: a migration is applied once the newest recorded one is at least as recent
 * (the journal's `when`, recorded as `created_at`), so a shipped migration's comments can be
 * corrected without every database reporting it pending. When they are all applied but
 * drizzle/functions.sql is not (or changed since), its name.
 */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const journal = JSON.parse(readFileSync(`${migrationsFolder}/meta/_journal.json`, 'utf8')) as { entries: { tag: string; when: number }[] };
  let newest: number;
  try {
    const result = await db.execute(sql`SELECT max(created_at)::text AS newest FROM drizzle.__drizzle_migrations`);
    newest = Number(rowsOf<{ newest: string | null }>(result)[0]?.newest ?? -Infinity);
  } catch (err) {
    // 3F000: no `drizzle` schema, 42P01: no table.
    const code = (err as { cause?: { code?: string }; code?: string }).cause?.code ?? (err as { code?: string }).code;
    if (code === '3F000' || code === '42P01') return journal.entries.map((m) => m.tag);
    throw err;
  }
  const pending = journal.entries.filter((m) => m.when > newest).map((m) => m.tag);
  // Applying pending migrations applies the file too, so it is named only on its own.
  if (pending.length === 0 && (await definitionsPending(db, readDefinitions(migrationsFolder)))) return [DEFINITIONS_FILE];
  return pending;
}

/** Rows of a raw `db.execute` result; both drivers return `{ rows }`. */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

/** A text[] column as either driver returns it: an array, or (PGlite, for some casts) its literal. */
export function pgArray(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((s) => s.replace(/^"|"$/g, ''));
}

/** Rows changed by a raw `db.execute`: node-postgres says `rowCount`, PGlite `affectedRows`. */
export function affectedOf(result: unknown): number {
  const r = result as { rowCount?: number | null; affectedRows?: number };
  return r.rowCount ?? r.affectedRows ?? 0;
}
