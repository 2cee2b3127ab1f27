import { sql, type SQL } from 'drizzle-orm';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import { affectedOf, rowsOf, type Db } from './db.js';

/**
 * Memberships and their outbox rows. Every write is one statement (or one transaction) that also
 * inserts its event, so a change and its event commit together or not at all. The hot paths are
 * single round trips: a CTE locks, updates, and writes the event.
 */

export interface ExtendedMembership {
  membership: MembershipView;
  previousEndDate: string;
}

const iso = (column: SQL) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A membership as the API and events show it, built in SQL: the event is written in the same
 * statement as the change, and the API returns the very same object, so the two cannot drift.
 * `alias` names a relation with the memberships columns plus plan_name and plan_duration.
 */
export const membershipJson = (alias: string) => {
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  return sql`jsonb_build_object(
    'membership_id', ${c('id')}, 'user_id', ${c('user_id')}, 'plan_id', ${c('plan_id')},
    'membership_start_date', ${iso(c('start_date'))}, 'membership_end_date', ${iso(c('end_date'))},
    'user_name', NULL, 'plan_name', ${c('plan_name')}, 'plan_duration', ${c('plan_duration')},
    'subscription_id', NULL, 'subscription_status', NULL, 'status', ${c('status')})`;
};

/** Joins the plan columns the view copies onto rows of the CTE `source`. */
export const withPlan = (source: string) =>
  sql.raw(
    `SELECT s.*, p.name AS plan_name, p.duration AS plan_duration FROM ${source} s LEFT JOIN plans p ON p.id = s.plan_id`,
  );

export class MembershipsStore {
  constructor(private readonly db: Db) {}

  /** Sets one member's end date and reactivates them; null when the user has no membership. */
  async extendOne(projectId: string, userId: string, endDate: Date): Promise<ExtendedMembership | null> {
    const result = await this.db.execute(sql`
      WITH old AS (
        SELECT id, end_date FROM memberships WHERE project_id = ${projectId} AND user_id = ${userId} FOR UPDATE
      ), upd AS (
        UPDATE memberships m SET end_date = ${endDate}, status = 'active', updated_at = now()
        FROM old WHERE m.id = old.id
        RETURNING m.*, old.end_date AS previous_end_date
      ), full_row AS (${withPlan('upd')}), ev AS (
        INSERT INTO events (project_id, type, data)
        SELECT project_id, 'membership.extended',
               jsonb_build_object('membership', ${membershipJson('full_row')},
                                  'previous_end_date', ${iso(sql.raw('full_row.previous_end_date'))})
        FROM full_row
      )
      SELECT ${membershipJson('full_row')} AS membership, ${iso(sql.raw('full_row.previous_end_date'))} AS previous_end_date
      FROM full_row`);
    const row = rowsOf<{ membership: MembershipView; previous_end_date: string }>(result)[0];
    return row ? { membership: row.membership, previousEndDate: row.previous_end_date } : null;
  }

  /**
   * Sets the end date of every membership of the project, expired ones included, in one UPDATE,
   * and writes one `membership.bulk-extended` event in the same transaction. Returns the count.
   */
  async extendAll(projectId: string, endDate: Date): Promise<number> {
    return this.db.transaction(async (tx) => {
      const updated = await tx.execute(sql`
        UPDATE memberships SET end_date = ${endDate}, status = 'active', updated_at = now()
        WHERE project_id = ${projectId}`);
      const total = affectedOf(updated);
      await tx.execute(sql`
        INSERT INTO events (project_id, type, data)
        VALUES (${projectId}, 'membership.bulk-extended',
                jsonb_build_object('total', ${total}::int, 'new_end_date', ${endDate.toISOString()}::text))`);
      return total;
    });
  }

  /** Inserts a membership with its `membership.created` event; null when the user already has one. */
  async create(projectId: string, input: { userId: string; endDate: Date; planId: string | null }): Promise<MembershipView | null> {
    const result = await this.db.execute(sql`
      WITH ins AS (
        INSERT INTO memberships (project_id, user_id, plan_id, end_date)
        VALUES (${projectId}, ${input.userId}, ${input.planId}, ${input.endDate})
        ON CONFLICT (project_id, user_id) DO NOTHING
        RETURNING *
      ), full_row AS (${withPlan('ins')}), ev AS (
        INSERT INTO events (project_id, type, data)
        SELECT project_id, 'membership.created', jsonb_build_object('membership', ${membershipJson('full_row')})
        FROM full_row
      )
      SELECT ${membershipJson('full_row')} AS membership FROM full_row`);
    return rowsOf<{ membership: MembershipView }>(result)[0]?.membership ?? null;
  }

