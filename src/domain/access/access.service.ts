import type { AccessStore, AccessFilter } from '../../store/access.store.js';
import type { AccessPlanStore } from '../../store/access-plan.store.js';
import type { TelegramInvitesStore } from '../../store/telegram-invites.store.js';
import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import type { InviteView } from '../events.js';
import type { AccessView, ResyncView } from './access.view.js';

/** The statements of AccessStore this uses (a narrow port: tests give it a small twin). */
export type AccessStatements = Pick<AccessStore, 'list' | 'reconcileNow' | 'requeueGranted'>;

/** The statements of AccessPlanStore this uses (a narrow port: tests give it a small twin). */
export type AccessPlanStatements = Pick<AccessPlanStore, 'planProject' | 'planUsers'>;

/**
 * The access API (docs/access.md, "The access rows and the API"): the rows, and a resync that
 * re-plans now and asks the worker to compare with the platform.
 */
export class AccessService {
  constructor(
    private readonly store: AccessStatements,
    private readonly planner: AccessPlanStatements,
    private readonly inviteLinks: Pick<TelegramInvitesStore, 'currentForMembership'>,
    private readonly clock: Clock,
  ) {}

  list(projectId: string, filter: AccessFilter): Promise<{ items: AccessView[]; total: number }> {
    return this.store.list(projectId, filter);
  }

  /**
   * A member's resync re-plans them and sets their granted rows back to pending, so the worker
   * applies them again (a role removed by hand comes back now, not at the next reconciliation;
   * a failed row stays failed until its target is fixed and updated). A project's resync re-plans
   * every member and moves the drift reconciliation of each connected platform to now.
   */
  async resync(projectId: string, userId: string | null): Promise<ResyncView> {
    if (userId !== null) {
      const changed = await this.planner.planUsers(projectId, [userId]);
      return { user_id: userId, changed, requeued: await this.store.requeueGranted(projectId, userId), reconciling: 0 };
    }
    const changed = await this.planner.planProject(projectId);
    return { user_id: null, changed, requeued: 0, reconciling: await this.store.reconcileNow(projectId) };
  }

  /**
   * The member's current Telegram invite links (not revoked, not used, not expired), newest first,
   * for the owner's backend or bot to hand over (docs/access-telegram.md); every target of theirs.
   */
  async invites(projectId: string, membershipId: string): Promise<Result<InviteView[]>> {
    const found = await this.inviteLinks.currentForMembership(projectId, membershipId, this.clock.now());
    return found ? ok(found) : fail('NOT_FOUND', 'Membership not found');
  }
}
