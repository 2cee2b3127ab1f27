import type Stripe from 'stripe';
import type { StripeEndpoint } from '../../config.js';
import type { StripeApi, StripeEventLike, StripeRefusal } from '../../domain/payments/stripe-api.js';
import { LazyLibrary } from '../../lazy-library.js';
import { StripeClients } from './stripe-clients.js';

/**
 * tenure's calls to Stripe through stripe-node (docs/payments.md). TENURE_STRIPE_API_URL reaches
 * it as the client's `host`, `port` and `protocol`. A request path waits on these calls, so they
 * are short: 10 s a try and one network retry (stripe-node then sends its own idempotency key, so
 * a retried POST never makes two objects). Telemetry is off: nothing about tenure's calls goes to
 * Stripe beyond the calls themselves.
 *
 * stripe-node is loaded at the first call or webhook (src/lazy-library.ts): a server with no Stripe
 * account never loads it.
 */

const TIMEOUT_MS = 10_000;

export const stripeLibrary = new LazyLibrary('stripe', async () => (await import('stripe')).default);

/** The errors of stripe-node tenure tells apart (each extends StripeError). */
type StripeErrorName =
  | 'StripeError'
  | 'StripeAuthenticationError'
  | 'StripePermissionError'
  | 'StripeRateLimitError'
  | 'StripeConnectionError'
  | 'StripeSignatureVerificationError';

/** One of stripe-node's errors; false while stripe-node is not loaded, when none can exist. */
function isStripeError<E extends StripeErrorName>(err: unknown, kind: E): err is InstanceType<(typeof Stripe.errors)[E]> {
  return stripeLibrary.instanceOf(err, (lib) => lib.errors[kind]);
}

/** The answer tenure gives for what stripe-node threw: never the key, which Stripe's own messages mask anyway. */
export function refusalOf(err: unknown): StripeRefusal {
  if (isStripeError(err, 'StripeAuthenticationError')) {
    return { ok: false, kind: 'key', status: 401, message: 'Stripe refused the secret key (401): copy a current secret key from the Stripe Dashboard (Developers, API keys)' };
  }
  if (isStripeError(err, 'StripePermissionError')) {
    return { ok: false, kind: 'key', status: 403, message: `Stripe refused the key's permissions (403): ${err.message}` };
  }
  if (isStripeError(err, 'StripeRateLimitError')) return { ok: false, kind: 'unavailable', message: 'Stripe is rate limiting this account (429)' };
  if (isStripeError(err, 'StripeConnectionError')) return { ok: false, kind: 'unavailable', message: 'Stripe could not be reached' };
  if (isStripeError(err, 'StripeError')) {
    const status = err.statusCode ?? 0;
    if (status >= 400 && status < 500) return { ok: false, kind: 'request', status, code: err.code ?? null, param: err.param ?? null, message: err.message };
    return { ok: false, kind: 'unavailable', message: `Stripe answered with HTTP ${status || 'no status'}` };
  }
  throw err;
}

