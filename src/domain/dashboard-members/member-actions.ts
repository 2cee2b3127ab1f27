import type { AccessService } from '../access/access.service.js';
import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import type { PortalActions } from '../front-desk/portal-actions.js';
import type { PortalService } from '../front-desk/portal.service.js';
import type { MembershipsService } from '../memberships/memberships.service.js';
import type { MembershipView } from '../memberships/membership.view.js';
import type { MembershipsStore } from '../../store/memberships.store.js';
import type { UsersService } from '../users/users.service.js';
import { refuseUnless, type ActingAdmin, type AuditRecorder } from './acting-admin.js';
import { parseNewEnd, type NewEnd } from './end-dates.js';

/**
 * The actions of a member's page (docs/dashboard-members.md, "Actions"). Each runs through the
 * service the v2 API (or the member's portal) runs, so its events, webhooks, messages and access
 * changes follow exactly as they would there; each is checked against the acting admin's
 * permission first (nothing is read or changed without it) and recorded in the audit log after.
 */

export interface ActionDeps {
  users: Pick<UsersService, 'get' | 'ban' | 'unban'>;
  memberships: Pick<MembershipsService, 'list' | 'extendOne'>;
  /** The extend statement itself, for "end now": the API's extend refuses an end date that is not in the future. */
  extendStatement: Pick<MembershipsStore, 'extendOne'>;
  access: Pick<AccessService, 'resync'>;
  portal: Pick<PortalService, 'create'>;
  portalActions: Pick<PortalActions, 'setRenewal' | 'renewalTarget' | 'telegramInvite'>;
  audit: AuditRecorder;
  clock: Clock;
}

/** What an action did, for the notice after the redirect; a link is shown once, never put in an address. */
export interface Done {
  notice: string;
  link?: { url: string; expiresAt: string | null; label: string };
}

const REASON_MAX = 500;

export class DashboardMemberActions {
  constructor(private readonly deps: ActionDeps) {}

