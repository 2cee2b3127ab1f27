import type { MerchantAccountsStore, MerchantAccountSecrets } from '../../store/merchant-accounts.store.js';
import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import { MISSING_KEY_MESSAGE } from '../integrations/encryption-key.js';
import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';
import type { Transactor } from '../transactions.js';
import { ENDING_STATUSES, arrivalAction, buyerIn, grantRefusal, outcomeSentence, payerOf, reversalAction, statusAction, type Outcome, type ReversalStatus } from './payment-rules.js';
import type { EventMeta, EventSource, Failed, Paid, StripeEventStores, TrialStart } from './payment-statements.js';
import type { StripeApi, StripeEventLike } from './stripe-api.js';
import { changeOf, type Buyer, type PaymentChange } from './stripe-events.js';

/**
 * Stripe's events in, access out (docs/payments.md, "What each Stripe event does"). The webhook route hands each delivery here: the `Stripe-Signature` is checked with
 * the account's signing secret (stripe-node's constructEvent) before anything is read, then the
 * event is applied once. Reconciliation applies the events it lists the same way, so an event that
 * came both ways is applied once.
 *
 * An event is applied in one transaction that first records its id in `payment_events`: an id
 * already there is a duplicate and changes nothing, whichever way it came (the webhook, a
 * redelivery, reconciliation). In it the service runs the stores' statements (payment-statements.ts)
 * and asks the rules (payment-rules.ts) what their answers mean; every write carries its outbox
 * events (`payment.*`, and the `membership.*` the access engine follows), so they commit with it.
 */

/** What the account lookup of a delivery reads: the account's sealed secrets by its id. */
export type MerchantAccountSecretsReader = Pick<MerchantAccountsStore, 'secretsOf'>;

export interface Receipt {
  event_id: string;
  type: string;
  /** `applied` (first time, whatever it did), `duplicate` (applied before: nothing changed). */
  result: 'applied' | 'duplicate';
  /** What applying it did, in words (also kept in payment_events.outcome); null for a duplicate. */
  outcome: string | null;
}

export class StripeEventsService {
  constructor(
    private readonly accounts: MerchantAccountSecretsReader,
    private readonly transactor: Transactor<StripeEventStores>,
    private readonly box: SecretBox | null,
    private readonly stripe: Pick<StripeApi, 'verifyEvent'>,
    private readonly clock: Clock,
    private readonly options: { graceMs: number },
  ) {}

  /** One delivery to `/v2/stripe/events/{merchant_account_id}`: its raw body and its Stripe-Signature header. */
  async receive(merchantAccountId: string, payload: string, signature: string | undefined): Promise<Result<Receipt>> {
    const account = await this.accounts.secretsOf(merchantAccountId);
    if (!account || account.provider !== 'stripe') return fail('NOT_FOUND', 'Merchant account not found');
    if (!account.webhookSecretSealed) {
      return fail('CONFLICT', "This merchant account has no webhook_secret: post the account again with its Stripe endpoint's signing secret (whsec_…)");
    }
    const secret = this.open(account.webhookSecretSealed);
    if (!secret.ok) return secret;
    if (!signature) return fail('BAD_REQUEST', 'The Stripe-Signature header is missing');
    const event = await this.stripe.verifyEvent(payload, signature, secret.value);
    if (!event) return fail('BAD_REQUEST', 'The Stripe-Signature header does not sign this body with the account\'s webhook secret, or is older than 5 minutes');
    return ok(await this.apply(account, event, 'webhook'));
  }

  /** Applies a verified event of `account` once; the way it came is recorded. */
  async apply(account: Pick<MerchantAccountSecrets, 'id' | 'projectId' | 'environment'>, event: StripeEventLike, source: EventSource): Promise<Receipt> {
    // A test-mode event never changes a production account's members, nor the reverse.
    const change =
      event.livemode === (account.environment === 'production')
        ? changeOf(event)
        : { kind: 'ignored' as const, reason: `a ${event.livemode ? 'live' : 'test'}-mode event for a ${account.environment} account` };
    const meta: EventMeta = { merchantAccountId: account.id, projectId: account.projectId, eventId: event.id, type: event.type, createdAt: new Date(event.created * 1000), source };
    const outcome = await this.transactor.run(async (s) => {
      if (!(await s.stripeEvents.recordOnce(meta))) return null;
      const sentence = outcomeSentence(await new EventApplication(s, meta, this.clock.now(), this.options.graceMs).apply(change));
      await s.stripeEvents.setOutcome(meta, sentence);
      return sentence;
    });
    return { event_id: event.id, type: event.type, result: outcome === null ? 'duplicate' : 'applied', outcome };
  }

