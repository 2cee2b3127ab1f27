import type { AccessView } from './access.view.js';

/** What a member should hold on a target. */
export type AccessDesired = AccessView['desired'];

/**
 * What a member should hold on a target, `desired` (docs/access-planning.md, "Desired state: what
 * each change does"): `granted` while their membership is active (isActiveAt,
 * src/domain/memberships/active.ts: its end date ahead of the app clock's now), the target is
 * enabled and the user is not banned in the project; `revoked` otherwise. Which targets a member's
 * plan reaches, and which of them get access rows at all (managed kinds, on a connected platform),
 * is the planner's join (src/store/access-replan.ts), which decides `desired` by the SQL twin of
 * this rule, `desiredAccessSql` (src/store/rule-twins.ts).
 *
 * When the planner looks again is decided before it runs, in two steps. The database queues an
 * event for the planner (table `event_plan_queue`) when it is durable (not live-only) and its
 * project has connected a platform: the trigger `tenure_events_inserted` (drizzle/functions.sql)
 * decides it in the statement that writes the event, so a project without a platform costs the
 * planner nothing. Which members a queued event re-plans is `planScopeOf` (plan-scopes.ts).
 */
export interface GrantFacts {
  /** The membership is active at the app clock's now. */
  active: boolean;
  /** The target is enabled. */
  enabled: boolean;
  /** The user is banned in the project. */
  banned: boolean;
}

export function grantsAccess(f: GrantFacts): boolean {
  return f.active && f.enabled && !f.banned;
}

export function desiredAccess(f: GrantFacts): AccessDesired {
  return grantsAccess(f) ? 'granted' : 'revoked';
}
