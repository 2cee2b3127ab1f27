import { sql, type SQL } from 'drizzle-orm';
import { queueMessage } from './message-queueing.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import { statusAt } from './rule-twins.js';
import { membershipWhere, SORTS, type MembershipFilter } from './membership-queries.js';
import { isWholeProject, projectMembershipTotal } from './membership-counts.js';
import { afterListKey, keyText, pageOf, type ListKey } from './keyset.js';
import { rowsOf, type Db } from '../database/db.js';
import { insertEvent } from './outbox.js';
import { preparedStatement } from '../database/prepared.js';
import { WriteBatcher } from '../database/write-batcher.js';
import { iso } from '../database/sql.js';

/**
 * Memberships and their outbox rows. Every write is one statement (or one transaction) that also
 * inserts its event, so a change and its event commit together or not at all. The hot paths are
 * single round trips: a CTE locks, updates, and writes the event.
 */

export interface ExtendedMembership {
  /** The end date before the change, as the API shows instants. */
  previousEndDate: string;
}


/**
 * A membership as the API and events show it, built in SQL: the event is written in the same
 * statement as the change, and the API returns the very same object, so the two cannot drift.
 * `alias` names a relation with the memberships columns plus plan_name, plan_duration,
 * user_first_name and user_username (see withPlan). `user_name` is null when neither is known.
 *
 * `status` is derived from the end date against `now`, the app's clock (statusAt,
 * src/store/rule-twins.ts; docs/memberships.md "Status and expiry"): a membership reads `expired`
 * from the instant its end date passes, whether or not the sweeper has written its
 * `membership.expired` event yet. The stored `status` column is the sweeper's marker only and is
 * never shown.
 */
export const membershipJson = (alias: string, now: Date | SQL) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  return sql<MembershipView>`jsonb_build_object(
    'membership_id', ${c('id')}, 'user_id', ${c('user_id')}, 'plan_id', ${c('plan_id')},
    'membership_start_date', ${iso(c('start_date'))}, 'membership_end_date', ${iso(c('end_date'))},
    'user_name', CASE WHEN ${c('user_first_name')} IS NULL AND ${c('user_username')} IS NULL THEN NULL
                 ELSE jsonb_build_object('first_name', ${c('user_first_name')}, 'username', ${c('user_username')}) END,
    'plan_name', ${c('plan_name')}, 'plan_duration', ${c('plan_duration')},
    'subscription_id', ${c('subscription_id')}, 'subscription_status', ${c('subscription_status')},
    'status', ${statusAt(c('end_date'), now)})
    || CASE WHEN ${c('trial_ends_at')} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(
         'trial_ends_at', ${iso(c('trial_ends_at'))},
         'in_trial', ${statusAt(c('end_date'), now)} = 'active' AND ${c('end_date')} <= ${c('trial_ends_at')}) END`;
};

/** What `GET /memberships` may ask for (docs/memberships.md, "Listing and filtering"). */
/**
 * Joins the plan and user columns the view copies onto rows of the CTE `source`. `users` names the
 * relation holding the user rows: a statement that writes the user row itself passes its own CTE,
 * since a statement does not see its own writes through the table.
 */
export const withPlan = (source: string, users = 'users') =>
  sql.raw(
    `SELECT s.*, p.name AS plan_name, p.duration AS plan_duration, u.first_name AS user_first_name, u.username AS user_username
     FROM ${source} s LEFT JOIN plans p ON p.id = s.plan_id
     LEFT JOIN ${users} u ON u.project_id = s.project_id AND u.user_id = s.user_id`,
  );

/**
 * withPlan for large batches of rows read from the tables (the expiry sweep): one index lookup per
 * row. Given a CTE of thousands of rows the planner prefers hashing the whole users table, which
 * for 10,000 rows of a 200,000-member project took longer than the lookups and grows with the
 * project; `LIMIT 1` keeps each lateral subquery a per-row lookup (a plain join would be flattened
 * back into the hash join).
 */
