import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, pendingMigrations, rowsOf, type Database, type Db } from '../../src/database/db.js';
import { readDefinitions } from '../../src/database/definitions.js';
import { emptyDatabase as emptyDatabaseOf, migrateHistoryOnly as migrateHistory } from '../support/empty-database.js';

/**
 * drizzle/functions.sql is the one definition of the database's functions and triggers: a
 * migrated database holds exactly what it says (no more, no less), whatever the migrations
 * defined before, and `migrate()` keeps it so, on PGlite and on PostgreSQL.
 */

const onPostgres = process.env.TENURE_TEST_STORAGE === 'postgres';
const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));
const file = readDefinitions(migrationsFolder);
const fileText = readFileSync(`${migrationsFolder}/functions.sql`, 'utf8');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function emptyDatabase(): Promise<Database> {
  const { database, cleanup } = await emptyDatabaseOf();
  cleanups.push(cleanup);
  return database;
}

/** The migrations alone, as a database migrated before functions.sql existed has them. */
const migrateHistoryOnly = (database: Database) => migrateHistory(database, migrationsFolder);

/** Every function and trigger of the schema (extensions' aside), as PostgreSQL prints them back. */
async function definitionsOf(db: Db): Promise<Record<string, string>> {
  const result = await db.execute(sql`
    SELECT 'function ' || p.proname AS name, pg_get_functiondef(p.oid) AS def
    FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    UNION ALL
    SELECT 'trigger ' || t.tgname, pg_get_triggerdef(t.oid) || ' ENABLED ' || t.tgenabled::text
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal`);
  return Object.fromEntries(rowsOf<{ name: string; def: string }>(result).map((r) => [r.name, r.def]));
}

/** What the file defines, printed back the same way: applied in a transaction that is rolled back. */
async function definitionsOfFile(db: Db): Promise<Record<string, string>> {
  let defined: Record<string, string> = {};
  const rollback = new Error('rollback');
  await db
    .transaction(async (tx) => {
      for (const statement of file.statements) await tx.execute(sql.raw(statement));
      defined = await definitionsOf(tx as unknown as Db);
      throw rollback;
    })
    .catch((err: unknown) => {
      if (err !== rollback) throw err;
    });
  return defined;
}

const namesInFile = [...fileText.matchAll(/^CREATE OR REPLACE (FUNCTION|TRIGGER) (\w+)/gm)].map((m) => `${m[1]!.toLowerCase()} ${m[2]}`);

const recorded = async (db: Db) =>
  rowsOf<{ revision: number; hash: string }>(await db.execute(sql`SELECT revision, hash FROM drizzle.__tenure_definitions`));

describe(`drizzle/functions.sql on ${onPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('is every statement repeatable, and names each object once', () => {
    expect(file.statements.length).toBeGreaterThan(0);
    for (const statement of file.statements) {
      expect(statement.replace(/^--.*$/gm, '').trim(), 'each statement is a CREATE OR REPLACE').toMatch(/^CREATE OR REPLACE (FUNCTION|TRIGGER) /);
    }
    expect(new Set(namesInFile).size).toBe(namesInFile.length);
  });

  it('is what a database migrated before it existed holds after migrate(), and nothing else', async () => {
    const database = await emptyDatabase();
    await migrateHistoryOnly(database);
    // Readiness and `tenure doctor` report the file until migrate() has applied it.
    expect(await pendingMigrations(database.db)).toEqual(['functions.sql']);
    expect(await database.migrationsApplied()).toBe(false);

    await database.migrate();
    expect(await pendingMigrations(database.db)).toEqual([]);
    const live = await definitionsOf(database.db);
    expect(Object.keys(live).sort(), 'every function and trigger of the database is in the file').toEqual([...namesInFile].sort());
    expect(live).toEqual(await definitionsOfFile(database.db));
    expect(await recorded(database.db)).toEqual([{ revision: file.revision, hash: file.hash }]);
  });

  it('migrations count as applied as drizzle applies them: by their journal time, whatever their file hash', async () => {
    const database = await emptyDatabase();
    await database.migrate();
    // A shipped migration whose comments were corrected: its recorded hash no longer matches.
    await database.db.execute(sql`UPDATE drizzle.__drizzle_migrations SET hash = 'before-a-comment-was-corrected'`);
    expect(await pendingMigrations(database.db)).toEqual([]);
    // A migration not yet run is still named.
    const journal = JSON.parse(readFileSync('drizzle/meta/_journal.json', 'utf8')) as { entries: { tag: string; when: number }[] };
    const last = journal.entries.at(-1)!;
    await database.db.execute(sql`DELETE FROM drizzle.__drizzle_migrations WHERE created_at = ${last.when}`);
    expect(await pendingMigrations(database.db)).toEqual([last.tag]);
  });

  it('is applied to a new database too, migrations first', async () => {
    const database = await emptyDatabase();
    expect(await pendingMigrations(database.db)).toContain('0000_init');
    expect(await pendingMigrations(database.db)).not.toContain('functions.sql');
    await database.migrate();
    expect(await database.migrationsApplied()).toBe(true);
    expect(await definitionsOf(database.db)).toEqual(await definitionsOfFile(database.db));
  });

  it('puts back a definition changed since, and leaves one applied by a newer revision', async () => {
    const database = await emptyDatabase();
    await database.migrate();
    const expected = await definitionsOf(database.db);
    const tamper = () =>
      database.db.execute(sql`CREATE OR REPLACE FUNCTION tenure_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);

    // This file changed since the database applied it (another hash of the same revision).
    await tamper();
    await database.db.execute(sql`UPDATE drizzle.__tenure_definitions SET hash = 'older'`);
    expect(await pendingMigrations(database.db)).toEqual(['functions.sql']);
    await database.migrate();
    expect(await definitionsOf(database.db)).toEqual(expected);

    // A node running older code, after a newer revision was applied: it changes nothing.
    await tamper();
    await database.db.execute(sql`UPDATE drizzle.__tenure_definitions SET revision = revision + 1, hash = 'newer'`);
    expect(await pendingMigrations(database.db)).toEqual([]);
    await database.migrate();
    expect((await definitionsOf(database.db))['function tenure_events_inserted']).not.toEqual(expected['function tenure_events_inserted']);
    expect(await recorded(database.db)).toEqual([{ revision: file.revision + 1, hash: 'newer' }]);
  });

  it('is applied without conflict when several nodes migrate at the same time', async () => {
    const database = await emptyDatabase();
    await migrateHistoryOnly(database);
    // PostgreSQL: three nodes, each its own connection. PGlite: one process holds the database, so
    // three migrations at once on its one connection (the server's and a CLI's, say).
    const opened = database.url
      ? await Promise.all([1, 2, 3].map(() => openDatabase({ kind: 'postgres', url: database.url!, poolSize: 1 })))
      : [];
    const nodes = opened.length > 0 ? opened : [database, database, database];
    try {
      await Promise.all(nodes.map((node) => node.migrate()));
    } finally {
      await Promise.all(opened.map((node) => node.close()));
    }
    expect(await pendingMigrations(database.db)).toEqual([]);
    expect(await definitionsOf(database.db)).toEqual(await definitionsOfFile(database.db));
  });
});
