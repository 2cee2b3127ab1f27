import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { TelegramInvitesStore } from '../../store/telegram-invites.store.js';
import type { AccessService } from '../access/access.service.js';
import type { Clock } from '../clock.js';
import type { Result } from '../errors.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import { patchFromForm, type InvoicingView } from '../invoicing/invoicing-rules.js';
import type { InvoicingService } from '../invoicing/invoicing.service.js';
import type { StripeApi, StripeEventLike } from '../payments/stripe-api.js';
import type { StripeEventsService } from '../payments/stripe-events.service.js';
import { newLinkToken } from './link-tokens.js';
import type { PortalMemberStatements } from './portal-link-statements.js';
import type { PortalMember } from './portal.service.js';
import { membershipOf, type PortalMembership } from './portal-view.js';

/**
 * What the portal's forms do for the member the page's session lets in (docs/portal.md): cancel or
 * resume a subscription's renewal, a Telegram invite, their invoicing details. The pages check the
 * session (PortalService.enter) and the CSRF token before calling these.
 */

export type RenewalAction = 'cancel' | 'resume';

export type RenewalOutcome = { kind: 'done'; membership: PortalMembership } | { kind: 'not-found' } | { kind: 'unavailable' };

export type InviteOutcome =
  /** The member's current single-use link to the chat. */
  | { kind: 'link'; chatName: string; url: string; expiresAt: string }
  /** None is current: the access engine was asked for a fresh one (it arrives within moments). */
  | { kind: 'requested'; chatName: string }
  | { kind: 'not-found' };

export interface PortalActionsDeps {
  links: PortalMemberStatements;
  accounts: Pick<MerchantAccountsStore, 'secretsOf'>;
  stripe: Pick<StripeApi, 'updateSubscription'>;
  stripeEvents: Pick<StripeEventsService, 'apply'>;
  invoicing: Pick<InvoicingService, 'get' | 'update'>;
  access: Pick<AccessService, 'resync'>;
  invites: Pick<TelegramInvitesStore, 'current'>;
  box: SecretBox | null;
  clock: Clock;
}

/**
 * Whom an action is for: the member the portal's session lets in, or the member an owner's
 * dashboard acts on (docs/dashboard-members.md), through the same rules.
 */
export type MemberOf = Pick<PortalMember, 'projectId' | 'userId'>;

export class PortalActions {
  constructor(private readonly deps: PortalActionsDeps) {}

  /** The member's membership `id` when `action` fits it now (the confirmation step shows it); null otherwise. */
  async renewalTarget(member: MemberOf, id: string, action: RenewalAction): Promise<PortalMembership | null> {
    const found = (await this.deps.links.membershipsOf(member.projectId, member.userId, this.deps.clock.now())).find((m) => m.id === id);
    if (!found?.subscriptionId) return null;
    const view = membershipOf(found, []);
    return (action === 'cancel' ? view.canCancel : view.canResume) ? view : null;
  }

  /**
   * Cancels the renewal (Stripe: `cancel_at_period_end: true`; access stays until the paid period
   * ends) or resumes it. Stripe's answer, the subscription after the change, is applied exactly as
   * its `customer.subscription.updated` event is, through the same service: the membership reads
   * the same whether the member cancelled here or on Stripe's own billing page.
   */
  async setRenewal(member: MemberOf, id: string, action: RenewalAction): Promise<RenewalOutcome> {
    const found = (await this.deps.links.membershipsOf(member.projectId, member.userId, this.deps.clock.now())).find((m) => m.id === id);
    const subscriptionId = found?.subscriptionId;
    if (!found || !subscriptionId) return { kind: 'not-found' };
    const view = membershipOf(found, []);
    if (!(action === 'cancel' ? view.canCancel : view.canResume)) return { kind: 'not-found' };
    const accountId = await this.deps.links.subscriptionAccount(member.projectId, subscriptionId);
    const account = accountId ? await this.deps.accounts.secretsOf(accountId) : null;
    const secretKey = account && openOrNull(this.deps.box, account.secretKeySealed);
    if (!account || !secretKey) return { kind: 'unavailable' };
    const answer = await this.deps.stripe.updateSubscription(secretKey, subscriptionId, { cancelAtPeriodEnd: action === 'cancel' });
    if (!answer.ok) return { kind: 'unavailable' };
    const now = this.deps.clock.now();
    // The id is the portal's own and new each time, so this change is applied once; Stripe's own
    // event for it, coming later, is no newer and changes nothing.
    const event: StripeEventLike = {
      id: `tenure_portal_${subscriptionId}_${newLinkToken().slice(0, 16)}`,
      type: 'customer.subscription.updated',
      created: Math.floor(now.getTime() / 1000),
      livemode: answer.subscription.livemode === true,
      data: { object: answer.subscription },
    };
    await this.deps.stripeEvents.apply(account, event, 'portal');
    const after = (await this.deps.links.membershipsOf(member.projectId, member.userId, this.deps.clock.now())).find((m) => m.id === id);
    return after ? { kind: 'done', membership: membershipOf(after, []) } : { kind: 'not-found' };
  }

  /**
   * A Telegram chat of the member's plan they are not in: their current single-use link, made by
   * the access engine; with none current (it expired), the engine is asked for a fresh one.
   */
  async telegramInvite(member: MemberOf, targetId: string): Promise<InviteOutcome> {
    const { projectId, userId } = member;
    const place = (await this.deps.links.accessOf(projectId, userId)).find((a) => a.targetId === targetId && a.platform === 'telegram' && a.state === 'waiting_for_member');
    if (!place) return { kind: 'not-found' };
    const chatName = place.targetName ?? 'the Telegram chat';
    const [newest] = await this.deps.invites.current(projectId, targetId, userId, this.deps.clock.now());
    if (newest) return { kind: 'link', chatName, url: newest.inviteLink, expiresAt: newest.expiresAt.toISOString() };
    await this.deps.access.resync(projectId, userId);
    return { kind: 'requested', chatName };
  }

  /** The member's invoicing details, for the portal's form. */
  invoicingOf(member: PortalMember): Promise<InvoicingView> {
    return this.deps.invoicing.get(member.projectId, member.userId);
  }

  /** The portal's invoicing form, checked by the API's own rules. */
  saveInvoicing(member: PortalMember, form: Record<string, unknown>): Promise<Result<InvoicingView>> {
    return this.deps.invoicing.update(member.projectId, member.userId, patchFromForm(form));
  }
}