export const withPlanPerRow = (source: string) =>
  sql.raw(
    `SELECT s.*, p.name AS plan_name, p.duration AS plan_duration, u.first_name AS user_first_name, u.username AS user_username
     FROM ${source} s
     LEFT JOIN LATERAL (SELECT name, duration FROM plans WHERE plans.id = s.plan_id LIMIT 1) p ON true
     LEFT JOIN LATERAL (SELECT first_name, username FROM users
                        WHERE users.project_id = s.project_id AND users.user_id = s.user_id LIMIT 1) u ON true`,
  );

/** One event of `type` per row of `full_row` (see withPlan), carrying that membership as of `now`. */
export const membershipEvent = (type: 'membership.created' | 'membership.expired' | 'membership.deleted', now: Date) =>
  insertEvent(type, { projectId: sql`project_id`, data: { membership: membershipJson('full_row', now) }, from: sql`FROM full_row` });

/**
 * One `membership.extended` event per row of `full_row` (see withPlan), whose `previous_end_date`
 * column holds the end date before the change: the membership as of `now` and that date.
 */
export const extendedEvent = (now: Date | SQL) =>
  insertEvent('membership.extended', {
    projectId: sql`project_id`,
    data: { membership: membershipJson('full_row', now), previous_end_date: iso(sql`full_row.previous_end_date`) },
    from: sql`FROM full_row`,
  });

/**
 * The statement of extendOne, the API's most frequent write, for a batch of members of one project
 * (WriteBatcher, below): `members` is a JSON array of `{ user_id, end_date }`, distinct user ids.
 * Prepared (src/database/prepared.ts), since planning this CTE cost the database about as much as
 * running it. The rows are locked in user_id order, the order the bulk extend's batches lock
 * them in, so two statements sharing members wait for each other instead of deadlocking; `= ANY`
 * keeps the lookup an index scan of memberships_project_user_key whatever the batch's size (a
 * generic plan does not know it). Each member gets its own `membership.extended` event, with the
 * end date its own row had.
 */
const extendStatement = preparedStatement<{ projectId: string; members: string; now: string }>(
  'tenure_membership_extend',
  (p) => sql`
      WITH req AS (
        SELECT r.user_id, r.end_date FROM jsonb_to_recordset(${p.members}::jsonb) AS r(user_id text, end_date timestamptz)
      ), old AS (
        SELECT m.id, m.end_date, req.end_date AS new_end_date
        FROM memberships m JOIN req ON req.user_id = m.user_id
        WHERE m.project_id = ${p.projectId} AND m.user_id = ANY (ARRAY(SELECT user_id FROM req))
        ORDER BY m.user_id
        FOR UPDATE OF m
      ), upd AS (
        UPDATE memberships m SET end_date = old.new_end_date, status = 'active', updated_at = now()
        FROM old WHERE m.id = old.id
        RETURNING m.*, old.end_date AS previous_end_date
      ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(p.now)})
      SELECT full_row.user_id, ${iso(sql.raw('full_row.previous_end_date'))} AS previous_end_date FROM full_row`,
);

/** One member's extend, as the batcher holds it. */
interface MemberExtend {
  userId: string;
  endDate: Date;
}

/**
 * Extend statements of one project running at once per process, beyond which the project's
 * concurrent extends wait and then go in one statement (src/database/write-batcher.ts): one on
 * PGlite, which runs one statement at a time anyway; two on PostgreSQL (docs/memberships.md,
 * "Extending one member").
 */
export const EXTEND_IN_FLIGHT = { pglite: 1, postgres: 2 } as const;
/** Members in one extend statement at most. */
export const EXTEND_BATCH = 64;

export interface NewMembership {
  userId: string;
  endDate: Date;
  planId: string | null;
  /** Names to record for the user; a field left out keeps the stored one. */
  userName?: { first_name?: string | null; username?: string | null };
}

/**
 * The store is given the app's clock (src/domain/clock.ts) because every membership object it
 * builds, answers and events alike, shows the status as of that clock: the clock the services
 * validate end dates with and the sweeper expires by, so a test's fake clock moves all three.
 */