  private open(sealed: string): Result<string> {
    if (!this.box) return fail('SERVICE_UNAVAILABLE', MISSING_KEY_MESSAGE);
    try {
      return ok(this.box.open(sealed));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      return fail('CONFLICT', `The stored webhook_secret cannot be opened (${err.message}); post the account again with it`);
    }
  }
}

/**
 * One event's change applied inside its transaction: the statements run on `s`, bound to it, and
 * the rules decide between them. `now` is the one instant of the whole event.
 */
class EventApplication {
  constructor(
    private readonly s: StripeEventStores,
    private readonly meta: EventMeta,
    private readonly now: Date,
    private readonly graceMs: number,
  ) {}

  apply(change: PaymentChange): Promise<Outcome> {
    switch (change.kind) {
      case 'ignored':
        return Promise.resolve(change);
      case 'paid':
        return this.paid(change);
      case 'trial':
        return this.trial(change);
      case 'failed':
        return this.failed(change);
      case 'subscription':
        return this.subscription(change);
      case 'reversed':
        return this.reversed(change);
      case 'expired':
        return this.expired(change.sessionId);
    }
  }

  /** Who paid (payerOf): the buyer named by the event, or the member holding the subscription, with their plan. */
  private async buyerOf(buyer: Buyer | null, subscriptionId: string | null): Promise<Buyer | null> {
    const projectId = this.meta.projectId;
    const payer = payerOf(projectId, buyer, subscriptionId);
    if (!payer) return null;
    if ('buyer' in payer) return payer.buyer;
    const holder = await this.s.paidMemberships.holderOf(projectId, payer.holderOf);
    return holder?.planId ? { projectId, planId: holder.planId, userId: holder.userId } : null;
  }

  private async paid(p: Paid): Promise<Outcome> {
    const { projectId, merchantAccountId } = this.meta;
    const buyer = await this.buyerOf(p.buyer, p.subscriptionId);
    if (!buyer) return { kind: 'no-member' };
    // The e-mail Checkout collected (setting collect_email_on_subscribe) is kept on the member.
    if (p.email) await this.s.payments.rememberEmail(projectId, buyer.userId, p.email);
    // A reversal may have come first and be held for this payment (docs/payments.md, "Out of
    // order"); the lock makes one of a payment and its reversal applied at once see the other.
    // A subscription's session carries no payment intent: its invoice.paid brings it.
    const pi = p.paymentIntentId;
    if (pi) await this.s.paymentReversals.lockPaymentIntent(projectId, pi);
    const held = pi ? await this.s.paymentReversals.heldFor(projectId, pi) : null;
    // A renewal that failed and is paid later (Stripe retries the same invoice): its failed row
    // becomes the payment. The status guard lets one event do it when two race.
    if (await this.s.payments.succeedFailed(projectId, p, this.now)) return this.arrived(buyer, p, held);
    // One row per payment: a subscription's first invoice comes as checkout.session.completed and as invoice.paid.
    const inserted = await this.s.payments.recordSucceeded({ projectId, merchantAccountId, buyer }, p, this.now);
    // The session's coupon use (reserved at checkout) is now a redemption, whichever event recorded the payment.
    if (p.checkoutSessionId) await this.s.coupons.redeemSessionUse(projectId, p.checkoutSessionId, this.now);
    if (inserted) return this.arrived(buyer, p, held);
    // Recorded (and granted) by the session's event, which had no payment intent to meet the
    // held reversal with: this event brought it, and the reversal applies as if it came now.
    if (held && pi) {
      const reversal = await this.reverse(pi, held);
      if (reversal.marked) {
        await this.s.paymentReversals.releaseHeld(projectId, pi);
        return { kind: 'reversed', paymentIntentId: pi, status: held, ...reversal };
      }
    }
    return { kind: 'paid-already' };
  }

