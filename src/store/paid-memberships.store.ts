import { sql, type SQL } from 'drizzle-orm';
import type { Grant, PaidMembershipStatements } from '../domain/payments/payment-statements.js';
import type { Db } from '../database/db.js';
import { rowsOf } from '../database/db.js';
import { extendedEvent, membershipEvent, membershipJson, withPlan } from './memberships.store.js';
import { perEndDate, queueMessage } from './message-queueing.js';
import { insertEvent } from './outbox.js';
import { iso } from '../database/sql.js';
import { at } from '../database/sql.js';
import { activeAt } from './rule-twins.js';

/**
 * The membership statements of payments (docs/payments.md, "What each Stripe event does"): grants
 * by a plan's duration, a subscription's status and its instant, ends and grace periods. Each write
 * carries its `membership.*` event; StripeEventsService runs them in an event's transaction and
 * decides which.
 */
export class PaidMembershipsStore implements PaidMembershipStatements {
  constructor(private readonly db: Db) {}

  async holderOf(projectId: string, subscriptionId: string): Promise<{ userId: string; planId: string | null } | null> {
    const rows = rowsOf<{ userId: string; planId: string | null }>(
      await this.db.execute(sql`SELECT user_id AS "userId", plan_id AS "planId" FROM memberships WHERE project_id = ${projectId} AND subscription_id = ${subscriptionId}`),
    );
    return rows[0] ?? null;
  }

  async planExists(projectId: string, planId: string): Promise<boolean> {
    return rowsOf(await this.db.execute(sql`SELECT id FROM plans WHERE id = ${planId} AND project_id = ${projectId}`)).length > 0;
  }

  async statusSetAfter(q: { projectId: string; userId: string; subscriptionId: string; statuses: readonly string[]; after: Date }): Promise<boolean> {
    const rows = rowsOf(
      await this.db.execute(sql`
        SELECT 1 FROM memberships WHERE project_id = ${q.projectId} AND user_id = ${q.userId} AND subscription_id = ${q.subscriptionId}
          AND subscription_status IN (${sql.join(q.statuses.map((s) => sql`${s}`), sql`, `)}) AND subscription_status_at > ${at(q.after)}`),
    );
    return rows.length > 0;
  }

  /**
   * A subscription's id goes with the grant, and its status becomes `active` unless a later event
   * set it; the row is locked first so the new end date counts from the one it replaces.
   */
  async extendByPlan(g: Grant, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const eventAt = sql`${at(g.eventAt)}`;
    const status = g.subscriptionId ? sql`'active'` : sql`NULL`;
    const extended = rowsOf(
      await this.db.execute(sql`
        WITH old AS (
          SELECT id, end_date FROM memberships WHERE project_id = ${g.projectId} AND user_id = ${g.userId} FOR UPDATE
        ), upd AS (
          UPDATE memberships m SET end_date = greatest(m.end_date, ${nowAt}) + (SELECT duration FROM plans WHERE id = ${g.planId})::interval,
            status = 'active', plan_id = ${g.planId}, updated_at = ${nowAt},
            subscription_id = coalesce(${g.subscriptionId}, m.subscription_id),
            subscription_status = CASE WHEN ${g.subscriptionId}::text IS NOT NULL AND (m.subscription_status_at IS NULL OR m.subscription_status_at <= ${eventAt})
              THEN ${status} ELSE m.subscription_status END,
            subscription_status_at = CASE WHEN ${g.subscriptionId}::text IS NOT NULL THEN greatest(m.subscription_status_at, ${eventAt}) ELSE m.subscription_status_at END
          FROM old WHERE m.id = old.id
          RETURNING m.*, old.end_date AS previous_end_date
        ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(now)})
        SELECT id FROM full_row`),
    );
    return extended.length > 0;
  }

  /** With the user's row; nothing is written when the user is banned or has a membership (made concurrently). */
  async createForPlan(g: Grant, now: Date): Promise<{ created: boolean; banned: boolean }> {
    const nowAt = at(now);
    const eventAt = sql`${at(g.eventAt)}`;
    const status = g.subscriptionId ? sql`'active'` : sql`NULL`;
    return this.createUnlessBanned(
      g,
      sql`end_date, subscription_id, subscription_status, subscription_status_at`,
      sql`${nowAt} + (SELECT duration FROM plans WHERE id = ${g.planId})::interval,
        ${g.subscriptionId}::text, ${status}, CASE WHEN ${g.subscriptionId}::text IS NOT NULL THEN ${eventAt} END`,
      now,
    );
  }

