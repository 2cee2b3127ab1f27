import type { CheckoutCustomers } from '../invoicing/checkout-customer.js';
import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { PaymentsStore } from '../../store/payments.store.js';
import { fail, ok, type Result } from '../errors.js';
import { MISSING_KEY_MESSAGE } from '../integrations/encryption-key.js';
import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';
import type { PlanTerms } from '../plans/plan.view.js';
import type { CheckoutCoupons } from './checkout-coupons.js';
import { checkoutIdempotencyKey, minorUnits, recurringOf } from './checkout-rules.js';
import type { CouponCandidate } from './coupon-rules.js';
import { errorOfRefusal } from './merchant-accounts.service.js';
import type { CheckoutSessionRequest, StripeApi } from './stripe-api.js';

/**
 * Checkout (docs/payments.md, "Checkout"): a Stripe Checkout Session for one
 * member and one plan, paid once (`payment`) or a subscription renewing by the plan's duration.
 * The session's metadata (and the subscription's) names the project, plan and user, which is how
 * Stripe's events find the membership again. The membership follows the payment, from Stripe's
 * events; the one thing written here is a coupon's use, reserved for the session (docs/payments.md,
 * "Coupons at checkout").
 */

export interface CheckoutInput {
  plan_id: string;
  user_id: string;
  success_url: string;
  cancel_url: string;
  coupon?: string;
  merchant_account_id?: string;
}

export interface CheckoutView {
  session_id: string;
  checkout_url: string;
  mode: 'payment' | 'subscription';
  merchant_account_id: string;
  /** The coupon the session is discounted by (named, or applied automatically); null for none. */
  coupon_id: string | null;
  coupon_code: string | null;
  /** For a plan with a trial (docs/payments.md, "Trials"): the trial the session starts with; null: this member had theirs, it charges at once. */
  trial_days?: number | null;
}

/** The merchant account a checkout charges with. */
export type CheckoutAccounts = Pick<MerchantAccountsStore, 'forCheckout'>;

/**
 * Whether the user is banned (a banned user gets no membership, so no checkout either), and the
 * member's one trial in the project (docs/payments.md, "Trials").
 */
export type BanCheck = Pick<PaymentsStore, 'isBanned'> & Partial<Pick<PaymentsStore, 'reserveTrial' | 'attachTrialSession' | 'releaseTrial'>>;

/** What a checkout reads of the project's settings: whether the buyer's e-mail is kept (collect_email_on_subscribe). */
export type CheckoutSettings = (projectId: string) => Promise<{ collectEmail: boolean }>;

/** What checkout reads of a plan: the plans service's `terms` (no targets: their counts cost a count of members). */
export interface PlanReader {
  terms(projectId: string, planId: string): Promise<Result<PlanTerms>>;
}

const MAX_URL_LENGTH = 2048;
const RECONNECT = 'Connect the merchant account again with a current key';
const usedUp = (c: CouponCandidate) =>
  c.maxUses === null ? `Coupon ${c.code} is no longer available (it expired or was deleted)` : `Coupon ${c.code} has been used up (max_uses ${c.maxUses})`;

/** What Stripe is asked to charge for `plan`, or why it cannot be sold through Stripe. */
export function chargeOf(plan: PlanTerms): Result<{ amount: number; recurring: ReturnType<typeof recurringOf> }> {
  const { plan_price: price, plan_currency: currency, plan_duration: duration } = plan;
  const amount = minorUnits(price, currency);
  if (amount === null) return fail('VALIDATION_ERROR', `The plan's price ${price} ${currency} has more decimals than ${currency} has: it cannot be charged`);
  if (amount === 0) return fail('VALIDATION_ERROR', 'The plan is free: there is nothing to pay; create the membership instead (POST /memberships)');
  const recurring = plan.plan_data.plan_recurring ? recurringOf(duration) : null;
  if (plan.plan_data.plan_recurring && !recurring) {
    return fail('VALIDATION_ERROR', `The plan renews every ${duration}, and Stripe bills subscriptions by day, week, month or year only`);
  }
  return ok({ amount, recurring });
}

