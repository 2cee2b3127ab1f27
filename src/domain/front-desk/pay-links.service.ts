import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { MembershipsStore } from '../../store/memberships.store.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import { chargeOf, type BanCheck, type CheckoutInput, type CheckoutView, type PlanReader } from '../payments/checkout.service.js';
import type { EventSource } from '../payments/payment-statements.js';
import type { StripeApi, StripeEventLike } from '../payments/stripe-api.js';
import type { Receipt } from '../payments/stripe-events.service.js';
import type { Transactor } from '../transactions.js';
import { joinStandingOf, type GuildJoinReader, type JoinStanding } from '../web/guild-joins.js';
import { blockedOf, CANNOT_BE_BOUGHT, type PlanReadinessStatements } from '../web/plan-readiness.js';
import { digestOf, isLinkToken, newLinkToken } from './link-tokens.js';
import type { PayLinkRecord, PayLinkStatements } from './pay-link-statements.js';

/**
 * Pay links (docs/front-desk.md, "Pay links"): a plan bound to one member before any money moves.
 * Opening the link makes the Stripe Checkout Session through the checkout service, for that plan
 * and member only, and keeps it, so the link opened again goes back to the same session. Stripe
 * returns the member to the link's done page, which says where they stand; when Stripe's event has
 * not come yet, it reads the session from Stripe and applies it the way every event is applied
 * (StripeEventsService.apply, recorded once by its id; the payment once by its key), so a payment
 * is granted once whichever of the page, the webhook and reconciliation comes first.
 */

export interface PayLinkInput {
  planId: string;
  userId: string;
  coupon?: string;
}

export interface PayLinkView {
  pay_link_id: string;
  url: string;
  expires_at: string;
}

/** What the use cases of pay links run in one transaction. */
export interface PayLinkStores {
  payLinks: PayLinkStatements;
  payments: BanCheck;
}

/** Opening a pay link: to Stripe's checkout page, or why not. */
export type OpenOutcome =
  | { kind: 'redirect'; url: string }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'used' }
  /** The session could not be made: `error` says why, for the log and the page's choice of words. */
  | { kind: 'refused'; error: AppError };

/** Where the member stands on the done page. */
export type Standing =
  /** Paid, and the plan's membership is active until `endDate`. */
  | { kind: 'granted'; planName: string; endDate: string; join: JoinStanding | null; /** A free trial (docs/payments.md, "Trials"), not a payment. */ trial?: boolean }
  /** Paid, but no active membership of the plan came of it (a ban, a plan changed): the owner must look. */
  | { kind: 'paid'; planName: string }
  /** Stripe has the payment but it has not cleared (a bank transfer, say): access follows when it does. */
  | { kind: 'processing'; planName: string }
  /** Nothing paid yet; `canPay` while the link is valid. */
  | { kind: 'not-paid'; planName: string; canPay: boolean }
  /** Stripe's session lapsed unpaid and the link with it. */
  | { kind: 'lapsed'; planName: string };

export type DoneOutcome = { kind: 'unknown' } | { kind: 'unavailable' } | { kind: 'standing'; standing: Standing };

export interface PayLinkOptions {
  /** TENURE_PUBLIC_URL: the start of every link. */
  publicUrl: string;
  ttlMs: number;
}

/** The checkout this service asks for sessions. */
export interface SessionMaker {
  create(projectId: string, input: CheckoutInput): Promise<Result<CheckoutView>>;
}

export type PaymentEvents = { apply(account: Pick<SecretsOfAccount, 'id' | 'projectId' | 'environment'>, event: StripeEventLike, source: EventSource): Promise<Receipt> };
type SecretsOfAccount = NonNullable<Awaited<ReturnType<MerchantAccountsStore['secretsOf']>>>;

/** The default life of a pay link: a day, as long as the Checkout Session it makes lives on Stripe. */
export const PAY_LINK_TTL_MS = 86_400_000;
const STRIPE_SESSION_TTL_MS = 86_400_000;