  /**
   * docs/payments.md, "Trials": one statement. A member with a membership keeps it, active until
   * the later of its end and the trial's; a member without one gets it, until the trial's end.
   * Either way it is marked in trial, with the subscription (`trialing` unless a later event set
   * its status), and writes its `membership.extended` or `membership.created` event.
   */
  async grantTrial(g: Grant, trialEnd: Date, now: Date): Promise<'created' | 'extended' | 'banned'> {
    const nowAt = at(now);
    const endAt = sql`${at(trialEnd)}`;
    const eventAt = sql`${at(g.eventAt)}`;
    const extended = rowsOf(
      await this.db.execute(sql`
        WITH old AS (
          SELECT id, end_date FROM memberships WHERE project_id = ${g.projectId} AND user_id = ${g.userId} FOR UPDATE
        ), upd AS (
          UPDATE memberships m SET end_date = greatest(m.end_date, ${endAt}), status = 'active', plan_id = ${g.planId}, updated_at = ${nowAt},
            trial_ends_at = ${endAt}, subscription_id = ${g.subscriptionId},
            subscription_status = CASE WHEN m.subscription_status_at IS NULL OR m.subscription_status_at <= ${eventAt} THEN 'trialing' ELSE m.subscription_status END,
            subscription_status_at = greatest(m.subscription_status_at, ${eventAt})
          FROM old WHERE m.id = old.id
          RETURNING m.*, old.end_date AS previous_end_date
        ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(now)})
        SELECT id FROM full_row`),
    );
    if (extended.length > 0) return 'extended';
    const created = await this.createUnlessBanned(
      g,
      sql`end_date, trial_ends_at, subscription_id, subscription_status, subscription_status_at`,
      sql`${endAt}, ${endAt}, ${g.subscriptionId}::text, 'trialing', ${eventAt}`,
      now,
    );
    return created.banned ? 'banned' : 'created';
  }

  /**
   * The member's membership from now, the named `columns` set to `values`, with the user's row and
   * its `membership.created` event, in one statement; nothing is written when the user is banned or
   * has a membership (made concurrently).
   */
  private async createUnlessBanned(g: Grant, columns: SQL, values: SQL, now: Date): Promise<{ created: boolean; banned: boolean }> {
    const nowAt = at(now);
    const row = rowsOf<{ banned: boolean; id: string | null }>(
      await this.db.execute(sql`
        WITH banned AS (
          SELECT EXISTS (SELECT 1 FROM bans WHERE project_id = ${g.projectId} AND user_id = ${g.userId}) AS yes
        ), ins AS (
          INSERT INTO memberships (project_id, user_id, plan_id, start_date, ${columns}, created_at, updated_at)
          SELECT ${g.projectId}::uuid, ${g.userId}::text, ${g.planId}::uuid, ${nowAt}, ${values}, ${nowAt}, ${nowAt}
          FROM banned WHERE NOT banned.yes
          ON CONFLICT (project_id, user_id) DO NOTHING
          RETURNING *
        ), usr AS (
          INSERT INTO users (project_id, user_id) SELECT project_id, user_id FROM ins
          ON CONFLICT (project_id, user_id) DO UPDATE SET last_seen = now()
          RETURNING project_id, user_id, first_name, username
        ), full_row AS (${withPlan('ins', 'usr')}), ev AS (${membershipEvent('membership.created', now)})
        SELECT (SELECT yes FROM banned) AS banned, (SELECT id FROM full_row) AS id`),
    )[0]!;
    return { created: Boolean(row.id), banned: row.banned };
  }

