import { randomBytes } from 'node:crypto';

/**
 * The world behind the fake Stripe API (fake-stripe.ts): accounts and their secret keys, Checkout
 * Sessions, and what a customer's payment makes of them (payment intents, charges, customers,
 * subscriptions, invoices, and the events Stripe sends about each). Objects carry the fields of
 * Stripe's API reference (https://docs.stripe.com/api) that tenure reads, with their documented
 * shapes: ids prefixed by kind (`cs_test_`, `pi_`, `ch_`, `in_`, `sub_`, `cus_`, `evt_`), amounts
 * in the currency's smallest unit, instants in Unix seconds, `metadata` string to string.
 *
 * A test plays the customer and Stripe's billing: `pay` completes a session (a one-time payment,
 * or the first invoice of a subscription), `expire` lets an open session lapse unpaid, `renew` pays
 * a subscription's next invoice, `refund`, `dispute`, `setStatus` and `cancel` change what was
 * paid; each returns the events Stripe would send, in the order it would, which the test then
 * delivers (signed) in whatever order it means to.
 *
 * Coupons (API reference: Coupons; Checkout Sessions `discounts`; "Coupons and promotion codes"):
 * a session's coupon takes its discount off `amount_total` (`total_details.amount_discount`); on a
 * subscription it discounts the first invoice, then the renewals its `duration` covers (`forever`:
 * all; `repeating`: those within `duration_in_months` of the start; `once`: none). A coupon's
 * `times_redeemed` counts the sessions paid with it.
 */

export type Metadata = Record<string, string>;

export interface Account {
  id: string;
  /** `sk_test_…` keys are test mode (livemode false), `sk_live_…` live. */
  livemode: boolean;
  name: string;
  secretKeys: Set<string>;
  events: StripeEvent[];
}

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: boolean;
  type: string;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

export interface Session {
  id: string;
  object: 'checkout.session';
  mode: 'payment' | 'subscription';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid' | 'no_payment_required';
  url: string | null;
  success_url: string;
  cancel_url: string | null;
  client_reference_id: string | null;
  metadata: Metadata;
  currency: string;
  amount_subtotal: number;
  amount_total: number;
  customer: string | null;
  /** Payment mode: `always` makes a customer at payment whatever else; `if_required` (default) only when needed. Null otherwise. */
  customer_creation: 'always' | 'if_required' | null;
  /** Set when the session completes: what Checkout collected, the e-mail among it. */
  customer_details: { email: string | null; name: string | null } | null;
  payment_intent: string | null;
  subscription: string | null;
  invoice: string | null;
  discounts: { coupon: string | null; promotion_code: string | null }[];
  total_details: { amount_discount: number; amount_shipping: number; amount_tax: number };
  livemode: boolean;
  created: number;
  expires_at: number;
  /** Not an API field: what the session was created with, as the fake received it. */
  params: Record<string, unknown>;
}

export interface Coupon {
  id: string;
  object: 'coupon';
  amount_off: number | null;
  currency: string | null;
  percent_off: number | null;
  duration: 'once' | 'forever' | 'repeating';
  duration_in_months: number | null;
  max_redemptions: number | null;
  redeem_by: number | null;
  times_redeemed: number;
  valid: boolean;
  name: string | null;
  metadata: Metadata;
  created: number;
  livemode: boolean;
}

/** What `coupon` takes off `amount`: Stripe rounds a percentage to the smallest unit, and takes no more than the amount. */
export function discountOn(coupon: Pick<Coupon, 'percent_off' | 'amount_off'>, amount: number): number {
  if (coupon.percent_off !== null) return Math.round((amount * coupon.percent_off) / 100);
  return Math.min(coupon.amount_off ?? 0, amount);
}

