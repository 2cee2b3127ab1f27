import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';

/**
 * What history is pruned, and how (docs/operations.md, "Retention"): events older than the
 * retention, with their stored webhook bodies, deliveries and attempts (deleted with the event
 * by the trigger tenure_event_cascade, drizzle/functions.sql; attempts cascade from their
 * delivery), the Telegram updates handled before it, and the members' pay and portal links that
 * ended before it. A batch takes the oldest events first
 * (`events_emitted_idx`) and leaves alone any event still in use: one the access planner has not
 * read, one with a delivery still pending, or one delivered again (a replay) within the
 * retention. Rows another node is pruning are skipped (SKIP LOCKED), so nodes never wait on each
 * other, and a batch holds few locks for a short time.
 */
export class RetentionStore {
  constructor(private readonly db: Db) {}

  /** Deletes up to `batch` events emitted before `before` (and what hangs on them); returns how many. */
  pruneEvents(before: Date, batch: number): Promise<number> {
    return this.pruneBatch(
      {
        table: 'events',
        key: ['id'],
        where: sql`t.emitted_at < ${before}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM event_plan_queue q WHERE q.seq = t.seq)
          AND NOT EXISTS (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = t.id AND (d.status = 'pending' OR d.created_at >= ${before}::timestamptz))`,
        orderBy: sql`t.emitted_at`,
      },
      batch,
    );
  }

  /** Deletes up to `batch` Telegram updates handled before `before`; returns how many. */
  pruneTelegramUpdates(before: Date, batch: number): Promise<number> {
    return this.pruneBatch({ table: 'telegram_updates', key: ['project_id', 'bot_id', 'update_id'], where: sql`t.handled_at < ${before}::timestamptz` }, batch);
  }

  /** Deletes up to `batch` confirmations made before `before` and no longer pending (sent, unreachable, failed, dropped); returns how many. */
  pruneNotifications(before: Date, batch: number): Promise<number> {
    return this.pruneBatch({ table: 'notifications', key: ['id'], where: sql`t.created_at < ${before}::timestamptz AND t.state <> 'pending'` }, batch);
  }

  /** Deletes up to `batch` guild joins (docs/web.md) made before `before` and settled (joined or failed); returns how many. */
  pruneGuildJoins(before: Date, batch: number): Promise<number> {
    return this.pruneBatch({ table: 'guild_joins', key: ['id'], where: sql`t.created_at < ${before}::timestamptz AND t.state <> 'pending'` }, batch);
  }

  /** Deletes up to `batch` logins with Discord (docs/web.md) that expired before `before` unused; returns how many. */
  pruneWebLogins(before: Date, batch: number): Promise<number> {
    return this.pruneBatch({ table: 'web_logins', key: ['state_hash'], where: sql`t.expires_at < ${before}::timestamptz` }, batch);
  }

  /** Deletes up to `batch` pay links that expired before `before` (their done page goes with them); returns how many. */
  prunePayLinks(before: Date, batch: number): Promise<number> {
    return this.pruneBatch({ table: 'pay_links', key: ['id_hash'], where: sql`t.expires_at < ${before}::timestamptz` }, batch);
  }

  /** Deletes up to `batch` portal links whose link and browser session both ended before `before`; returns how many. */
  prunePortalLinks(before: Date, batch: number): Promise<number> {
    return this.pruneBatch(
      {
        table: 'portal_links',
        key: ['token_hash'],
        where: sql`t.expires_at < ${before}::timestamptz AND (t.session_expires_at IS NULL OR t.session_expires_at < ${before}::timestamptz)`,
      },
      batch,
    );
  }

  /**
   * One batch of a table's pruning, in one statement: up to `batch` rows (`t`) matching `where`,
   * skipping those another node has locked, are deleted by their key; answers how many.
   */
  private async pruneBatch(what: { table: string; key: readonly string[]; where: SQL; orderBy?: SQL }, batch: number): Promise<number> {
    const table = sql.identifier(what.table);
    const key = sql.join(
      what.key.map((k) => sql`t.${sql.identifier(k)}`),
      sql`, `,
    );
    const sameKey = sql.join(
      what.key.map((k) => sql`x.${sql.identifier(k)} = old.${sql.identifier(k)}`),
      sql` AND `,
    );
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT ${key} FROM ${table} t
        WHERE ${what.where}
        ${what.orderBy ? sql`ORDER BY ${what.orderBy}` : sql``}
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM ${table} x USING old WHERE ${sameKey} RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
