import { sql, type SQL } from 'drizzle-orm';
import type { AccessDesired, GrantFacts } from '../domain/access/access-rules.js';
import type { MembershipView } from '../domain/memberships/membership.view.js';

/**
 * The SQL twins of the domain's rules, for statements that decide many rows at once: each reads as
 * its rule in src/domain and is changed with it.
 */

/**
 * The SQL twin of `isActiveAt` (src/domain/memberships/active.ts, where the rule and its clock are
 * explained): true while the end date is ahead of `at`. `endDate` is a timestamptz expression (a
 * column); `at` the app clock's instant, bound as a parameter, or an SQL placeholder holding one
 * as text (a prepared statement's). Its negation is `end_date <= at`, which PostgreSQL plans as
 * that range condition (the expiry sweeper's scan of `memberships_active_end_idx`).
 */
export const activeAt = (endDate: SQL, at: Date | SQL): SQL<boolean> =>
  sql<boolean>`(${endDate} > ${at instanceof Date ? at.toISOString() : at}::timestamptz)`;

/** A membership's `status` at `at` (statusAt), as the API and the events show it. */
export const statusAt = (endDate: SQL, at: Date | SQL): SQL<MembershipView['status']> =>
  sql<MembershipView['status']>`CASE WHEN ${activeAt(endDate, at)} THEN 'active' ELSE 'expired' END`;

/**
 * The SQL twin of `desiredAccess` (src/domain/access/access-rules.ts): each fact a boolean SQL
 * expression of the planner's row (`active` from activeAt, the same clock). The facts are tested
 * in this order, so an expired member needs no ban lookup.
 */
export function desiredAccessSql(f: { [K in keyof GrantFacts]: SQL }): SQL<AccessDesired> {
  return sql<AccessDesired>`CASE WHEN ${f.active} AND ${f.enabled} AND NOT ${f.banned} THEN 'granted' ELSE 'revoked' END`;
}