export interface Subscription {
  id: string;
  object: 'subscription';
  status: 'active' | 'past_due' | 'unpaid' | 'canceled' | 'incomplete' | 'trialing';
  customer: string;
  /** Unix seconds; null without a trial. */
  trial_start: number | null;
  trial_end: number | null;
  metadata: Metadata;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  ended_at: number | null;
  created: number;
  livemode: boolean;
  items: { object: 'list'; data: { id: string; price: { unit_amount: number; currency: string; recurring: unknown } }[] };
  /** The coupon the subscription was started with (Stripe: `discounts`, the Discount objects; here their coupon ids). */
  discounts: string[];
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_refunded: number;
  currency: string;
  paid: boolean;
  refunded: boolean;
  status: 'succeeded' | 'failed';
  payment_intent: string;
  customer: string | null;
  metadata: Metadata;
  created: number;
  livemode: boolean;
}

const API_VERSION = '2026-10-28.endive';
const unixNow = () => Math.floor(Date.now() / 1000);
export const stripeId = (prefix: string, n = 24) => `${prefix}_${randomBytes(n).toString('base64url').replace(/[-_]/g, 'x').slice(0, n)}`;

export class StripeWorld {
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session & { account: string }>();
  readonly subscriptions = new Map<string, Subscription & { account: string }>();
  /** A subscription's invoice whose payment failed, until a renewal pays it (Stripe retries that invoice). */
  private readonly openInvoices = new Map<string, Record<string, unknown>>();
  readonly charges = new Map<string, Charge & { account: string }>();
  /** Coupons by account, then by id (ids are unique per account). */
  readonly coupons = new Map<string, Map<string, Coupon>>();
  /** The clock of the objects and events the world makes, Unix seconds; tests may move it. */
  now: () => number = unixNow;

  /** A new account with one secret key of its mode. */
  addAccount(o: { livemode?: boolean; name?: string } = {}): { account: Account; secretKey: string } {
    const livemode = o.livemode ?? false;
    const account: Account = { id: stripeId('acct', 16), livemode, name: o.name ?? 'Test merchant', secretKeys: new Set(), events: [] };
    this.accounts.set(account.id, account);
    return { account, secretKey: this.addKey(account) };
  }

  /** Another secret key of `account` (a rolled key). */
  addKey(account: Account): string {
    const key = `sk_${account.livemode ? 'live' : 'test'}_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'k')}`;
    account.secretKeys.add(key);
    return key;
  }

  accountOfKey(key: string): Account | undefined {
    for (const account of this.accounts.values()) if (account.secretKeys.has(key)) return account;
    return undefined;
  }

  session(id: string): Session & { account: string } {
    const s = this.sessions.get(id);
    if (!s) throw new Error(`fake Stripe: no session ${id}`);
    return s;
  }

  couponsOf(account: string): Map<string, Coupon> {
    let coupons = this.coupons.get(account);
    if (!coupons) this.coupons.set(account, (coupons = new Map()));
    return coupons;
  }

  /** The session lapses unpaid (Stripe: at its `expires_at`, 24 hours by default): `checkout.session.expired`. */
  expire(id: string): StripeEvent[] {
    const s = this.session(id);
    if (s.status !== 'open') throw new Error(`fake Stripe: session ${id} is ${s.status}`);
    s.status = 'expired';
    s.url = null;
    return [this.emit(this.accounts.get(s.account)!, 'checkout.session.expired', this.view(s))];
  }

