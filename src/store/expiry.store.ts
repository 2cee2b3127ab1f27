import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from './db.js';

/**
 * The expiry sweep: active memberships whose end date has passed become `expired`, each with its
 * `membership.expired` event, in one statement. Exactly once per expiry however many nodes sweep:
 * rows are claimed with `FOR UPDATE SKIP LOCKED`, and the UPDATE re-checks `status = 'active'`
 * on the locked row, so a row another sweeper has just expired is not expired (nor announced)
 * again. An extend afterwards sets the row active again, and a later expiry is a new one.
 *
 * The membership object below must match `membershipJson` in memberships.store.ts (the API's
 * view); test/webhooks/expiry.sweeper.test.ts compares the event with the API's answer.
 */

const iso = (column: SQL) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const c = (name: string) => sql.raw(`full_row.${name}`);
const membershipJson = sql`jsonb_build_object(
  'membership_id', ${c('id')}, 'user_id', ${c('user_id')}, 'plan_id', ${c('plan_id')},
  'membership_start_date', ${iso(c('start_date'))}, 'membership_end_date', ${iso(c('end_date'))},
  'user_name', NULL, 'plan_name', ${c('plan_name')}, 'plan_duration', ${c('plan_duration')},
  'subscription_id', NULL, 'subscription_status', NULL, 'status', ${c('status')})`;

export class ExpiryStore {
  constructor(private readonly db: Db) {}

  /** Expires up to `limit` memberships ended by `now`; returns how many. `projectIds`: only those (null: all). */
  async expireDue(now: Date, limit: number, projectIds: readonly string[] | null): Promise<number> {
    const scoped = projectIds !== null;
    const result = await this.db.execute(sql`
      WITH due AS (
        SELECT id FROM memberships
        WHERE status = 'active' AND end_date <= ${now}::timestamptz
          AND (NOT ${scoped}::boolean OR project_id = ANY(${sql.param(projectIds ?? [])}::uuid[]))
        ORDER BY end_date
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), upd AS (
        UPDATE memberships m SET status = 'expired', updated_at = now()
        FROM due WHERE m.id = due.id AND m.status = 'active'
        RETURNING m.*
      ), full_row AS (
        SELECT u.*, p.name AS plan_name, p.duration AS plan_duration FROM upd u LEFT JOIN plans p ON p.id = u.plan_id
      ), ev AS (
        INSERT INTO events (project_id, type, data)
        SELECT project_id, 'membership.expired', jsonb_build_object('membership', ${membershipJson}) FROM full_row
      )
      SELECT count(*)::int AS n FROM full_row`);
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}
