import { sql, type SQL } from 'drizzle-orm';
import type { MembershipFilter } from './membership-queries.js';

/**
 * The count of a membership list (docs/memberships.md, "Listing and filtering"). A list of the
 * whole project, the API's plain `GET …/memberships`, reads its total from membership_counts
 * (drizzle/functions.sql keeps it with every insert and delete) instead of counting every
 * membership: at a million members that count took 100-700 ms a page. A filtered list counts what
 * matches, through the index its filter reads.
 */

/** True when the filter narrows nothing: the list is every membership of the project. */
export function isWholeProject(f: Omit<MembershipFilter, 'limit' | 'offset' | 'sort'>): boolean {
  return f.userId === undefined && f.status === undefined && f.planId === undefined && f.endsBefore === undefined && f.endsAfter === undefined;
}

/**
 * The project's membership count, in one statement that also folds the rows appended since the
 * last fold into the project's folded row, as AnalyticsStore.fold folds analytics_days. Every part
 * of one statement reads the same snapshot, taken before it changes anything, so the sum is that
 * of the rows as they were, which the fold leaves unchanged; rows appended meanwhile stay for the
 * next fold (a data-modifying WITH runs whether or not the rest reads it). One fold of a project
 * at a time (a transaction advisory lock): a count that finds one running only sums. Its commit
 * does not wait for the disk (synchronous_commit off for this statement's transaction): a fold
 * lost in a crash is lost whole, its rows left unfolded, which sum to the same.
 */
export function projectMembershipTotal(projectId: string): SQL {
  return sql`
    WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext('tenure-membership-counts'), hashtext(${projectId}::text)) AS held),
    gone AS (
      DELETE FROM membership_counts WHERE project_id = ${projectId} AND NOT folded AND (SELECT held FROM lock)
      RETURNING memberships
    ), folded AS (
      INSERT INTO membership_counts (project_id, folded, memberships)
      SELECT ${projectId}, true, sum(memberships) FROM gone HAVING count(*) > 0
      ON CONFLICT (project_id) WHERE folded DO UPDATE SET memberships = membership_counts.memberships + excluded.memberships
      RETURNING 1
    )
    SELECT coalesce(sum(memberships), 0)::int AS total, set_config('synchronous_commit', 'off', true) AS relaxed
    FROM membership_counts WHERE project_id = ${projectId}`;
}
