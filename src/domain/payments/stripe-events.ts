import type { ReversalStatus } from './payment-rules.js';
import type { StripeEventLike } from './stripe-api.js';

/**
 * What a Stripe event means to tenure (docs/payments.md, "What each Stripe event does"), read from
 * the event alone: a pure function, so each rule is tested without a database. Field names are
 * Stripe's (API reference: Checkout Session, Invoice, Subscription, Charge, Dispute), the Invoice
 * both as of API 2025-03-31 (`parent.subscription_details`, `payments`) and before it
 * (`subscription_details`, `subscription`, `payment_intent`).
 */

/** The project, plan and member a checkout's metadata names. */
export interface Buyer {
  projectId: string;
  planId: string;
  userId: string;
}

export type PaymentChange =
  /** A payment succeeded: record it once (by `key`) and create or extend the membership by the plan's duration. */
  | {
      kind: 'paid';
      key: string;
      /** Null for a renewal whose invoice carries no metadata: the membership holding `subscriptionId` is the buyer. */
      buyer: Buyer | null;
      amountMinor: number;
      currency: string;
      checkoutSessionId: string | null;
      paymentIntentId: string | null;
      invoiceId: string | null;
      subscriptionId: string | null;
      customerId: string | null;
      /** The e-mail Checkout collected (a completed session's; setting collect_email_on_subscribe), if any. */
      email?: string | null;
    }
  /** A subscription's renewal failed: recorded as a failed payment; the subscription's status decides access. */
  | { kind: 'failed'; key: string; buyer: Buyer | null; amountMinor: number; currency: string; invoiceId: string; subscriptionId: string | null; customerId: string | null }
  /**
   * A subscription's status changed (or it ended: `canceled`). `cancelAtPeriodEnd`: whether it is
   * set to end when its paid period does (null: the event does not say, as a deletion).
   */
  | { kind: 'subscription'; subscriptionId: string; status: string; buyer: Buyer | null; cancelAtPeriodEnd: boolean | null }
  /**
   * The money went back (a full refund) or is contested: the payment is marked and the membership
   * ends at once; before the payment is recorded, held for it (payment-rules.ts, reversalAction).
   */
  | { kind: 'reversed'; paymentIntentId: string; status: ReversalStatus }
  /**
   * A subscription's free trial began (docs/payments.md, "Trials"): the session completed with no
   * payment required, or its $0 first invoice was paid; both keyed by that invoice, applied once.
   */
  | {
      kind: 'trial';
      buyer: Buyer;
      trialDays: number;
      checkoutSessionId: string | null;
      invoiceId: string | null;
      subscriptionId: string;
      customerId: string | null;
      /** The e-mail Checkout collected (setting collect_email_on_subscribe), if any. */
      email: string | null;
    }
  /** A Checkout Session expired unpaid: a coupon use (or a trial) it reserved goes back. */
  | { kind: 'expired'; sessionId: string }
  | { kind: 'ignored'; reason: string };

type Obj = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
/** An expandable field: the id, or the object's id when expanded. */
const idOf = (v: unknown): string | null => str(v) ?? str(obj(v).id);

/** The trial a checkout offered, as its metadata says (`trial_days`); null for none. */
export function trialDaysOf(metadata: unknown): number | null {
  const raw = str(obj(metadata).trial_days);
  const days = raw !== null && /^[1-9][0-9]{0,2}$/.test(raw) ? Number(raw) : null;
  return days !== null && days <= 730 ? days : null;
}

/**
 * The buyer's e-mail on a completed session, when its checkout asked tenure to keep it (metadata
 * `collect_email`, from the setting collect_email_on_subscribe): `customer_details.email` (what
 * Checkout collected), else `customer_email`; at most 320 characters.
 */
export function sessionEmail(session: Obj): string | null {
  if (obj(session.metadata).collect_email !== 'true') return null;
  const email = str(obj(session.customer_details).email) ?? str(session.customer_email);
  return email !== null && email.length <= 320 && email.includes('@') ? email : null;
}

/** The buyer a checkout's metadata names; null when any of the three is missing (not a tenure checkout). */
export function buyerOf(metadata: unknown): Buyer | null {
  const m = obj(metadata);
  const projectId = str(m.project_id);
  const planId = str(m.plan_id);
  const userId = str(m.user_id);
  return projectId && planId && userId ? { projectId, planId, userId } : null;
}

/**
 * A subscription's invoice, paid (a payment of `amount_paid`) or failed (of `amount_due`): both
 * keyed by the invoice's id, its subscription, buyer, currency and customer read the same way, in
 * either Invoice shape. An invoice of no subscription is not tenure's.
 */