  async setSubscriptionStatus(
    s: { projectId: string; subscriptionId: string; userId: string | null; status: string; cancelAtPeriodEnd: boolean | null; eventAt: Date },
    now: Date,
  ): Promise<string[]> {
    const eventAt = sql`${at(s.eventAt)}`;
    // A renewal cancelled by this change (the flag off before, on after, the membership active) writes
    // its membership.renewal-cancelled and queues the member's message (docs/lifecycle.md): whichever
    // path cancelled it, the portal's or Stripe's, it comes here once, since the next change finds it on.
    const rows = rowsOf<{ id: string }>(
      await this.db.execute(sql`
        WITH old AS (
          SELECT id, subscription_cancel_at_period_end AS was_cancelling FROM memberships
          WHERE project_id = ${s.projectId}
            AND (subscription_id = ${s.subscriptionId} OR (subscription_id IS NULL AND user_id = ${s.userId}::text))
            AND (subscription_status_at IS NULL OR subscription_status_at <= ${eventAt})
          FOR UPDATE
        ), upd AS (
          UPDATE memberships m SET subscription_id = ${s.subscriptionId}, subscription_status = ${s.status}, subscription_status_at = ${eventAt},
            subscription_cancel_at_period_end = COALESCE(${s.cancelAtPeriodEnd}::boolean, m.subscription_cancel_at_period_end), updated_at = ${at(now)}
          FROM old WHERE m.id = old.id
          RETURNING m.*, old.was_cancelling
        ), cancelled AS (
          SELECT * FROM upd WHERE subscription_cancel_at_period_end AND NOT was_cancelling AND ${activeAt(sql`end_date`, now)}
        ), full_row AS (${withPlan('cancelled')}), ev AS (${insertEvent('membership.renewal-cancelled', {
          projectId: sql`project_id`,
          data: { membership: membershipJson('full_row', now), access_until: iso(sql`full_row.end_date`) },
          from: sql`FROM full_row`,
        })}), told AS (${queueMessage('cancelled', 'cancelled', now, perEndDate('cancelled'), sql`d.end_date`)})
        SELECT id FROM upd`),
    );
    return rows.map((r) => r.id);
  }

  async endNow(ids: readonly string[], now: Date): Promise<boolean> {
    // `IN ()` is no SQL: no ids, no statement.
    if (ids.length === 0) return false;
    const nowAt = at(now);
    const ended = rowsOf(
      await this.db.execute(sql`
        WITH upd AS (
          UPDATE memberships m SET end_date = ${nowAt}, status = 'expired', updated_at = ${nowAt}
          WHERE m.id IN (${sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `)}) AND ${activeAt(sql`m.end_date`, now)}
          RETURNING m.*
        ), full_row AS (${withPlan('upd')}), ev AS (${membershipEvent('membership.expired', now)})
        SELECT id FROM full_row`),
    );
    return ended.length > 0;
  }

  async endMemberNow(projectId: string, userId: string, now: Date): Promise<boolean> {
    const nowAt = at(now);
    const ended = rowsOf(
      await this.db.execute(sql`
        WITH upd AS (
          UPDATE memberships m SET end_date = ${nowAt}, status = 'expired', updated_at = ${nowAt}
          WHERE m.project_id = ${projectId} AND m.user_id = ${userId} AND ${activeAt(sql`m.end_date`, now)}
          RETURNING m.*
        ), full_row AS (${withPlan('upd')}), ev AS (${membershipEvent('membership.expired', now)})
        SELECT id FROM full_row`),
    );
    return ended.length > 0;
  }

  /** Locks the rows it keeps, so their previous end date (in the `membership.extended` event) is the one replaced. */
  async keepUntil(ids: readonly string[], until: Date, now: Date): Promise<boolean> {
    // `IN ()` is no SQL: no ids, no statement.
    if (ids.length === 0) return false;
    const nowAt = at(now);
    const to = sql`${at(until)}`;
    const kept = rowsOf(
      await this.db.execute(sql`
        WITH old AS (SELECT id, end_date FROM memberships WHERE id IN (${sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `)}) AND end_date < ${to} FOR UPDATE
        ), upd AS (
          UPDATE memberships m SET end_date = ${to}, status = 'active', updated_at = ${nowAt}
          FROM old WHERE m.id = old.id
          RETURNING m.*, old.end_date AS previous_end_date
        ), full_row AS (${withPlan('upd')}), ev AS (${extendedEvent(now)})
        SELECT id FROM full_row`),
    );
    return kept.length > 0;
  }
}
