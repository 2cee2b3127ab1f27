import { randomBytes } from 'node:crypto';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { openDatabase, type Database } from '../../src/database/db.js';
import { adminQuery, onPostgres, openUnmigratedPglite } from './harness.js';

/**
 * A database nothing was applied to, on the tier's storage: an in-memory PGlite as after initdb,
 * or a new PostgreSQL database. `cleanup` closes it (and drops the PostgreSQL one).
 */
export async function emptyDatabase(): Promise<{ database: Database; cleanup: () => Promise<void> }> {
  if (!onPostgres) {
    const database = await openUnmigratedPglite();
    return { database, cleanup: () => database.close() };
  }
  const admin = process.env.DATABASE_URL!;
  const name = `tenure_empty_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(admin, `CREATE DATABASE "${name}"`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  return {
    database,
    cleanup: async () => {
      await database.close();
      await adminQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/** Applies the migrations of `migrationsFolder` alone (drizzle's migrator; not drizzle/functions.sql). */
export async function migrateHistoryOnly(database: Database, migrationsFolder: string): Promise<void> {
  if (database.kind === 'pglite') await migratePglite(database.db as never, { migrationsFolder });
  else await migratePg(database.db as never, { migrationsFolder });
}
