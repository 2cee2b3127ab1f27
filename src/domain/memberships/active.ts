import type { MembershipView } from './membership.view.js';

/**
 * When a membership is active: while its end date is ahead of the instant asked about, and
 * expired from its end date on (docs/memberships.md, "Status and expiry"). The one definition:
 * the API's and the events' `status`, the expiry sweeper's due rows, the access planner's grants,
 * the targets' participant counts and the import's statuses all read it, here or as its SQL twin
 * `activeAt` (src/store/rule-twins.ts), which must say the same.
 *
 * `at` is always the app's clock (src/domain/clock.ts), never the database's `now()`: the clock
 * that accepts an end date as "in the future" is the one every reader asks, so a membership just
 * accepted as ending in the future never reads `expired` anywhere, and a test's fake clock moves
 * them all ("Which clock" in the same page).
 */
export function isActiveAt(endDate: Date, at: Date): boolean {
  return endDate.getTime() > at.getTime();
}

/** The membership's `status` at `at`, as the API shows it. */
export function statusAt(endDate: Date, at: Date): MembershipView['status'] {
  return isActiveAt(endDate, at) ? 'active' : 'expired';
}
