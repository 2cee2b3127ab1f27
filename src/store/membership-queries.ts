import { sql, type SQL } from 'drizzle-orm';
import { activeAt } from './rule-twins.js';

/**
 * What the membership lists ask (docs/memberships.md, "Listing and filtering"): the statuses and
 * sorts a query may name, and the WHERE they make, shared by the list and its export.
 */

export const MEMBERSHIP_QUERY_STATUSES = ['active', 'expired', 'in_trial', 'in_grace', 'cancelling'] as const;
export type MembershipQueryStatus = (typeof MEMBERSHIP_QUERY_STATUSES)[number];
export const MEMBERSHIP_SORTS = ['-created_at', 'created_at', 'end_date', '-end_date'] as const;
export type MembershipSort = (typeof MEMBERSHIP_SORTS)[number];

export interface MembershipFilter {
  userId?: string;
  status?: MembershipQueryStatus;
  planId?: string;
  /** end_date strictly before this instant. */
  endsBefore?: Date;
  /** end_date strictly after this instant. */
  endsAfter?: Date;
  /** Default `-created_at`: newest first. */
  sort?: MembershipSort;
  limit: number;
  offset: number;
}

/** Column and direction of each sort; the id follows in the same direction. */
export const SORTS: Record<MembershipSort, [string, 'ASC' | 'DESC']> = {
  '-created_at': ['created_at', 'DESC'],
  created_at: ['created_at', 'ASC'],
  end_date: ['end_date', 'ASC'],
  '-end_date': ['end_date', 'DESC'],
};

/**
 * A renewal that failed (Stripe retrying, access kept), and the statuses of a subscription that
 * still bills: the SQL twins of FAILING and BILLING in src/domain/front-desk/portal-view.ts, so a
 * filter and the portal's state of a membership agree.
 */
const FAILING = sql.raw(`('past_due', 'unpaid')`);
const STILL_BILLING = sql.raw(`('active', 'trialing')`);

/**
 * The WHERE of a membership list over `m` (docs/memberships.md, "Listing and filtering"): each
 * status as the portal derives its state. in_trial, in_grace and cancelling are kinds of active.
 */
export function membershipWhere(projectId: string, f: Omit<MembershipFilter, 'limit' | 'offset' | 'sort'>, now: Date): SQL {
  const active = activeAt(sql.raw('m.end_date'), now);
  const parts: SQL[] = [sql`m.project_id = ${projectId}`];
  if (f.userId !== undefined) parts.push(sql`m.user_id = ${f.userId}`);
  if (f.planId !== undefined) parts.push(sql`m.plan_id = ${f.planId}`);
  if (f.endsBefore !== undefined) parts.push(sql`m.end_date < ${f.endsBefore.toISOString()}::timestamptz`);
  if (f.endsAfter !== undefined) parts.push(sql`m.end_date > ${f.endsAfter.toISOString()}::timestamptz`);
  switch (f.status) {
    case undefined:
      break;
    case 'active':
      parts.push(active);
      break;
    case 'expired':
      parts.push(sql`NOT ${active}`);
      break;
    case 'in_trial':
      parts.push(sql`${active} AND m.trial_ends_at IS NOT NULL AND m.end_date <= m.trial_ends_at`);
      break;
    case 'in_grace':
      parts.push(sql`${active} AND m.subscription_status IN ${FAILING}`);
      break;
    case 'cancelling':
      parts.push(sql`${active} AND m.subscription_id IS NOT NULL AND m.subscription_status IS DISTINCT FROM 'past_due' AND m.subscription_status IS DISTINCT FROM 'unpaid'
        AND (m.subscription_status IS NULL OR m.subscription_status NOT IN ${STILL_BILLING} OR m.subscription_cancel_at_period_end)`);
      break;
  }
  return sql.join(parts, sql` AND `);
}