export function stripeApi(endpoint: StripeEndpoint): StripeApi {
  // One client per key, kept: building one per call cost more CPU than the call's own request (stripe-clients.ts).
  const clients = new StripeClients((secretKey: string) => new (stripeLibrary.get())(secretKey, { ...endpoint, timeout: TIMEOUT_MS, maxNetworkRetries: 1, telemetry: false }));
  const client = async (secretKey: string) => {
    await stripeLibrary.load();
    return clients.get(secretKey);
  };

  return {
    async account(secretKey) {
      try {
        const account = await (await client(secretKey)).accounts.retrieveCurrent();
        const name = account.settings?.dashboard?.display_name ?? account.business_profile?.name ?? null;
        return { ok: true, accountId: account.id, name };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async createCheckoutSession(secretKey, r) {
      const priceData: Stripe.Checkout.SessionCreateParams.LineItem.PriceData = {
        currency: r.currency,
        unit_amount: r.unitAmount,
        product_data: { name: r.productName },
        ...(r.recurring ? { recurring: { interval: r.recurring.interval, interval_count: r.recurring.intervalCount } } : {}),
      };
      try {
        const session = await (await client(secretKey)).checkout.sessions.create(
          {
            mode: r.mode,
            success_url: r.successUrl,
            cancel_url: r.cancelUrl,
            client_reference_id: r.clientReferenceId,
            ...(r.customerId ? { customer: r.customerId } : {}),
            metadata: r.metadata,
            line_items: [{ quantity: 1, price_data: priceData }],
            ...(r.couponId ? { discounts: [{ coupon: r.couponId }] } : {}),
            ...(r.mode === 'subscription'
              ? { subscription_data: { metadata: r.metadata, ...(r.trialDays ? { trial_period_days: r.trialDays } : {}) } }
              : r.collectEmail && !r.customerId
                ? { customer_creation: 'always' as const }
                : {}),
          },
          { idempotencyKey: r.idempotencyKey },
        );
        if (!session.url) return { ok: false, kind: 'unavailable', message: 'Stripe answered a Checkout Session without a URL' };
        return { ok: true, sessionId: session.id, url: session.url };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async createCoupon(secretKey, r) {
      try {
        // No idempotency key of tenure's: the id is what makes a second create find the first
        // (resource_already_exists), even with another name after the code was changed.
        const coupon = await (await client(secretKey)).coupons.create({
          id: r.id,
          name: r.name,
          duration: r.duration,
          ...(r.durationInMonths !== null ? { duration_in_months: r.durationInMonths } : {}),
          ...(r.percentOff !== null ? { percent_off: r.percentOff } : { amount_off: r.amountOff!, currency: r.currency! }),
          metadata: r.metadata,
        });
        return { ok: true, couponId: coupon.id };
      } catch (err) {
        // Made before (an answer lost, or a race with another checkout): its terms are the same, they never change.
        if (isStripeError(err, 'StripeError') && err.code === 'resource_already_exists') return { ok: true, couponId: r.id };
        return refusalOf(err);
      }
    },

    async retrieveCheckoutSession(secretKey, sessionId) {
      try {
        const session = await (await client(secretKey)).checkout.sessions.retrieve(sessionId);
        return { ok: true, session: session as unknown as Record<string, unknown> };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async createBillingPortalSession(secretKey, r) {
      try {
        const session = await (await client(secretKey)).billingPortal.sessions.create({ customer: r.customer, return_url: r.returnUrl });
        return { ok: true, url: session.url };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async updateSubscription(secretKey, subscriptionId, change) {
      try {
        const subscription = await (await client(secretKey)).subscriptions.update(subscriptionId, { cancel_at_period_end: change.cancelAtPeriodEnd });
        return { ok: true, subscription: subscription as unknown as Record<string, unknown> };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async createCustomer(secretKey, { details: d, metadata, idempotencyKey }) {
      const a = d.address;
      try {
        // Empty values are left out: they would only unset what a new customer does not have.
        const customer = await (await client(secretKey)).customers.create(
          {
            ...(d.name ? { name: d.name } : {}),
            ...(d.businessName ? { business_name: d.businessName } : {}),
            ...(a ? { address: { line1: a.line1, line2: a.line2, city: a.city, postal_code: a.postalCode, state: a.state, country: a.country } } : {}),
            ...(d.vatId ? { invoice_settings: { custom_fields: [{ name: 'VAT ID', value: d.vatId }] } } : {}),
            metadata,
          },
          { idempotencyKey },
        );
        return { ok: true, customerId: customer.id };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async updateCustomer(secretKey, customerId, d) {
      const a = d.address;
      try {
        // Empty strings unset a field on Stripe, so details removed in tenure are removed there too.
        await (await client(secretKey)).customers.update(customerId, {
          name: d.name,
          business_name: d.businessName,
          address: a ? { line1: a.line1, line2: a.line2, city: a.city, postal_code: a.postalCode, state: a.state, country: a.country } : '',
          invoice_settings: { custom_fields: d.vatId ? [{ name: 'VAT ID', value: d.vatId }] : '' },
        });
        return { ok: true };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async listEvents(secretKey, page) {
      try {
        const list = await (await client(secretKey)).events.list({
          limit: page.limit,
          created: { gte: page.since },
          types: [...page.types],
          ...(page.startingAfter ? { starting_after: page.startingAfter } : {}),
        });
        return { ok: true, events: list.data as unknown as StripeEventLike[], hasMore: list.has_more };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async verifyEvent(payload, signature, secret) {
      const Stripe = await stripeLibrary.load();
      try {
        return Stripe.webhooks.constructEvent(payload, signature, secret) as unknown as StripeEventLike;
      } catch (err) {
        if (isStripeError(err, 'StripeSignatureVerificationError')) return null;
        // A payload that is signed but not JSON: no event either.
        if (err instanceof SyntaxError) return null;
        throw err;
      }
    },
  };
}