  /**
   * A payment just recorded succeeded (its `payment.succeeded` written): it grants, or, when a
   * reversal was held for it, it is reversed at once and grants nothing (arrivalAction).
   */
  private async arrived(buyer: Buyer, p: Paid, held: ReversalStatus | null): Promise<Outcome> {
    const action = arrivalAction(held);
    if (action.kind === 'grant' || !p.paymentIntentId) return this.grant(buyer, p.subscriptionId, p.key);
    const reversal = await this.reverse(p.paymentIntentId, action.status);
    await this.s.paymentReversals.releaseHeld(this.meta.projectId, p.paymentIntentId);
    return { kind: 'arrived-reversed', status: action.status, ended: reversal.ended };
  }

  /**
   * Unless the rules refuse the grant (grantRefusal), extends the member's membership by the
   * plan's duration from its end date (or from now, when it has ended), else creates it, with its
   * event; a subscription's id and status go with it.
   */
  private async grant(buyer: Buyer, subscriptionId: string | null, paymentKey: string): Promise<Outcome> {
    const m = this.s.paidMemberships;
    const { projectId, createdAt: eventAt } = this.meta;
    const planExists = await m.planExists(projectId, buyer.planId);
    // Looked up only when the plan exists (without it the grant is refused whatever this finds),
    // and only for a subscription: nothing else has a status to end it.
    const endedAfterPayment =
      planExists && subscriptionId !== null && (await m.statusSetAfter({ projectId, userId: buyer.userId, subscriptionId, statuses: ENDING_STATUSES, after: eventAt }));
    const refusal = grantRefusal({ planExists, endedAfterPayment });
    if (refusal) return { kind: 'not-granted', why: refusal };
    const grant = { projectId, userId: buyer.userId, planId: buyer.planId, subscriptionId, eventAt };
    // The member's confirmation (docs/front-desk.md, "Confirmations"), queued with the grant: once per payment.
    // And, for a member who logged in with Discord on the web, their join to the plan's guilds (docs/web.md).
    const confirm = async () => {
      const paid = { projectId, userId: buyer.userId, planId: buyer.planId, paymentKey };
      await this.s.notifications.queueConfirmation(paid, this.now);
      await this.s.guildJoins.queueAfterPayment(paid, this.now);
    };
    if (await m.extendByPlan(grant, this.now)) {
      await confirm();
      return { kind: 'extended' };
    }
    const created = await m.createForPlan(grant, this.now);
    if (created.created) await confirm();
    return { kind: 'create', ...created };
  }

  /**
   * A trial began (docs/payments.md, "Trials"): the member's one trial in the project is recorded
   * started, and they get access until its end, counted from the event as Stripe counts
   * `trial_end` from the subscription's start. The session's completion and the $0 first invoice
   * both report it: whichever comes first grants, the other finds the trial started. Its
   * conversion is the first paid invoice, which extends the membership as any renewal does.
   */
  private async trial(t: TrialStart): Promise<Outcome> {
    const { projectId, createdAt: eventAt } = this.meta;
    const buyer = await this.buyerOf(t.buyer, t.subscriptionId);
    if (!buyer) return { kind: 'no-member' };
    if (t.email) await this.s.payments.rememberEmail(projectId, buyer.userId, t.email);
    const started = await this.s.payments.startTrial({ projectId, userId: buyer.userId, planId: buyer.planId, trialDays: t.trialDays, sessionId: t.checkoutSessionId }, this.now);
    if (!started) return { kind: 'trial-already' };
    if (t.checkoutSessionId) await this.s.coupons.redeemSessionUse(projectId, t.checkoutSessionId, this.now);
    if (!(await this.s.paidMemberships.planExists(projectId, buyer.planId))) return { kind: 'not-granted', why: 'plan-gone' };
    // The done page's own reading of the session carries the session's creation, not its completion: counted from now then.
    const start = this.meta.source === 'return' ? this.now : eventAt;
    const trialEnd = new Date(start.getTime() + t.trialDays * 86_400_000);
    const grant = { projectId, userId: buyer.userId, planId: buyer.planId, subscriptionId: t.subscriptionId, eventAt };
    const granted = await this.s.paidMemberships.grantTrial(grant, trialEnd, this.now);
    if (granted !== 'banned') {
      const paid = { projectId, userId: buyer.userId, planId: buyer.planId, paymentKey: `trial:${t.subscriptionId}` };
      await this.s.notifications.queueConfirmation(paid, this.now);
      await this.s.guildJoins.queueAfterPayment(paid, this.now);
    }
    return { kind: 'trial-started', granted, trialEnd };
  }