  /**
   * The customer pays session `id`: a one-time payment (payment intent, charge) or a subscription's
   * first invoice. The events, in Stripe's order: a subscription's `customer.subscription.created`
   * and `invoice.paid` before `checkout.session.completed`.
   */
  pay(id: string, buyer: { email?: string } = {}): StripeEvent[] {
    const s = this.session(id);
    if (s.status !== 'open') throw new Error(`fake Stripe: session ${id} is ${s.status}`);
    const account = this.accounts.get(s.account)!;
    // A session made for an existing customer is paid by them; otherwise Stripe makes one.
    const customer = s.customer ?? stripeId('cus', 14);
    s.customer = customer;
    s.status = 'complete';
    s.url = null;
    // Checkout asks the buyer for their e-mail (docs: customer_email, "If not provided, customers will be asked to enter their email address").
    s.customer_details = { email: buyer.email ?? 'buyer@example.com', name: null };
    const trialDays = Number((s.params as { subscription_data?: { trial_period_days?: string } }).subscription_data?.trial_period_days ?? 0);
    // With a trial nothing is paid today: Stripe says so with `no_payment_required` (docs: Checkout Session, payment_status).
    s.payment_status = trialDays > 0 ? 'no_payment_required' : 'paid';
    const couponId = s.discounts[0]?.coupon ?? null;
    if (couponId) this.couponsOf(account.id).get(couponId)!.times_redeemed += 1;
    const events: StripeEvent[] = [];
    if (s.mode === 'payment') {
      const charge = this.charge(account, s.amount_total, s.currency, customer, s.metadata);
      s.payment_intent = charge.payment_intent;
      events.push(this.emit(account, 'charge.succeeded', this.view(charge)));
    } else {
      const params = s.params as { subscription_data?: { metadata?: Metadata }; line_items?: { price_data?: { recurring?: unknown } }[] };
      const sub: Subscription & { account: string } = {
        id: stripeId('sub', 14),
        object: 'subscription',
        status: trialDays > 0 ? 'trialing' : 'active',
        customer,
        trial_start: trialDays > 0 ? this.now() : null,
        trial_end: trialDays > 0 ? this.now() + trialDays * 86_400 : null,
        metadata: { ...(params.subscription_data?.metadata ?? {}) },
        cancel_at_period_end: false,
        canceled_at: null,
        ended_at: null,
        created: this.now(),
        livemode: account.livemode,
        items: { object: 'list', data: [{ id: stripeId('si', 14), price: { unit_amount: s.amount_subtotal, currency: s.currency, recurring: params.line_items?.[0]?.price_data?.recurring ?? null } }] },
        discounts: couponId ? [couponId] : [],
        account: account.id,
      };
      this.subscriptions.set(sub.id, sub);
      s.subscription = sub.id;
      events.push(this.emit(account, 'customer.subscription.created', this.view(sub)));
      // A trial's first invoice is for $0, paid at once with no charge (docs: "An immediate invoice is still created, but for $0").
      const { invoice, events: paid } = trialDays > 0 ? this.zeroInvoice(account, sub) : this.invoicePaid(account, sub, 'subscription_create');
      s.invoice = invoice.id as string;
      events.push(...paid);
    }
    events.push(this.emit(account, 'checkout.session.completed', this.view(s)));
    return events;
  }

  /**
   * Three days before a trial ends Stripe sends `customer.subscription.trial_will_end` (docs:
   * "Using trial periods", "Subscription webhooks"); the subscription is unchanged.
   */
  trialWillEnd(subscriptionId: string): StripeEvent[] {
    const sub = this.subscriptionOf(subscriptionId);
    if (sub.status !== 'trialing') throw new Error(`fake Stripe: subscription ${subscriptionId} is ${sub.status}, not trialing`);
    return [this.emit(this.accounts.get(sub.account)!, 'customer.subscription.trial_will_end', this.view(sub))];
  }

  /**
   * The trial ends: Stripe makes the first real invoice and charges it (a new billing cycle); the
   * subscription turns `active` (`customer.subscription.updated`) and the invoice is paid
   * (`invoice.paid`), or, `failed`, the invoice's payment fails and the subscription goes `past_due`.
   */
  endTrial(subscriptionId: string, o: { failed?: boolean } = {}): StripeEvent[] {
    const sub = this.subscriptionOf(subscriptionId);
    if (sub.status !== 'trialing') throw new Error(`fake Stripe: subscription ${subscriptionId} is ${sub.status}, not trialing`);
    return o.failed ? this.failRenewal(subscriptionId) : this.renew(subscriptionId);
  }