  /** Add days (from the current end, or from now when it has passed) or set the end date. */
  async extend(actor: ActingAdmin, userId: string, form: { days?: unknown; end_date?: unknown }): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    const membership = await this.membershipOf(actor, userId);
    if (!membership.ok) return membership;
    const now = this.deps.clock.now();
    const change = parseNewEnd(form, new Date(membership.value.membership_end_date), now);
    if (!change.ok) return change;
    const done = await this.deps.memberships.extendOne(actor.projectId, userId, change.value.endDate.getTime());
    if (!done.ok) return done;
    await this.record(actor, 'membership.extend', userId, detailsOf(change.value, membership.value));
    return ok({ notice: `The membership now ends ${change.value.endDate.toISOString()}.` });
  }

  /**
   * Ends the membership now: a renewing subscription's renewal is cancelled first (else the next
   * invoice would extend it again), then the end date is set to this instant through the extend
   * statement; the expiry sweeper announces the end (membership.expired, the member's message) and
   * access is taken back as for any expiry.
   */
  async endNow(actor: ActingAdmin, userId: string): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    const membership = await this.membershipOf(actor, userId);
    if (!membership.ok) return membership;
    const m = membership.value;
    if (m.status === 'expired') return fail('CONFLICT', 'This membership has already ended');
    const member = { projectId: actor.projectId, userId };
    let cancelled = false;
    if (await this.deps.portalActions.renewalTarget(member, m.membership_id, 'cancel')) {
      const outcome = await this.deps.portalActions.setRenewal(member, m.membership_id, 'cancel');
      if (outcome.kind === 'unavailable') return fail('SERVICE_UNAVAILABLE', 'Stripe could not cancel the renewal, so the membership was not ended; try again');
      cancelled = outcome.kind === 'done';
    }
    const now = this.deps.clock.now();
    const ended = await this.deps.extendStatement.extendOne(actor.projectId, userId, now);
    if (!ended) return fail('NOT_FOUND', `Membership not found for user ${userId}`);
    await this.record(actor, 'membership.end', userId, { previous_end_date: ended.previousEndDate, end_date: now.toISOString(), renewal_cancelled: cancelled });
    return ok({ notice: cancelled ? 'The membership has ended and its renewal is cancelled.' : 'The membership has ended.' });
  }

  /** Cancels the renewal at the end of the paid period (Stripe), as the member's portal does. */
  async cancelRenewal(actor: ActingAdmin, userId: string): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    const membership = await this.membershipOf(actor, userId);
    if (!membership.ok) return membership;
    const outcome = await this.deps.portalActions.setRenewal({ projectId: actor.projectId, userId }, membership.value.membership_id, 'cancel');
    if (outcome.kind === 'unavailable') return fail('SERVICE_UNAVAILABLE', 'Stripe could not be reached; nothing changed, try again');
    if (outcome.kind === 'not-found') return fail('CONFLICT', 'This membership has no renewal to cancel');
    await this.record(actor, 'membership.cancel-renewal', userId, { membership_id: membership.value.membership_id });
    return ok({ notice: `The renewal is cancelled; access stays until ${outcome.membership.endDate}.` });
  }

  async ban(actor: ActingAdmin, userId: string, form: { reason?: unknown }): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'ban:add');
    if (refused) return refused;
    const reason = typeof form.reason === 'string' ? form.reason.trim() : '';
    if (reason.length > REASON_MAX) return fail('VALIDATION_ERROR', `The reason must be at most ${REASON_MAX} characters`);
    const user = await this.deps.users.get(actor.projectId, userId);
    if (!user.ok) return user;
    const banned = await this.deps.users.ban(actor.projectId, userId, `dashboard:${actor.userId ?? 'owner'}`, reason || null);
    if (!banned.ok) return banned;
    await this.record(actor, 'ban.add', userId, { reason: reason || null });
    return ok({ notice: 'The member is banned: their access is being taken away and they cannot get a new membership.' });
  }

  async unban(actor: ActingAdmin, userId: string): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'ban:remove');
    if (refused) return refused;
    const user = await this.deps.users.get(actor.projectId, userId);
    if (!user.ok) return user;
    const lifted = await this.deps.users.unban(actor.projectId, userId);
    if (!lifted.ok) return fail('CONFLICT', 'This member is not banned');
    await this.record(actor, 'ban.remove', userId, {});
    return ok({ notice: 'The ban is lifted.' });
  }

  /** Plans the member's access again and applies it again now (POST /access/resync for one member). */
  async resync(actor: ActingAdmin, userId: string): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    const user = await this.deps.users.get(actor.projectId, userId);
    if (!user.ok) return user;
    const done = await this.deps.access.resync(actor.projectId, userId);
    await this.record(actor, 'access.resync', userId, { changed: done.changed, requeued: done.requeued });
    return ok({ notice: `Access is being applied again (${done.changed} changed, ${done.requeued} to apply again).` });
  }

  /** The member's current Telegram invite for a chat, or a fresh one asked of the access engine (sent to them when made). */
  async invite(actor: ActingAdmin, userId: string, targetId: unknown): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    if (typeof targetId !== 'string' || !/^[0-9a-f-]{36}$/i.test(targetId)) return fail('VALIDATION_ERROR', 'Choose the Telegram chat to invite to');
    const user = await this.deps.users.get(actor.projectId, userId);
    if (!user.ok) return user;
    const outcome = await this.deps.portalActions.telegramInvite({ projectId: actor.projectId, userId }, targetId.toLowerCase());
    if (outcome.kind === 'not-found') return fail('CONFLICT', 'The member is not waiting to join that chat');
    await this.record(actor, 'access.invite', userId, { target_id: targetId.toLowerCase(), made: outcome.kind === 'requested' });
    if (outcome.kind === 'requested') return ok({ notice: `A new invite link to ${outcome.chatName} is being made; the bot sends it to the member.` });
    return ok({
      notice: `The member's current invite link to ${outcome.chatName}: hand it over (it works once).`,
      link: { url: outcome.url, expiresAt: outcome.expiresAt, label: 'Invite link' },
    });
  }

  /** A single-use portal link for the member (15 minutes), shown once to copy; the link is not recorded. */
  async portalLink(actor: ActingAdmin, userId: string): Promise<Result<Done>> {
    const refused = refuseUnless(actor, 'memberships:update');
    if (refused) return refused;
    const user = await this.deps.users.get(actor.projectId, userId);
    if (!user.ok) return user;
    const link = await this.deps.portal.create(actor.projectId, userId);
    if (!link.ok) return link;
    await this.record(actor, 'portal-link.create', userId, { expires_at: link.value.expires_at });
    return ok({ notice: 'A portal link for the member: send it to them (it works once, for 15 minutes).', link: { url: link.value.url, expiresAt: link.value.expires_at, label: 'Portal link' } });
  }

  private async membershipOf(actor: ActingAdmin, userId: string): Promise<Result<MembershipView>> {
    const found = await this.deps.memberships.list(actor.projectId, { userId, limit: 1, offset: 0 });
    const membership = found.items[0];
    return membership ? ok(membership) : fail('NOT_FOUND', `Membership not found for user ${userId}`);
  }

  private record(actor: ActingAdmin, action: string, subject: string, details: Record<string, unknown>): Promise<void> {
    return this.deps.audit.record(actor, action, subject, details);
  }
}

function detailsOf(change: NewEnd, m: MembershipView): Record<string, unknown> {
  return { ...(change.days === null ? {} : { days: change.days }), end_date: change.endDate.toISOString(), previous_end_date: m.membership_end_date };
}