function invoiceChange(type: 'invoice.paid' | 'invoice.payment_failed', invoice: Obj): PaymentChange {
  const details = obj(obj(invoice.parent).subscription_details);
  const legacy = obj(invoice.subscription_details);
  const subscriptionId = idOf(details.subscription) ?? idOf(invoice.subscription);
  const invoiceId = str(invoice.id);
  if (!subscriptionId || !invoiceId) return { kind: 'ignored', reason: 'an invoice of no subscription' };
  const common = {
    key: invoiceId,
    buyer: buyerOf(Object.keys(obj(details.metadata)).length > 0 ? details.metadata : legacy.metadata),
    currency: String(invoice.currency ?? '').toUpperCase(),
    invoiceId,
    subscriptionId,
    customerId: idOf(invoice.customer),
  };
  if (type === 'invoice.payment_failed') return { kind: 'failed', ...common, amountMinor: num(invoice.amount_due) };
  // The $0 invoice Stripe makes when a subscription starts with a trial: the trial's start, not a payment.
  const trialDays = trialDaysOf(Object.keys(obj(details.metadata)).length > 0 ? details.metadata : legacy.metadata);
  if (trialDays !== null && common.buyer && invoice.billing_reason === 'subscription_create' && num(invoice.amount_paid) === 0) {
    return { kind: 'trial', buyer: common.buyer, trialDays, checkoutSessionId: null, invoiceId, subscriptionId, customerId: common.customerId, email: null };
  }
  const payment = obj(obj((obj(invoice.payments).data as unknown[] | undefined)?.[0]).payment);
  const paymentIntentId = idOf(payment.payment_intent) ?? idOf(invoice.payment_intent);
  return { kind: 'paid', ...common, amountMinor: num(invoice.amount_paid), checkoutSessionId: null, paymentIntentId };
}

export function changeOf(event: StripeEventLike): PaymentChange {
  const o = obj(event.data?.object);
  switch (event.type) {
    case 'checkout.session.completed': {
      // A subscription with a trial completes with nothing to pay yet: the trial starts.
      const trialDays = trialDaysOf(o.metadata);
      if (o.payment_status === 'no_payment_required' && o.mode === 'subscription' && trialDays !== null) {
        const buyer = buyerOf(o.metadata);
        const subscriptionId = idOf(o.subscription);
        if (!buyer || !subscriptionId) return { kind: 'ignored', reason: 'a trial session without its buyer or subscription' };
        return { kind: 'trial', buyer, trialDays, checkoutSessionId: str(o.id), invoiceId: idOf(o.invoice), subscriptionId, customerId: idOf(o.customer), email: sessionEmail(o) };
      }
      // Delayed payment methods complete the session unpaid; they pay later (async_payment_succeeded).
      if (o.payment_status !== 'paid') return { kind: 'ignored', reason: `session not paid (payment_status ${String(o.payment_status)})` };
      const buyer = buyerOf(o.metadata);
      if (!buyer) return { kind: 'ignored', reason: 'not a tenure checkout (no project_id, plan_id and user_id metadata)' };
      const subscriptionId = idOf(o.subscription);
      const invoiceId = idOf(o.invoice);
      const paymentIntentId = idOf(o.payment_intent);
      // A subscription's first payment is its first invoice, which invoice.paid reports too: one key for both.
      const key = o.mode === 'subscription' ? invoiceId : paymentIntentId;
      if (!key) return { kind: 'ignored', reason: `a paid ${String(o.mode)} session without its ${o.mode === 'subscription' ? 'invoice' : 'payment intent'}` };
      return {
        kind: 'paid',
        key,
        buyer,
        amountMinor: num(o.amount_total),
        currency: String(o.currency ?? '').toUpperCase(),
        checkoutSessionId: str(o.id),
        paymentIntentId,
        invoiceId,
        subscriptionId,
        customerId: idOf(o.customer),
        email: sessionEmail(o),
      };
    }
    case 'checkout.session.async_payment_succeeded':
      return changeOf({ ...event, type: 'checkout.session.completed', data: { object: { ...o, payment_status: 'paid' } } });
    case 'checkout.session.expired': {
      const sessionId = str(o.id);
      if (!sessionId) return { kind: 'ignored', reason: 'a session without an id' };
      return { kind: 'expired', sessionId };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed':
      return invoiceChange(event.type, o);
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscriptionId = str(o.id);
      if (!subscriptionId) return { kind: 'ignored', reason: 'a subscription without an id' };
      const status = event.type === 'customer.subscription.deleted' ? 'canceled' : (str(o.status) ?? 'unknown');
      // Ending at the period's end is `cancel_at_period_end`, or a `cancel_at` date (how newer API
      // versions and Stripe's billing portal may schedule it): either way the renewal is cancelled.
      const cancelAtPeriodEnd = event.type === 'customer.subscription.deleted' ? null : o.cancel_at_period_end === true || typeof o.cancel_at === 'number';
      return { kind: 'subscription', subscriptionId, status, buyer: buyerOf(o.metadata), cancelAtPeriodEnd };
    }
    case 'charge.refunded': {
      const paymentIntentId = idOf(o.payment_intent);
      if (!paymentIntentId) return { kind: 'ignored', reason: 'a charge of no payment intent' };
      // A partial refund leaves the purchase standing.
      if (o.refunded !== true) return { kind: 'ignored', reason: 'a partial refund' };
      return { kind: 'reversed', paymentIntentId, status: 'refunded' };
    }
    case 'charge.dispute.created': {
      const paymentIntentId = idOf(o.payment_intent);
      if (!paymentIntentId) return { kind: 'ignored', reason: 'a dispute of no payment intent' };
      return { kind: 'reversed', paymentIntentId, status: 'disputed' };
    }
    default:
      return { kind: 'ignored', reason: `tenure does not act on ${event.type}` };
  }
}