  /** The subscription's next invoice is paid (a renewal). */
  renew(subscriptionId: string): StripeEvent[] {
    const sub = this.subscriptionOf(subscriptionId);
    const account = this.accounts.get(sub.account)!;
    const events: StripeEvent[] = [];
    if (sub.status !== 'active') events.push(this.setStatusEvent(sub, 'active'));
    // An invoice whose payment failed is the one paid (Stripe retries it), not a new one.
    const open = this.openInvoices.get(sub.id);
    this.openInvoices.delete(sub.id);
    events.push(...this.invoicePaid(account, sub, 'subscription_cycle', open?.id as string | undefined).events);
    return events;
  }

  /** The subscription's next invoice fails: `invoice.payment_failed`, then the subscription goes past_due. */
  failRenewal(subscriptionId: string): StripeEvent[] {
    const sub = this.subscriptionOf(subscriptionId);
    const account = this.accounts.get(sub.account)!;
    const item = sub.items.data[0]!.price;
    const invoice = this.invoice(sub, 'subscription_cycle', item.unit_amount, item.currency, 'open', null);
    this.openInvoices.set(sub.id, invoice);
    return [this.emit(account, 'invoice.payment_failed', invoice), this.setStatusEvent(sub, 'past_due')];
  }

  setStatus(subscriptionId: string, status: Subscription['status']): StripeEvent[] {
    return [this.setStatusEvent(this.subscriptionOf(subscriptionId), status)];
  }

  /** The subscription ends now (cancelled, or Stripe gave up on its unpaid invoices). */
  cancel(subscriptionId: string): StripeEvent[] {
    const sub = this.subscriptionOf(subscriptionId);
    const account = this.accounts.get(sub.account)!;
    sub.status = 'canceled';
    sub.canceled_at = sub.ended_at = this.now();
    return [this.emit(account, 'customer.subscription.deleted', this.view(sub))];
  }

  /** The whole of the charge behind `paymentIntent` is refunded. */
  refund(paymentIntent: string): StripeEvent[] {
    const charge = this.chargeOf(paymentIntent);
    charge.amount_refunded = charge.amount;
    charge.refunded = true;
    return [this.emit(this.accounts.get(charge.account)!, 'charge.refunded', this.view(charge))];
  }

  /** The cardholder disputes the charge behind `paymentIntent`. */
  dispute(paymentIntent: string): StripeEvent[] {
    const charge = this.chargeOf(paymentIntent);
    const dispute = {
      id: stripeId('dp', 14),
      object: 'dispute',
      amount: charge.amount,
      currency: charge.currency,
      charge: charge.id,
      payment_intent: paymentIntent,
      reason: 'fraudulent',
      status: 'needs_response',
      created: this.now(),
      livemode: charge.livemode,
      metadata: {},
    };
    return [this.emit(this.accounts.get(charge.account)!, 'charge.dispute.created', dispute)];
  }

  private subscriptionOf(id: string): Subscription & { account: string } {
    const sub = this.subscriptions.get(id);
    if (!sub) throw new Error(`fake Stripe: no subscription ${id}`);
    return sub;
  }

  private chargeOf(paymentIntent: string): Charge & { account: string } {
    for (const c of this.charges.values()) if (c.payment_intent === paymentIntent) return c;
    throw new Error(`fake Stripe: no charge of ${paymentIntent}`);
  }

  private setStatusEvent(sub: Subscription & { account: string }, status: Subscription['status']): StripeEvent {
    const previous = sub.status;
    sub.status = status;
    return this.emit(this.accounts.get(sub.account)!, 'customer.subscription.updated', this.view(sub), { status: previous });
  }

