import type { DashboardAuditStore } from '../../store/dashboard-audit.store.js';
import type { Clock } from '../clock.js';
import type { Actor } from './actor.js';
import type { AuditEntry, NewAuditEntry, Page } from './dashboard.types.js';

/** Who an entry is of: the project, the admin (null: the owner) and their session. */
export type AuditActor = Pick<Actor, 'projectId' | 'userId' | 'sessionId'>;

/**
 * The audit log of admin actions (docs/dashboard.md, "Audit log"): who (the admin, or null for the
 * owner), in which session, what (`admin.add`, `session.revoke`, …), to what (a user id, a plan
 * id…), details without secrets, when. A use case with a transaction records in it
 * (`entryOf` and its stores' `dashboardAudit.record`); otherwise `record` right after the change.
 */
export class DashboardAudit {
  constructor(
    private readonly store: Pick<DashboardAuditStore, 'record' | 'list'>,
    private readonly clock: Clock,
  ) {}

  record(actor: AuditActor, action: string, subject: string | null = null, details: Record<string, unknown> = {}): Promise<void> {
    return this.store.record(entryOf(actor, action, subject, details, this.clock.now()));
  }

  list(projectId: string, page: Page): Promise<{ items: AuditEntry[]; total: number }> {
    return this.store.list(projectId, page);
  }
}

/** The audit row of an actor's action (for a use case recording in its own transaction). */
export function entryOf(actor: AuditActor, action: string, subject: string | null, details: Record<string, unknown>, at: Date): NewAuditEntry {
  return { projectId: actor.projectId, actorUserId: actor.userId, sessionId: actor.sessionId, action, subject, details, at };
}