  /**
   * Inserts a batch of imported memberships (status from the end date) with one
   * `membership.created` event each. Returns the user ids inserted; the others already had one.
   */
  async importBatch(projectId: string, rows: readonly { userId: string; endDate: Date }[]): Promise<Set<string>> {
    const userIds = rows.map((r) => r.userId);
    const endDates = rows.map((r) => r.endDate.toISOString());
    const result = await this.db.execute(sql`
      WITH ins AS (
        INSERT INTO memberships (project_id, user_id, end_date, status)
        SELECT ${projectId}, t.user_id, t.end_date, CASE WHEN t.end_date > now() THEN 'active' ELSE 'expired' END
        FROM unnest(${sql.param(userIds)}::text[], ${sql.param(endDates)}::timestamptz[]) AS t(user_id, end_date)
        ON CONFLICT (project_id, user_id) DO NOTHING
        RETURNING *
      ), full_row AS (${withPlan('ins')}), ev AS (
        INSERT INTO events (project_id, type, data)
        SELECT project_id, 'membership.created', jsonb_build_object('membership', ${membershipJson('full_row')})
        FROM full_row
      )
      SELECT user_id FROM full_row`);
    return new Set(rowsOf<{ user_id: string }>(result).map((r) => r.user_id));
  }

  async get(projectId: string, membershipId: string): Promise<MembershipView | null> {
    const result = await this.db.execute(sql`
      SELECT ${membershipJson('full_row')} AS membership FROM (${withPlan('memberships')}) full_row
      WHERE full_row.project_id = ${projectId} AND full_row.id = ${membershipId}`);
    return rowsOf<{ membership: MembershipView }>(result)[0]?.membership ?? null;
  }

  /** Newest first, ties broken by id so pages are stable. */
  async list(
    projectId: string,
    filter: { userId?: string; limit: number; offset: number },
  ): Promise<{ items: MembershipView[]; total: number }> {
    const where = filter.userId
      ? sql`m.project_id = ${projectId} AND m.user_id = ${filter.userId}`
      : sql`m.project_id = ${projectId}`;
    const [page, count] = await Promise.all([
      this.db.execute(sql`
        SELECT ${membershipJson('full_row')} AS membership FROM (
          SELECT m.*, p.name AS plan_name, p.duration AS plan_duration
          FROM memberships m LEFT JOIN plans p ON p.id = m.plan_id
          WHERE ${where}
          ORDER BY m.created_at DESC, m.id DESC
          LIMIT ${filter.limit} OFFSET ${filter.offset}) full_row
        ORDER BY full_row.created_at DESC, full_row.id DESC`),
      this.db.execute(sql`SELECT count(*)::int AS total FROM memberships m WHERE ${where}`),
    ]);
    return {
      items: rowsOf<{ membership: MembershipView }>(page).map((r) => r.membership),
      total: rowsOf<{ total: number }>(count)[0]?.total ?? 0,
    };
  }

  /** Deletes a membership with its `membership.deleted` event; false when there was none. */
  async delete(projectId: string, membershipId: string): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH del AS (
        DELETE FROM memberships WHERE project_id = ${projectId} AND id = ${membershipId} RETURNING *
      ), full_row AS (${withPlan('del')}), ev AS (
        INSERT INTO events (project_id, type, data)
        SELECT project_id, 'membership.deleted', jsonb_build_object('membership', ${membershipJson('full_row')})
        FROM full_row
      )
      SELECT id FROM full_row`);
    return rowsOf(result).length > 0;
  }

  async planExists(projectId: string, planId: string): Promise<boolean> {
    const result = await this.db.execute(sql`SELECT 1 FROM plans WHERE project_id = ${projectId} AND id = ${planId}`);
    return rowsOf(result).length > 0;
  }
}