  private charge(account: Account, amount: number, currency: string, customer: string | null, metadata: Metadata): Charge & { account: string } {
    const charge: Charge & { account: string } = {
      id: stripeId('ch', 24),
      object: 'charge',
      amount,
      amount_refunded: 0,
      currency,
      paid: true,
      refunded: false,
      status: 'succeeded',
      payment_intent: stripeId('pi', 24),
      customer,
      metadata: { ...metadata },
      created: this.now(),
      livemode: account.livemode,
      account: account.id,
    };
    this.charges.set(charge.id, charge);
    return charge;
  }

  /** A paid invoice of `sub`: its charge, `invoice.paid` (the Invoice of API 2025-03-31 on: `parent.subscription_details`, `payments`). */
  private invoicePaid(account: Account, sub: Subscription & { account: string }, reason: string, invoiceId?: string): { invoice: Record<string, unknown>; events: StripeEvent[] } {
    const item = sub.items.data[0]!.price;
    const amount = item.unit_amount - this.subscriptionDiscount(sub, reason, item.unit_amount);
    const charge = this.charge(account, amount, item.currency, sub.customer, {});
    const invoice = { ...this.invoice(sub, reason, amount, item.currency, 'paid', charge.payment_intent), ...(invoiceId ? { id: invoiceId } : {}) };
    return { invoice, events: [this.emit(account, 'charge.succeeded', this.view(charge)), this.emit(account, 'invoice.paid', invoice)] };
  }

  /** A trial's first invoice: $0, paid without a charge or payment (`invoice.paid`, no `payments`). */
  private zeroInvoice(account: Account, sub: Subscription & { account: string }): { invoice: Record<string, unknown>; events: StripeEvent[] } {
    const item = sub.items.data[0]!.price;
    const invoice = this.invoice(sub, 'subscription_create', 0, item.currency, 'paid', null);
    return { invoice, events: [this.emit(account, 'invoice.paid', invoice)] };
  }

  /** What the subscription's coupon takes off this invoice: the first always, renewals as its duration says. */
  private subscriptionDiscount(sub: Subscription & { account: string }, reason: string, amount: number): number {
    const coupon = sub.discounts[0] ? this.couponsOf(sub.account).get(sub.discounts[0]) : undefined;
    if (!coupon) return 0;
    const applies =
      reason === 'subscription_create' ||
      coupon.duration === 'forever' ||
      (coupon.duration === 'repeating' && this.now() < sub.created + (coupon.duration_in_months ?? 0) * 30.44 * 86_400);
    return applies ? discountOn(coupon, amount) : 0;
  }

  private invoice(sub: Subscription, reason: string, amount: number, currency: string, status: 'paid' | 'open', paymentIntent: string | null) {
    const now = this.now();
    return {
      id: stripeId('in', 24),
      object: 'invoice',
      status,
      billing_reason: reason,
      customer: sub.customer,
      currency,
      amount_due: amount,
      amount_paid: status === 'paid' ? amount : 0,
      total: amount,
      created: now,
      period_start: now,
      period_end: now,
      livemode: sub.livemode,
      metadata: {},
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: { ...sub.metadata } } },
      payments: {
        object: 'list',
        data: paymentIntent ? [{ object: 'invoice_payment', status: 'paid', payment: { type: 'payment_intent', payment_intent: paymentIntent } }] : [],
      },
    };
  }

  /** An object as the API shows it: without the fake's own bookkeeping. */
  view<T extends object>(o: T): Record<string, unknown> {
    const { account: _a, params: _p, ...rest } = o as T & { account?: unknown; params?: unknown };
    return structuredClone(rest) as Record<string, unknown>;
  }

  emit(account: Account, type: string, object: Record<string, unknown>, previous?: Record<string, unknown>): StripeEvent {
    const event: StripeEvent = {
      id: stripeId('evt', 24),
      object: 'event',
      api_version: API_VERSION,
      created: this.now(),
      livemode: account.livemode,
      type,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) },
    };
    account.events.push(event);
    return event;
  }
}
