import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from './db.js';
import { membershipEvent, withPlan } from './memberships.store.js';

/**
 * The expiry sweep: active memberships whose end date has passed become `expired`, each with its
 * `membership.expired` event, in one statement. Exactly once per expiry however many nodes sweep:
 * rows are claimed with `FOR UPDATE SKIP LOCKED`, and the UPDATE re-checks `status = 'active'`
 * on the locked row, so a row another sweeper has just expired is not expired (nor announced)
 * again. An extend afterwards sets the row active again, and a later expiry is a new one.
 *
 * The event's membership is built by the same `membershipJson` as the API's answer (membershipEvent).
 */

export class ExpiryStore {
  constructor(private readonly db: Db) {}

  /** Expires up to `limit` memberships ended by `now`; returns how many. */
  async expireDue(now: Date, limit: number): Promise<number> {
    const result = await this.db.execute(sql`
      WITH due AS (
        SELECT id FROM memberships
        WHERE status = 'active' AND end_date <= ${now}::timestamptz
        ORDER BY end_date
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), upd AS (
        UPDATE memberships m SET status = 'expired', updated_at = now()
        FROM due WHERE m.id = due.id AND m.status = 'active'
        RETURNING m.*
      ), full_row AS (${withPlan('upd')}), ev AS (${membershipEvent('membership.expired')})
      SELECT count(*)::int AS n FROM full_row`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
