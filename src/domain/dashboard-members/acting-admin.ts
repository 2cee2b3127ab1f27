import type { Permission } from '../admins/permissions.js';
import { may, type Actor } from '../dashboard/actor.js';
import type { DashboardAudit } from '../dashboard/audit.service.js';
import { fail, type Result } from '../errors.js';

/**
 * Who acts (the dashboard's session actor, its permissions read on this request) and where each
 * action is recorded (the audit log, right after the change: each action runs through the API's
 * own service, which owns its statement).
 */
export type ActingAdmin = Actor;
export type AuditRecorder = Pick<DashboardAudit, 'record'>;

/** A refusal naming the permission, before anything is read or changed (the page shows it as a 403). */
export function refuseUnless(actor: ActingAdmin, needed: Permission): Result<never> | null {
  return may(actor, needed) ? null : fail('FORBIDDEN', `This needs the permission ${needed}`);
}