export class PayLinksService {
  constructor(
    private readonly transactor: Transactor<PayLinkStores>,
    private readonly links: PayLinkStatements,
    private readonly plans: PlanReader,
    private readonly checkout: SessionMaker,
    private readonly accounts: Pick<MerchantAccountsStore, 'secretsOf'>,
    private readonly memberships: Pick<MembershipsStore, 'list'>,
    private readonly events: PaymentEvents,
    private readonly stripe: Pick<StripeApi, 'retrieveCheckoutSession'>,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly options: PayLinkOptions,
    /** A buyer who logged in with Discord is added to the server after paying: the page says how that went (docs/web.md). */
    private readonly joins: GuildJoinReader | null = null,
    /** Whether the plan's access can be given now: no session is made for access the bot cannot give (docs/web.md). */
    private readonly readiness: PlanReadinessStatements | null = null,
  ) {}

  /** A new link for `userId` to buy `planId`; the plan must exist, and the member not be banned. */
  async create(projectId: string, input: PayLinkInput): Promise<Result<PayLinkView>> {
    const plan = await this.plans.terms(projectId, input.planId);
    if (!plan.ok) return plan;
    // Refused now, as checkout would refuse it when the member opens the link.
    const charge = chargeOf(plan.value);
    if (!charge.ok) return charge;
    const token = newLinkToken();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.options.ttlMs);
    return this.transactor.run(async (s) => {
      if (await s.payments.isBanned(projectId, input.userId)) return fail<PayLinkView>('CONFLICT', `User ${input.userId} is banned from this project`);
      // The plan's id as stored (lower-case): the request may spell it in capitals.
      await s.payLinks.insert({ idHash: digestOf(token), projectId, planId: plan.value.plan_id, userId: input.userId, coupon: input.coupon ?? null, createdAt: now, expiresAt });
      return ok({ pay_link_id: token, url: this.urlOf(token), expires_at: expiresAt.toISOString() });
    });
  }

  /**
   * The link `token` of the project, whoever it is for (the chat checks it is the asker's), with
   * whether it can still be paid; null when the project has no such link.
   */
  async find(projectId: string, token: string): Promise<(PayLinkView & { plan_id: string; user_id: string; open: boolean }) | null> {
    const link = await this.linkOf(token);
    if (!link || link.projectId !== projectId) return null;
    const expires = link.expiresAt.getTime();
    return {
      pay_link_id: token,
      url: this.urlOf(token),
      expires_at: link.expiresAt.toISOString(),
      plan_id: link.planId,
      user_id: link.userId,
      open: link.completedAt === null && expires > this.clock.now().getTime(),
    };
  }

  /** `GET /pay/{id}`: the link's open session, or a new one. */
  async open(token: string): Promise<OpenOutcome> {
    if (!isLinkToken(token)) return { kind: 'unknown' };
    // The digest once: the link is read and, on a first open, written by it.
    const hash = digestOf(token);
    const link = await this.links.find(hash);
    if (!link) return { kind: 'unknown' };
    if (link.completedAt) return { kind: 'used' };
    const now = this.clock.now().getTime();
    if (link.expiresAt.getTime() <= now) return { kind: 'expired' };
    if (link.sessionUrl && link.sessionExpiresAt && link.sessionExpiresAt.getTime() > now) return { kind: 'redirect', url: link.sessionUrl };
    // The return addresses are the link's own, so the checkout's idempotency key is the link's:
    // two opens at once get one session from Stripe.
    const done = `${this.urlOf(token)}/done`;
    const facts = await this.readiness?.planAccessFacts(link.projectId, link.planId);
    if (facts && blockedOf(facts) !== null) return { kind: 'refused', error: new AppError('CONFLICT', CANNOT_BE_BOUGHT) };
    const session = await this.checkout.create(link.projectId, {
      plan_id: link.planId,
      user_id: link.userId,
      success_url: done,
      cancel_url: done,
      ...(link.coupon ? { coupon: link.coupon } : {}),
    });
    if (!session.ok) return { kind: 'refused', error: session.error };
    await this.links.setSession(hash, {
      merchantAccountId: session.value.merchant_account_id,
      sessionId: session.value.session_id,
      sessionUrl: session.value.checkout_url,
      // Stripe's default life of a Checkout Session (tenure sets no other), counted from now, a little after Stripe's own start.
      sessionExpiresAt: new Date(this.clock.now().getTime() + STRIPE_SESSION_TTL_MS - 60_000),
    });
    return { kind: 'redirect', url: session.value.checkout_url };
  }

  /** `GET /pay/{id}/done`: where the member stands, the session applied first when Stripe's event has not come. */
  async done(token: string): Promise<DoneOutcome> {
    const link = await this.linkOf(token);
    if (!link) return { kind: 'unknown' };
    const plan = await this.plans.terms(link.projectId, link.planId);
    const planName = plan.ok ? plan.value.plan_name : 'your plan';
    const standing = (s: Standing): DoneOutcome => ({ kind: 'standing', standing: s });
    if (link.completedAt) return standing(await this.paidStanding(link, planName));
    const canPay = link.expiresAt.getTime() > this.clock.now().getTime();
    if (!link.sessionId || !link.merchantAccountId) return standing({ kind: 'not-paid', planName, canPay });
    const hash = digestOf(token);
    if (await this.links.sessionPaid(link.projectId, link.sessionId)) {
      await this.complete(hash);
      return standing(await this.paidStanding(link, planName));
    }
    const account = await this.accounts.secretsOf(link.merchantAccountId);
    const secretKey = account && openOrNull(this.box, account.secretKeySealed);
    if (!account || !secretKey) return { kind: 'unavailable' };
    const answer = await this.stripe.retrieveCheckoutSession(secretKey, link.sessionId);
    if (!answer.ok) return { kind: 'unavailable' };
    const session = answer.session;
    if (session.status === 'expired') return standing({ kind: 'lapsed', planName });
    if (session.status !== 'complete') return standing({ kind: 'not-paid', planName, canPay });
    // A subscription starting with a trial completes with nothing to pay yet (docs/payments.md, "Trials").
    if (session.payment_status !== 'paid' && session.payment_status !== 'no_payment_required') return standing({ kind: 'processing', planName });
    // As Stripe's checkout.session.completed would carry it. The id is the page's own, so the page
    // applies it once; Stripe's event, under its own id, then finds the payment recorded (its key).
    const event: StripeEventLike = {
      id: `tenure_return_${link.sessionId}`,
      type: 'checkout.session.completed',
      created: typeof session.created === 'number' ? session.created : Math.floor(this.clock.now().getTime() / 1000),
      livemode: session.livemode === true,
      data: { object: session },
    };
    await this.events.apply(account, event, 'return');
    await this.complete(hash);
    return standing(await this.paidStanding(link, planName));
  }

  private urlOf(token: string): string {
    return `${this.options.publicUrl}/pay/${token}`;
  }

  private async linkOf(token: string): Promise<PayLinkRecord | null> {
    return isLinkToken(token) ? this.links.find(digestOf(token)) : null;
  }

  private async complete(hash: string): Promise<void> {
    await this.transactor.run((s) => s.payLinks.markCompleted(hash, this.clock.now()));
  }

  private async paidStanding(link: PayLinkRecord, planName: string): Promise<Standing> {
    const { items } = await this.memberships.list(link.projectId, { userId: link.userId, limit: 100, offset: 0 });
    const membership = items.find((m) => m.plan_id === link.planId && m.status === 'active');
    if (!membership) return { kind: 'paid', planName };
    const join = this.joins ? joinStandingOf(await this.joins.latestJoin(link.projectId, link.userId, link.planId)) : null;
    return { kind: 'granted', planName, endDate: membership.membership_end_date, join, ...(membership.in_trial ? { trial: true } : {}) };
  }
}
