/**
 * What the payments services need of Stripe (docs/payments.md), behind one small interface: the
 * stripe-node implementation is src/payments/stripe/stripe-api.ts, wired by the container, and
 * tests point it at a local fake of the API. Nothing here throws for what Stripe answers: the
 * answer is a value the service turns into the API's error vocabulary.
 */

/** Why Stripe did not do what was asked. */
export type StripeRefusal =
  /** Stripe refused the key (401) or its permissions (403): the merchant must act. */
  | { ok: false; kind: 'key'; status: number; message: string }
  /** Stripe refused the request itself (400, 404): tenure or the input is wrong. */
  | { ok: false; kind: 'request'; status: number; code: string | null; param: string | null; message: string }
  /** Stripe could not be asked (unreachable, timed out, 429, 5xx): try again later. */
  | { ok: false; kind: 'unavailable'; message: string };

export type StripeAnswer<T> = ({ ok: true } & T) | StripeRefusal;

export interface StripeAccountInfo {
  accountId: string;
  name: string | null;
}

/** A Checkout Session to create; amounts in the currency's smallest unit, currency lower-case. */
export interface CheckoutSessionRequest {
  mode: 'payment' | 'subscription';
  successUrl: string;
  cancelUrl: string;
  productName: string;
  unitAmount: number;
  currency: string;
  /** For a subscription: the billing interval. */
  recurring: { interval: 'day' | 'week' | 'month' | 'year'; intervalCount: number } | null;
  metadata: Record<string, string>;
  clientReferenceId: string;
  /** The Stripe coupon to apply (`discounts: [{coupon}]`), or none. */
  couponId: string | null;
  /** The member's Stripe customer with their invoicing details (docs/portal.md), or none: Stripe makes one at payment. */
  customerId?: string | null;
  /** A subscription's free trial in days (`subscription_data.trial_period_days`), or none. */
  trialDays?: number | null;
  /**
   * The project keeps the buyer's e-mail (setting collect_email_on_subscribe): a one-time payment
   * then makes a Stripe customer with it (`customer_creation: always`); Checkout asks every buyer
   * it has no customer for their e-mail.
   */
  collectEmail?: boolean;
  /** The key Stripe answers a retry with the first session by (up to 255 characters). */
  idempotencyKey: string;
}

/** A Stripe coupon to create (docs/coupons.md): either percentOff or amountOff with its currency (lower-case). */
export interface StripeCouponRequest {
  /** The coupon's id on Stripe, chosen by tenure: creating it again finds it instead of making a second. */
  id: string;
  name: string;
  percentOff: number | null;
  amountOff: number | null;
  currency: string | null;
  duration: 'once' | 'forever' | 'repeating';
  durationInMonths: number | null;
  metadata: Record<string, string>;
}

/**
 * A customer's billing details as Stripe shows them on invoices: `name`, `business_name` (the
 * company), `address`, and the VAT id as an invoice custom field (an empty value clears one).
 */
export interface StripeCustomerDetails {
  name: string;
  businessName: string;
  address: { line1: string; line2: string; city: string; postalCode: string; state: string; country: string } | null;
  vatId: string | null;
}

/** A Stripe event as tenure reads it: the id, type, creation (Unix seconds) and its object. */
export interface StripeEventLike {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  data: { object: Record<string, unknown> };
}

export interface StripeApi {
  /** Who the key belongs to (`GET /v1/account`). */
  account(secretKey: string): Promise<StripeAnswer<StripeAccountInfo>>;
  createCheckoutSession(secretKey: string, request: CheckoutSessionRequest): Promise<StripeAnswer<{ sessionId: string; url: string }>>;
  /** Creates the coupon (`POST /v1/coupons`); one that exists already with that id (made before) is an answer too. */
  createCoupon(secretKey: string, request: StripeCouponRequest): Promise<StripeAnswer<{ couponId: string }>>;
  /** A Checkout Session as Stripe has it now (`GET /v1/checkout/sessions/{id}`): the object, as an event carries it. */
  retrieveCheckoutSession(secretKey: string, sessionId: string): Promise<StripeAnswer<{ session: Record<string, unknown> }>>;
  /** A session of Stripe's customer portal for `customer` (`POST /v1/billing_portal/sessions`), which returns to `returnUrl`. */
  createBillingPortalSession(secretKey: string, request: { customer: string; returnUrl: string }): Promise<StripeAnswer<{ url: string }>>;
  /**
   * Sets whether the subscription ends at the end of its paid period (`POST /v1/subscriptions/{id}`
   * with `cancel_at_period_end`): the subscription as Stripe has it after, as its
   * `customer.subscription.updated` event carries it (docs/portal.md).
   */
  updateSubscription(secretKey: string, subscriptionId: string, change: { cancelAtPeriodEnd: boolean }): Promise<StripeAnswer<{ subscription: Record<string, unknown> }>>;
  /**
   * A customer with these billing details (`POST /v1/customers`), for a member's first checkout on
   * the account (docs/portal.md, "Invoicing details"); a retry with the same `idempotencyKey` gets
   * the same customer back.
   */
  createCustomer(
    secretKey: string,
    request: { details: StripeCustomerDetails; metadata: Record<string, string>; idempotencyKey: string },
  ): Promise<StripeAnswer<{ customerId: string }>>;
  /** The customer's billing details for invoices (`POST /v1/customers/{id}`); docs/portal.md, "Invoicing details". */
  updateCustomer(secretKey: string, customerId: string, details: StripeCustomerDetails): Promise<StripeAnswer<object>>;
  /** One page of the account's events, newest first, created at or after `since` (Unix seconds). */
  listEvents(
    secretKey: string,
    page: { since: number; types: readonly string[]; startingAfter: string | null; limit: number },
  ): Promise<StripeAnswer<{ events: StripeEventLike[]; hasMore: boolean }>>;
  /**
   * The event in `payload` when `signature` (the `Stripe-Signature` header) signs it with `secret`
   * within Stripe's tolerance (300 s); null otherwise.
   */
  verifyEvent(payload: string, signature: string, secret: string): Promise<StripeEventLike | null>;
}
