import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';

/** What the database counted of one table since its last vacuum and analyze (`pg_stat_all_tables`). */
export interface TableActivity {
  schema: string;
  table: string;
  live: number;
  /** Row versions updated or deleted away and not yet vacuumed. */
  dead: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
  /** Transactions since the table's oldest unfrozen row (`age(relfrozenxid)`). */
  xidAge: number;
}

/**
 * The vacuuming of embedded storage (docs/operations.md, "Embedded storage maintenance"): what
 * the database counted of each table, and VACUUM / ANALYZE of one table per statement. VACUUM
 * cannot run in a transaction: these run as plain statements on the database handle, never on a
 * transaction's (PGlite queues a plain statement behind any transaction in progress).
 */
export class MaintenanceStore {
  constructor(private readonly db: Db) {}

  /**
   * Every table's counts: tenure's own and the catalogs' (ANALYZE rewrites pg_statistic rows),
   * not TOAST tables (vacuumed with their table) nor information_schema.
   */
  async tableActivity(): Promise<TableActivity[]> {
    // A backend hands its counts over at the end of a statement, at most once a second unless
    // asked: this asks, so the next statement reads the writes up to now.
    await this.db.execute(sql`SELECT pg_stat_force_next_flush()`);
    const result = await this.db.execute(sql`
      SELECT s.schemaname AS schema, s.relname AS "table",
             s.n_live_tup::float8 AS live, s.n_dead_tup::float8 AS dead,
             s.n_ins_since_vacuum::float8 AS "insertedSinceVacuum",
             s.n_mod_since_analyze::float8 AS "modifiedSinceAnalyze",
             age(c.relfrozenxid)::float8 AS "xidAge"
      FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE c.relkind IN ('r', 'm') AND s.schemaname NOT IN ('pg_toast', 'information_schema')`);
    return rowsOf<TableActivity>(result);
  }

  /** Plain VACUUM (never FULL, which rewrites the table under an exclusive lock) of one table. */
  async vacuum(schema: string, table: string): Promise<void> {
    await this.db.execute(sql`VACUUM ${sql.identifier(schema)}.${sql.identifier(table)}`);
  }

  async analyze(schema: string, table: string): Promise<void> {
    await this.db.execute(sql`ANALYZE ${sql.identifier(schema)}.${sql.identifier(table)}`);
  }
}
