import type { EventType } from '../events.js';

/**
 * Which members' access an event can change (docs/access-planning.md, "Desired state: what each change
 * does"), as the access planner reads the outbox: the member it names, every member of the project,
 * or nobody. The planner re-computes the desired state of that whole scope from the tables, so an
 * event only has to say where to look, never what changed.
 */
export type PlanScope = 'user' | 'project' | null;

const SCOPES: Record<EventType, PlanScope> = {
  // One member: the membership's user (`data.membership.user_id`) or the banned user (`data.user_id`).
  'membership.created': 'user',
  'membership.extended': 'user',
  'membership.expired': 'user',
  'membership.deleted': 'user',
  'user.banned': 'user',
  'user.unbanned': 'user',
  // Every member: a bulk extend sets them all; a plan's targets added or removed (plan.updated),
  // a target enabled, disabled, given another on_expiry (target.updated) or deleted (target.removed,
  // with a plan.updated per plan that granted it) concern whoever holds those plans.
  'membership.bulk-extended': 'project',
  'plan.updated': 'project',
  // A deleted plan keeps its members and what it granted until they end: re-planning confirms it.
  'plan.deleted': 'project',
  'target.updated': 'project',
  'target.removed': 'project',
  // Nobody: a new plan grants nothing yet, a new target is in no plan yet; the rest is not access.
  'plan.created': null,
  'target.added': null,
  // A reminder before the end changes nothing yet.
  'membership.expiring': null,
  // A cancelled renewal keeps access to the end date.
  'membership.renewal-cancelled': null,
  'webhook.test': null,
  'webhook.delivery-succeeded': null,
  'webhook.delivery-failed': null,
  'webhook.endpoint-disabled': null,
  'access.granted': null,
  'access.revoked': null,
  'access.failed': null,
  'access.invite-created': null,
  // A payment changes access only through the membership events written beside it.
  'payment.succeeded': null,
  'payment.refunded': null,
  'payment.disputed': null,
  'payment.failed': null,
  'notification.failed': null,
};

/** The scope of an event type; an unknown type (a newer node's) concerns nobody here. */
export const planScopeOf = (type: string): PlanScope => (Object.hasOwn(SCOPES, type) ? SCOPES[type as EventType] : null);
