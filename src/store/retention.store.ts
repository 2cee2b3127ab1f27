import { sql } from 'drizzle-orm';
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
  async pruneEvents(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT e.id FROM events e
        WHERE e.emitted_at < ${before}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM event_plan_queue q WHERE q.seq = e.seq)
          AND NOT EXISTS (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = e.id AND (d.status = 'pending' OR d.created_at >= ${before}::timestamptz))
        ORDER BY e.emitted_at
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM events e USING old WHERE e.id = old.id RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` Telegram updates handled before `before`; returns how many. */
  async pruneTelegramUpdates(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT project_id, bot_id, update_id FROM telegram_updates
        WHERE handled_at < ${before}::timestamptz
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM telegram_updates u USING old
        WHERE u.project_id = old.project_id AND u.bot_id = old.bot_id AND u.update_id = old.update_id
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` confirmations made before `before` and no longer pending (sent, unreachable, failed, dropped); returns how many. */
  async pruneNotifications(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT id FROM notifications
        WHERE created_at < ${before}::timestamptz AND state <> 'pending'
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM notifications n USING old WHERE n.id = old.id RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` guild joins (docs/web.md) made before `before` and settled (joined or failed); returns how many. */
  async pruneGuildJoins(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT id FROM guild_joins
        WHERE created_at < ${before}::timestamptz AND state <> 'pending'
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM guild_joins j USING old WHERE j.id = old.id RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` logins with Discord (docs/web.md) that expired before `before` unused; returns how many. */
  async pruneWebLogins(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT state_hash FROM web_logins WHERE expires_at < ${before}::timestamptz
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM web_logins l USING old WHERE l.state_hash = old.state_hash RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` pay links that expired before `before` (their done page goes with them); returns how many. */
  async prunePayLinks(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT id_hash FROM pay_links
        WHERE expires_at < ${before}::timestamptz
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM pay_links l USING old WHERE l.id_hash = old.id_hash RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }

  /** Deletes up to `batch` portal links whose link and browser session both ended before `before`; returns how many. */
  async prunePortalLinks(before: Date, batch: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT token_hash FROM portal_links
        WHERE expires_at < ${before}::timestamptz AND (session_expires_at IS NULL OR session_expires_at < ${before}::timestamptz)
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM portal_links l USING old WHERE l.token_hash = old.token_hash RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