export class CheckoutService {
  constructor(
    private readonly accounts: CheckoutAccounts,
    private readonly payments: BanCheck,
    private readonly plans: PlanReader,
    private readonly box: SecretBox | null,
    private readonly stripe: Pick<StripeApi, 'createCheckoutSession'>,
    private readonly coupons: CheckoutCoupons,
    /** The member's customer with their invoicing details (src/domain/invoicing/checkout-customer.ts); null: never one. */
    private readonly customers: Pick<CheckoutCustomers, 'customerFor'> | null = null,
    private readonly settings: CheckoutSettings = () => Promise.resolve({ collectEmail: false }),
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(projectId: string, input: CheckoutInput): Promise<Result<CheckoutView>> {
    for (const field of ['success_url', 'cancel_url'] as const) {
      const url = input[field];
      if (url.length > MAX_URL_LENGTH || !/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) {
        return fail('VALIDATION_ERROR', `${field} must be an http:// or https:// URL of at most ${MAX_URL_LENGTH} characters`);
      }
    }
    const plan = await this.plans.terms(projectId, input.plan_id);
    if (!plan.ok) return plan;
    const { plan_currency: currency, plan_duration: duration } = plan.value;
    const charge = chargeOf(plan.value);
    if (!charge.ok) return charge;
    const { amount, recurring } = charge.value;
    if (await this.payments.isBanned(projectId, input.user_id)) return fail('CONFLICT', `User ${input.user_id} is banned from this project`);
    const mode = recurring ? 'subscription' : 'payment';
    // The plan's id as stored (lower-case), as a coupon's plan_ids are: the request may spell it in capitals.
    const choice = await this.coupons.choose(projectId, input.user_id, input.coupon, { planId: plan.value.plan_id, currency, unitAmount: amount, mode });
    if (!choice.ok) return choice;
    const account = await this.accounts.forCheckout(projectId, 'stripe', input.merchant_account_id ?? null);
    if (!account) {
      return input.merchant_account_id
        ? fail('NOT_FOUND', 'Merchant account not found')
        : fail('CONFLICT', 'No Stripe account is connected to this project: connect one first (POST /merchant-accounts)');
    }
    if (!this.box) return fail('SERVICE_UNAVAILABLE', MISSING_KEY_MESSAGE);
    let secretKey: string;
    try {
      secretKey = this.box.open(account.secretKeySealed);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      return fail('CONFLICT', `The merchant account's secret key cannot be opened (${err.message}); connect the account again`);
    }
    const { collectEmail } = await this.settings(projectId);
    const metadata: Record<string, string> = { project_id: projectId, plan_id: input.plan_id, user_id: input.user_id, ...(collectEmail ? { collect_email: 'true' } : {}) };
    const customerId = this.customers ? await this.customers.customerFor(projectId, input.user_id, account.id, secretKey) : null;
    const request: CheckoutSessionRequest = {
      mode,
      successUrl: input.success_url,
      cancelUrl: input.cancel_url,
      productName: plan.value.plan_name,
      unitAmount: amount,
      currency: currency.toLowerCase(),
      recurring,
      metadata,
      clientReferenceId: input.user_id,
      couponId: null,
      customerId,
      collectEmail,
      idempotencyKey: '',
    };
    const keyParts: Record<string, string | number | boolean> = {
      merchant_account_id: account.id,
      ...metadata,
      success_url: input.success_url,
      cancel_url: input.cancel_url,
      amount,
      currency,
      duration,
      mode,
      product: plan.value.plan_name,
      // A session for the member's customer is another session (a key without it stays as it was).
      ...(customerId ? { customer: customerId } : {}),
      ...(collectEmail ? { collect_email: true } : {}),
    };
    // The member's one trial in the project, decided now (docs/payments.md, "Trials"): reserved
    // for this checkout, or had already (then the session charges at once).
    const trialDays = mode === 'subscription' ? await this.trialFor(projectId, input.user_id, plan.value, keyParts) : null;
    if (trialDays !== null) {
      keyParts.trial_days = trialDays;
      metadata.trial_days = String(trialDays);
      request.trialDays = trialDays;
    }
    const trialKey = trialDays !== null ? checkoutIdempotencyKey(keyParts) : null;
    // Only a plan with a trial says whether this session has it: other answers stay as they were.
    const trialView = plan.value.trial_days !== undefined && mode === 'subscription' ? { trial_days: trialDays } : {};
    const view = { mode, merchant_account_id: account.id } as const;
    for (const coupon of choice.value.candidates) {
      // The coupon is part of what the session is made of: another coupon is another session.
      const idempotencyKey = checkoutIdempotencyKey({ ...keyParts, coupon_id: coupon.id });
      const reserved = await this.coupons.reserve({ projectId, couponId: coupon.id, checkoutKey: idempotencyKey, userId: input.user_id, planId: plan.value.plan_id });
      if (reserved === 'none') {
        // Taken by another checkout since it was read (or expired, or deleted): a named coupon is refused, an automatic one gives way.
        if (choice.value.named) return fail('VALIDATION_ERROR', usedUp(coupon));
        continue;
      }
      const withCoupon = await this.withCoupon(secretKey, account, { ...request, idempotencyKey }, coupon, reserved === 'reserved', view);
      await this.settleTrial(projectId, input.user_id, trialKey, withCoupon.ok ? { ok: true, sessionId: withCoupon.value.session_id } : withCoupon.error.status === 503 ? null : { ok: false });
      return withCoupon.ok ? ok({ ...withCoupon.value, ...trialView }) : withCoupon;
    }
    const session = await this.stripe.createCheckoutSession(secretKey, { ...request, idempotencyKey: checkoutIdempotencyKey(keyParts) });
    await this.settleTrial(projectId, input.user_id, trialKey, session);
    if (!session.ok) return { ok: false, error: errorOfRefusal(session, 'the Checkout Session', RECONNECT) };
    return ok({ session_id: session.sessionId, checkout_url: session.url, ...view, coupon_id: null, coupon_code: null, ...trialView });
  }

  /**
   * The trial this checkout offers: the plan's `trial_days` when the member's one trial in the
   * project is still theirs to take (reserved for this checkout, keyed by what the session is made
   * of); null when they had it (or have it reserved by another open session), or the plan has none.
   */
  private async trialFor(projectId: string, userId: string, plan: PlanTerms, keyParts: Record<string, string | number | boolean>): Promise<number | null> {
    const days = plan.trial_days ?? null;
    if (days === null || !this.payments.reserveTrial) return null;
    const checkoutKey = checkoutIdempotencyKey({ ...keyParts, trial_days: days });
    return (await this.payments.reserveTrial({ projectId, userId, planId: plan.plan_id, trialDays: days, checkoutKey }, this.now())) ? days : null;
  }

  /**
   * A trial reservation follows its session: attached to it (its expiry gives the trial back), or
   * given back when Stripe refused to make it; kept when Stripe could not be asked (null), since
   * the session may exist: a retry finds both again.
   */
  private async settleTrial(projectId: string, userId: string, trialKey: string | null, session: { ok: true; sessionId: string } | { ok: false; kind?: string } | null): Promise<void> {
    if (!trialKey || !session) return;
    if (session.ok) await this.payments.attachTrialSession?.(projectId, userId, trialKey, session.sessionId);
    else if (session.kind !== 'unavailable') await this.payments.releaseTrial?.(projectId, userId, trialKey);
  }

  /**
   * The session discounted by `coupon`, whose use the checkout holds. A use this call reserved is
   * given back when Stripe refuses (the key, the request); when Stripe could not be asked for the
   * session it stays held, since the session may exist: a retry of the checkout finds both again.
   * A retry after the session expired takes the use up again, and Stripe answers it with that same
   * expired session (its idempotency key): the use goes back at once.
   */
  private async withCoupon(
    secretKey: string,
    account: Parameters<CheckoutCoupons['stripeCouponFor']>[1],
    request: CheckoutSessionRequest,
    coupon: CouponCandidate,
    reservedNow: boolean,
    view: Pick<CheckoutView, 'mode' | 'merchant_account_id'>,
  ): Promise<Result<CheckoutView>> {
    const giveBack = async () => {
      if (reservedNow) await this.coupons.release(coupon.id, request.idempotencyKey);
    };
    const stripeCoupon = await this.coupons.stripeCouponFor(coupon, account, secretKey);
    if (!stripeCoupon.ok) {
      // No session was asked for: nothing can hold the use.
      await giveBack();
      return stripeCoupon;
    }
    const session = await this.stripe.createCheckoutSession(secretKey, { ...request, couponId: stripeCoupon.value });
    if (!session.ok) {
      const error = errorOfRefusal(session, 'the Checkout Session', RECONNECT);
      if (error.status !== 503) await giveBack();
      return { ok: false, error };
    }
    const sameSession = await this.coupons.attachSession(coupon.id, request.idempotencyKey, session.sessionId);
    if (sameSession) await giveBack();
    return ok({ session_id: session.sessionId, checkout_url: session.url, ...view, coupon_id: coupon.id, coupon_code: coupon.code });
  }
}