export class MembershipsStore {
  private readonly extends: WriteBatcher<MemberExtend, ExtendedMembership | null>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
    /** Extend statements of one project running at once (EXTEND_IN_FLIGHT); one by default. */
    extendsInFlight = 1,
  ) {
    this.extends = new WriteBatcher({
      maxInFlight: extendsInFlight,
      maxBatch: EXTEND_BATCH,
      identity: (m) => m.userId,
      run: (projectId, members) => this.extendMembers(projectId, members),
    });
  }

  /**
   * Sets one member's end date and reactivates them; null when the user has no membership. Runs
   * in one statement with the project's other extends waiting at the time (WriteBatcher), each
   * with its own event and its own previous end date.
   */
  extendOne(projectId: string, userId: string, endDate: Date): Promise<ExtendedMembership | null> {
    return this.extends.submit(projectId, { userId, endDate });
  }

  private async extendMembers(projectId: string, members: readonly MemberExtend[]): Promise<(ExtendedMembership | null)[]> {
    const json = JSON.stringify(members.map((m) => ({ user_id: m.userId, end_date: m.endDate.toISOString() })));
    const result = await extendStatement.execute(this.db, { projectId, members: json, now: this.clock.now().toISOString() });
    // The API answers with the new date only; the membership itself goes out in the event.
    const previous = new Map(rowsOf<{ user_id: string; previous_end_date: string }>(result).map((r) => [r.user_id, r.previous_end_date]));
    return members.map((m) => {
      const previousEndDate = previous.get(m.userId);
      return previousEndDate === undefined ? null : { previousEndDate };
    });
  }

  /**
   * Inserts a membership with its `membership.created` event and records the user (their names
   * when given: a field left out keeps its stored value), all in one statement. Nothing is written
   * when the user is banned or already has a membership; the outcome says which.
   */
  async create(projectId: string, input: NewMembership): Promise<MembershipView | 'banned' | 'exists'> {
    const name = input.userName ?? {};
    const now = this.clock.now();
    const result = await this.db.execute(sql`
      WITH banned AS (
        SELECT EXISTS (SELECT 1 FROM bans WHERE project_id = ${projectId} AND user_id = ${input.userId}) AS yes
      ), ins AS (
        INSERT INTO memberships (project_id, user_id, plan_id, end_date)
        SELECT ${projectId}::uuid, ${input.userId}::text, ${input.planId}::uuid, ${input.endDate}::timestamptz
        FROM banned WHERE NOT banned.yes
        ON CONFLICT (project_id, user_id) DO NOTHING
        RETURNING *
      ), usr AS (
        INSERT INTO users (project_id, user_id, first_name, username)
        SELECT project_id, user_id, ${name.first_name ?? null}::text, ${name.username ?? null}::text FROM ins
        ON CONFLICT (project_id, user_id) DO UPDATE SET
          first_name = CASE WHEN ${'first_name' in name}::boolean THEN excluded.first_name ELSE users.first_name END,
          username = CASE WHEN ${'username' in name}::boolean THEN excluded.username ELSE users.username END,
          last_seen = now()
        RETURNING project_id, user_id, first_name, username
      ), full_row AS (${withPlan('ins', 'usr')}), ev AS (${membershipEvent('membership.created', now)}),
      -- The member's welcome (docs/lifecycle.md): once per member and project, for life.
      welcome AS (${queueMessage('welcome', 'ins', now, sql`'welcome:' || d.user_id`)})
      SELECT (SELECT ${membershipJson('full_row', now)} FROM full_row) AS membership, (SELECT yes FROM banned) AS banned`);
    const row = rowsOf<{ membership: MembershipView | null; banned: boolean }>(result)[0]!;
    if (row.membership) return row.membership;
    return row.banned ? 'banned' : 'exists';
  }

  async get(projectId: string, membershipId: string): Promise<MembershipView | null> {
    const result = await this.db.execute(sql`
      SELECT ${membershipJson('full_row', this.clock.now())} AS membership FROM (${withPlan('memberships')}) full_row
      WHERE full_row.project_id = ${projectId} AND full_row.id = ${membershipId}`);
    return rowsOf<{ membership: MembershipView }>(result)[0]?.membership ?? null;
  }

  /**
   * A page of the project's memberships matching `filter` (docs/memberships.md, "Listing and
   * filtering"), in `filter.sort` order (newest first by default), ties broken by id so pages are
   * stable, with the count of all that match (a list of the whole project reads its kept count:
   * src/store/membership-counts.ts). Every filter and order is served by an index:
   * memberships_project_created_idx, memberships_project_end_idx and memberships_project_plan_end_idx.
   */
  async list(projectId: string, filter: MembershipFilter): Promise<{ items: MembershipView[]; total: number }> {
    const now = this.clock.now();
    const where = membershipWhere(projectId, filter, now);
    const [column, direction] = SORTS[filter.sort ?? '-created_at'];
    const order = sql.raw(`${column} ${direction}, id ${direction}`);
    const [page, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${membershipJson('full_row', now)} AS membership FROM (
          SELECT m.*, p.name AS plan_name, p.duration AS plan_duration, u.first_name AS user_first_name, u.username AS user_username
          FROM (SELECT * FROM memberships m WHERE ${where} ORDER BY ${order} LIMIT ${filter.limit} OFFSET ${filter.offset}) m
          LEFT JOIN plans p ON p.id = m.plan_id
          LEFT JOIN users u ON u.project_id = m.project_id AND u.user_id = m.user_id) full_row
        ORDER BY ${order}`),
      this.db.execute(isWholeProject(filter) ? projectMembershipTotal(projectId) : sql`SELECT count(*)::int AS total FROM memberships m WHERE ${where}`),
    ]);
    return {
      items: rowsOf<{ membership: MembershipView }>(page).map((r) => r.membership),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /**
   * A cursor page (docs/idempotency-and-lists.md, "Cursor pages"): the memberships after `after`
   * in the list's order, without the count of all matches, and where the next page starts (null
   * on the last page). The same indexes as `list`, entered at the key.
   */
  async listAfter(projectId: string, filter: Omit<MembershipFilter, 'offset'>, after: ListKey | null): Promise<{ items: MembershipView[]; next: ListKey | null }> {
    const now = this.clock.now();
    const [column, direction] = SORTS[filter.sort ?? '-created_at'];
    const order = sql.raw(`${column} ${direction}, id ${direction}`);
    const result = await this.db.execute(sql`
      SELECT ${membershipJson('full_row', now)} AS item, ${keyText(sql.raw(`full_row.${column}`))} AS k, full_row.id FROM (
        SELECT m.*, p.name AS plan_name, p.duration AS plan_duration, u.first_name AS user_first_name, u.username AS user_username
        FROM (SELECT * FROM memberships m WHERE ${membershipWhere(projectId, filter, now)} AND ${afterListKey('m', column, direction, after)}
              ORDER BY ${order} LIMIT ${filter.limit + 1}) m
        LEFT JOIN plans p ON p.id = m.plan_id
        LEFT JOIN users u ON u.project_id = m.project_id AND u.user_id = m.user_id) full_row
      ORDER BY ${order}`);
    return pageOf(rowsOf<{ k: string; id: string; item: MembershipView }>(result), filter.limit);
  }

  /** Deletes a membership with its `membership.deleted` event; false when there was none. */
  async delete(projectId: string, membershipId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH del AS (
        DELETE FROM memberships WHERE project_id = ${projectId} AND id = ${membershipId} RETURNING *
      ), full_row AS (${withPlan('del')}), ev AS (${membershipEvent('membership.deleted', this.clock.now())})
      SELECT id FROM full_row`);
    return rowsOf(result).length > 0;
  }

  /** A plan new memberships may reference: of the project and not deleted (a deleted plan only keeps its members). */
  async planExists(projectId: string, planId: string): Promise<boolean> {
    const result = await this.db.execute(
      sql`SELECT 1 FROM plans WHERE project_id = ${projectId} AND id = ${planId} AND deleted_at IS NULL`,
    );
    return rowsOf(result).length > 0;
  }
}
