import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from './db.js';

/**
 * The database's functions and triggers, defined once in drizzle/functions.sql (its header says
 * how to change them) and applied by `database.migrate()` after the migrations, like Flyway's
 * repeatable migrations: whenever the file differs from what the database last applied. The
 * migrations that first created them stay as shipped; the file has the last word.
 */

export const DEFINITIONS_FILE = 'functions.sql';

export interface Definitions {
  /** From the file's `-- revision: N` line; raised with every change. */
  revision: number;
  hash: string;
  statements: string[];
}

type Applied = { revision: number; hash: string } | null;

export function readDefinitions(migrationsFolder: string): Definitions {
  const text = readFileSync(`${migrationsFolder}/${DEFINITIONS_FILE}`, 'utf8');
  const revision = /^-- revision: (\d+)$/m.exec(text)?.[1];
  if (!revision) throw new Error(`${DEFINITIONS_FILE} has no "-- revision: N" line`);
  return {
    revision: Number(revision),
    hash: createHash('sha256').update(text).digest('hex'),
    statements: text.split('--> statement-breakpoint').map((s) => s.trim()).filter((s) => s.length > 0),
  };
}

/**
 * True when the file should be applied: never applied, or changed. A database a newer revision
 * was applied to is left alone, so a node still running older code (a rolling deploy) does not
 * put its older functions back. The same revision with another hash is a change made without
 * raising the revision (while developing): applied too.
 */
function needsApply(applied: Applied, file: Definitions): boolean {
  if (!applied) return true;
  if (applied.revision !== file.revision) return applied.revision < file.revision;
  return applied.hash !== file.hash;
}

async function readApplied(db: Db): Promise<Applied> {
  const result = await db.execute(
    sql`SELECT revision, hash FROM drizzle.__tenure_definitions WHERE name = ${DEFINITIONS_FILE} FOR UPDATE`,
  );
  return rowsOf<{ revision: number; hash: string }>(result)[0] ?? null;
}

/**
 * Applies the file in one transaction if it needs applying. Called after the migrations; on
 * PostgreSQL under the migration lock, so concurrent nodes apply it once.
 */
export async function applyDefinitions(db: Db, file: Definitions): Promise<void> {
  await db.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
  await db.execute(sql`
    CREATE TABLE IF NOT EXISTS drizzle.__tenure_definitions (
      name text PRIMARY KEY, revision integer NOT NULL, hash text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  await db.transaction(async (tx) => {
    if (!needsApply(await readApplied(tx), file)) return;
    for (const statement of file.statements) await tx.execute(sql.raw(statement));
    await tx.execute(sql`
      INSERT INTO drizzle.__tenure_definitions (name, revision, hash) VALUES (${DEFINITIONS_FILE}, ${file.revision}, ${file.hash})
      ON CONFLICT (name) DO UPDATE SET revision = excluded.revision, hash = excluded.hash, applied_at = now()`);
  });
}

/** True when `migrate()` would apply the file (readiness and `tenure doctor`). */
export async function definitionsPending(db: Db, file: Definitions): Promise<boolean> {
  try {
    const result = await db.execute(sql`SELECT revision, hash FROM drizzle.__tenure_definitions WHERE name = ${DEFINITIONS_FILE}`);
    return needsApply(rowsOf<{ revision: number; hash: string }>(result)[0] ?? null, file);
  } catch (err) {
    // 3F000: no `drizzle` schema, 42P01: no table: never applied.
    const code = (err as { cause?: { code?: string }; code?: string }).cause?.code ?? (err as { code?: string }).code;
    if (code === '3F000' || code === '42P01') return true;
    throw err;
  }
}