  private async failed(f: Failed): Promise<Outcome> {
    const { projectId, merchantAccountId } = this.meta;
    const buyer = await this.buyerOf(f.buyer, f.subscriptionId);
    if (!buyer) return { kind: 'no-member' };
    return { kind: 'failed', recorded: await this.s.payments.recordFailed({ projectId, merchantAccountId, buyer }, f, this.now) };
  }

  /**
   * Records the subscription's status unless a later event set it already, and runs what the
   * rules say it does (statusAction): end the memberships now, or keep access until a date.
   */
  private async subscription(s: Extract<PaymentChange, { kind: 'subscription' }>): Promise<Outcome> {
    const { projectId, createdAt: eventAt } = this.meta;
    const userId = buyerIn(projectId, s.buyer)?.userId ?? null;
    const ids = await this.s.paidMemberships.setSubscriptionStatus({ projectId, subscriptionId: s.subscriptionId, userId, status: s.status, cancelAtPeriodEnd: s.cancelAtPeriodEnd, eventAt }, this.now);
    if (ids.length === 0) return { kind: 'status-not-set', subscriptionId: s.subscriptionId };
    const action = statusAction(s.status, this.now, this.graceMs);
    const changed =
      action.kind === 'end'
        ? await this.s.paidMemberships.endNow(ids, this.now)
        : action.kind === 'keep'
          ? await this.s.paidMemberships.keepUntil(ids, action.until, this.now)
          : false;
    return { kind: 'status-set', status: s.status, action: action.kind, changed };
  }

  /**
   * A refund or dispute: the payment is marked and its member's membership ends now; before the
   * payment is recorded, the reversal is held for it (reversalAction).
   */
  private async reversed(r: Extract<PaymentChange, { kind: 'reversed' }>): Promise<Outcome> {
    const { projectId, merchantAccountId, eventId, createdAt: eventCreatedAt } = this.meta;
    const { paymentIntentId, status } = r;
    await this.s.paymentReversals.lockPaymentIntent(projectId, paymentIntentId);
    const reversal = await this.reverse(paymentIntentId, status);
    const recorded = reversal.marked || (await this.s.paymentReversals.isRecorded(projectId, paymentIntentId));
    if (reversalAction({ marked: reversal.marked, recorded }) !== 'hold') return { kind: 'reversed', paymentIntentId, status, ...reversal };
    const held = await this.s.paymentReversals.hold({ projectId, merchantAccountId, paymentIntentId, status, eventId, eventCreatedAt });
    return { kind: 'reversal-held', paymentIntentId, status, held };
  }

  /**
   * Marks the succeeded payment of the intent `status` and, when one was marked, ends its member's
   * membership now, whichever payment of theirs it was (a refunded renewal ends access).
   */
  private async reverse(paymentIntentId: string, status: ReversalStatus): Promise<{ marked: boolean; ended: boolean }> {
    const userId = await this.s.paymentReversals.markReversed(this.meta.projectId, paymentIntentId, status, this.now);
    if (userId === null) return { marked: false, ended: false };
    return { marked: true, ended: await this.s.paidMemberships.endMemberNow(this.meta.projectId, userId, this.now) };
  }

  /** docs/coupons.md, "Coupons at checkout": a session that expired unpaid gives its coupon's use back. */
  private async expired(sessionId: string): Promise<Outcome> {
    // A trial the session reserved goes back too: the member may try again (docs/payments.md, "Trials").
    const trialReleased = await this.s.payments.releaseSessionTrial(this.meta.projectId, sessionId);
    return { kind: 'session-expired', releasedCodes: await this.s.coupons.releaseSessionUse(this.meta.projectId, sessionId, this.now), trialReleased };
  }
}
