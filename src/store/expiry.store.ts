import { sql, type SQL } from 'drizzle-orm';
import { perEndDate, queueMessage } from './message-queueing.js';
import { activeAt } from './rule-twins.js';
import { rowsOf, type Db } from '../database/db.js';
import { membershipEvent, withPlanPerRow } from './memberships.store.js';

/**
 * The expiry sweep: writes one `membership.expired` event per membership whose end date has
 * passed, and marks the row (`status = 'expired'`: "its expired event is written"), all in one
 * statement per batch. Readers never show that column: a membership reads expired from its end
 * date on, swept or not (membershipJson, docs/memberships.md "Status and expiry").
 *
 * Exactly once per expiry however many sweepers run: rows are claimed with `FOR UPDATE SKIP
 * LOCKED`, so concurrent sweeps take disjoint rows instead of waiting on each other, and the
 * UPDATE re-checks `status = 'active'` and the end date on the locked row, so a row another
 * sweeper has just marked (or an extend has just moved) is not announced. An extend afterwards
 * marks the row active again, and its next expiry is a new one.
 *
 * Set-based for large backlogs (200,000 memberships ending at one instant): the claimed rows are
 * updated by their ctid (a TID scan; the locks taken keep each ctid fixed until commit), their
 * plan and user come from per-row index lookups (withPlanPerRow), and the events go in one INSERT,
 * so the fan-out trigger on `events` runs once per batch. The event's membership is built by the
 * same `membershipJson` as the API's answer (membershipEvent).
 */

export class ExpiryStore {
  constructor(private readonly db: Db) {}

  /** Expires up to `limit` memberships ended by `now`, oldest end dates first; returns how many. */
  async expireDue(now: Date, limit: number): Promise<number> {
    // Ended: no longer active at `now` (activeAt), planned as `end_date <= now` on the sweeper's
    // index.
    const ended = (endDate: SQL) => sql`NOT ${activeAt(endDate, now)}`;
    const result = await this.db.execute(sql`
      WITH due AS (
        SELECT ctid FROM memberships
        WHERE status = 'active' AND ${ended(sql`end_date`)}
        ORDER BY end_date
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), upd AS (
        UPDATE memberships m SET status = 'expired', updated_at = now()
        WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM due)) AND m.status = 'active' AND ${ended(sql`m.end_date`)}
        RETURNING m.*
      ), full_row AS (${withPlanPerRow('upd')}), ev AS (${membershipEvent('membership.expired', now)}),
      -- The member's "it has ended" message with a Renew button (docs/lifecycle.md), once per end date.
      told AS (${queueMessage('expired', 'upd', now, perEndDate('expired'), sql`d.end_date`)})
      SELECT count(*)::int AS n FROM full_row`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
