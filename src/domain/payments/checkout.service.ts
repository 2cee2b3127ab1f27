import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { PaymentsStore } from '../../store/payments.store.js';
import { fail, ok, type Result } from '../errors.js';
import { MISSING_KEY_MESSAGE } from '../integrations/encryption-key.js';
import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';
import type { PlanView } from '../plans/plan.view.js';
import { checkoutIdempotencyKey, minorUnits, recurringOf } from './checkout-rules.js';
import { errorOfRefusal } from './merchant-accounts.service.js';
import type { StripeApi } from './stripe-api.js';

/**
 * Checkout (docs/payments.md, "Checkout"; DESIGN.md, "Payments"): a Stripe Checkout Session for one
 * member and one plan, paid once (`payment`) or a subscription renewing by the plan's duration.
 * The session's metadata (and the subscription's) names the project, plan and user, which is how
 * Stripe's events find the membership again; nothing is written here: the membership follows
 * the payment, from Stripe's events.
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
}

/** What checkout reads of a plan: the plans service's `get`. */
export interface PlanReader {
  get(projectId: string, planId: string): Promise<Result<PlanView>>;
}

const MAX_URL_LENGTH = 2048;

export class CheckoutService {
  constructor(
    private readonly accounts: MerchantAccountsStore,
    private readonly payments: PaymentsStore,
    private readonly plans: PlanReader,
    private readonly box: SecretBox | null,
    private readonly stripe: StripeApi,
  ) {}

  async create(projectId: string, input: CheckoutInput): Promise<Result<CheckoutView>> {
    for (const field of ['success_url', 'cancel_url'] as const) {
      const url = input[field];
      if (url.length > MAX_URL_LENGTH || !/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) {
        return fail('VALIDATION_ERROR', `${field} must be an http:// or https:// URL of at most ${MAX_URL_LENGTH} characters`);
      }
    }
    if (input.coupon !== undefined) return fail('VALIDATION_ERROR', 'coupon is not supported yet: coupons are not built; leave it out');
    const plan = await this.plans.get(projectId, input.plan_id);
    if (!plan.ok) return plan;
    const { plan_price: price, plan_currency: currency, plan_duration: duration } = plan.value;
    const amount = minorUnits(price, currency);
    if (amount === null) return fail('VALIDATION_ERROR', `The plan's price ${price} ${currency} has more decimals than ${currency} has: it cannot be charged`);
    if (amount === 0) return fail('VALIDATION_ERROR', 'The plan is free: there is nothing to pay; create the membership instead (POST /memberships)');
    const recurring = plan.value.plan_data.plan_recurring ? recurringOf(duration) : null;
    if (plan.value.plan_data.plan_recurring && !recurring) {
      return fail('VALIDATION_ERROR', `The plan renews every ${duration}, and Stripe bills subscriptions by day, week, month or year only`);
    }
    if (await this.payments.isBanned(projectId, input.user_id)) return fail('CONFLICT', `User ${input.user_id} is banned from this project`);
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
    const mode = recurring ? 'subscription' : 'payment';
    const metadata = { project_id: projectId, plan_id: input.plan_id, user_id: input.user_id };
    const session = await this.stripe.createCheckoutSession(secretKey, {
      mode,
      successUrl: input.success_url,
      cancelUrl: input.cancel_url,
      productName: plan.value.plan_name,
      unitAmount: amount,
      currency: currency.toLowerCase(),
      recurring,
      metadata,
      clientReferenceId: input.user_id,
      idempotencyKey: checkoutIdempotencyKey({
        merchant_account_id: account.id,
        ...metadata,
        success_url: input.success_url,
        cancel_url: input.cancel_url,
        amount,
        currency,
        duration,
        mode,
        product: plan.value.plan_name,
      }),
    });
    if (!session.ok) return { ok: false, error: errorOfRefusal(session, 'the Checkout Session', 'Connect the merchant account again with a current key') };
    return ok({ session_id: session.sessionId, checkout_url: session.url, mode, merchant_account_id: account.id });
  }
}
