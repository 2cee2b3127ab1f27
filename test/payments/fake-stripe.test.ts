import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { stripeEndpointOf } from '../../src/config.js';
import { parseForm, startFakeStripe, type FakeStripe } from '../support/fake-stripe.js';

/**
 * The fake Stripe API is the oracle of every payments test: here it is proven, through stripe-node
 * itself (pointed at it by host, port and protocol, as tenure does) and raw fetch where the wire
 * is the point, to answer as Stripe's API reference documents.
 */

let fake: FakeStripe | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup() {
  const f = (fake = await startFakeStripe());
  const { account, secretKey } = f.world.addAccount({ name: 'Acme' });
  const client = (key: string) => new Stripe(key, { ...stripeEndpointOf(f.url), maxNetworkRetries: 0, telemetry: false });
  return { fake: f, account, secretKey, stripe: client(secretKey), client };
}

const SESSION = {
  mode: 'payment' as const,
  success_url: 'https://shop.example.com/thanks',
  cancel_url: 'https://shop.example.com/cancel',
  metadata: { project_id: 'p', plan_id: 'q', user_id: '42' },
  line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: 'Gold' } } }],
};

describe('fake Stripe API', () => {
  it('parses form-encoded nested fields and indexed arrays as Stripe documents them', () => {
    expect(parseForm('mode=payment&line_items[0][price_data][unit_amount]=10&line_items[1][quantity]=2&metadata[a]=b&types[]=x&types[]=y')).toStrictEqual({
      mode: 'payment',
      line_items: [{ price_data: { unit_amount: '10' } }, { quantity: '2' }],
      metadata: { a: 'b' },
      types: ['x', 'y'],
    });
  });

  it('answers GET /v1/account to the account\'s secret key, with a Bearer header', async () => {
    const { stripe, account, fake: f, secretKey } = await setup();
    const retrieved = await stripe.accounts.retrieveCurrent();
    expect(retrieved).toMatchObject({ id: account.id, object: 'account' });
    expect(f.calls.at(-1)).toMatchObject({ method: 'GET', path: '/v1/account', key: secretKey, status: 200 });
  });

  it('refuses a missing or unknown key with 401 and the error shape {error: {type, message}}', async () => {
    const { client, fake: f } = await setup();
    const unknown = 'sk_test_unknownunknownunknown1234';
    const err = await client(unknown).accounts.retrieveCurrent().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(401);
    expect((err as Stripe.errors.StripeError).message).toMatch(/^Invalid API Key provided: sk_test_\*+1234$/);
    const res = await fetch(`${f.url}/v1/account`);
    expect(res.status).toBe(401);
    expect((await res.json()) as unknown).toStrictEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('You did not provide an API key') } });
  });

  it('creates a Checkout Session from form-encoded line items and metadata, and retrieves it', async () => {
    const { stripe, fake: f } = await setup();
    const session = await stripe.checkout.sessions.create(SESSION);
    expect(session).toMatchObject({ object: 'checkout.session', mode: 'payment', status: 'open', amount_total: 1000, currency: 'usd', metadata: SESSION.metadata });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    expect(await stripe.checkout.sessions.retrieve(session.id)).toMatchObject({ id: session.id });
    expect(f.calls.at(-2)!.params).toMatchObject({ line_items: [{ quantity: '1', price_data: { unit_amount: '1000' } }] });
  });

  it('refuses a session without mode or with a recurring price in payment mode: 400 with code and param', async () => {
    const { stripe } = await setup();
    const { mode: _m, ...noMode } = SESSION;
    const err = (await stripe.checkout.sessions.create(noMode as never).catch((e: unknown) => e)) as Stripe.errors.StripeError;
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect([err.statusCode, err.code, err.param]).toStrictEqual([400, 'parameter_missing', 'mode']);
    const recurring = { ...SESSION, line_items: [{ quantity: 1, price_data: { ...SESSION.line_items[0]!.price_data, recurring: { interval: 'month' as const } } }] };
    const again = (await stripe.checkout.sessions.create(recurring).catch((e: unknown) => e)) as Stripe.errors.StripeError;
    expect(again.statusCode).toBe(400);
  });

  it('replays an idempotent POST: one session, Idempotent-Replayed on the retry; other parameters under the key: idempotency_error', async () => {
    const { stripe, fake: f } = await setup();
    const first = await stripe.checkout.sessions.create(SESSION, { idempotencyKey: 'k-1' });
    const second = await stripe.checkout.sessions.create(SESSION, { idempotencyKey: 'k-1' });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(f.world.sessions.size).toBe(1);
    const err = (await stripe.checkout.sessions.create({ ...SESSION, success_url: 'https://other.example.com/' }, { idempotencyKey: 'k-1' }).catch((e: unknown) => e)) as Stripe.errors.StripeError;
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(err.statusCode).toBe(400);
  });

  it('lists events newest first, paged by starting_after, filtered by created and types', async () => {
    const { stripe, fake: f } = await setup();
    const s1 = await stripe.checkout.sessions.create(SESSION);
    const s2 = await stripe.checkout.sessions.create(SESSION);
    const paid = [...f.world.pay(s1.id), ...f.world.pay(s2.id)];
    const page1 = await stripe.events.list({ limit: 3 });
    expect(page1.data.map((e) => e.id)).toStrictEqual(paid.slice(-3).reverse().map((e) => e.id));
    expect(page1.has_more).toBe(true);
    const page2 = await stripe.events.list({ limit: 3, starting_after: page1.data.at(-1)!.id });
    expect(page2.data.map((e) => e.id)).toStrictEqual(paid.slice(0, 1).map((e) => e.id));
    const completed = await stripe.events.list({ types: ['checkout.session.completed'], created: { gte: paid[0]!.created } });
    expect(completed.data.map((e) => (e.data.object as { id: string }).id)).toStrictEqual([s2.id, s1.id]);
  });

  it('pays a subscription session: subscription, invoice.paid with its metadata and payment intent, then checkout.session.completed', async () => {
    const { stripe, fake: f } = await setup();
    const session = await stripe.checkout.sessions.create({
      ...SESSION,
      mode: 'subscription',
      subscription_data: { metadata: SESSION.metadata },
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 500, product_data: { name: 'Gold' }, recurring: { interval: 'month', interval_count: 1 } } }],
    });
    const events = f.world.pay(session.id);
    expect(events.map((e) => e.type)).toStrictEqual(['customer.subscription.created', 'charge.succeeded', 'invoice.paid', 'checkout.session.completed']);
    const invoice = events[2]!.data.object as { id: string; parent: { subscription_details: { subscription: string; metadata: object } } };
    const completed = events[3]!.data.object as { subscription: string; invoice: string; payment_status: string };
    expect(completed).toMatchObject({ subscription: invoice.parent.subscription_details.subscription, invoice: invoice.id, payment_status: 'paid' });
    expect(invoice.parent.subscription_details.metadata).toStrictEqual(SESSION.metadata);
    expect(f.world.renew(completed.subscription).map((e) => e.type)).toStrictEqual(['charge.succeeded', 'invoice.paid']);
  });
  it('creates coupons as POST /v1/coupons documents them: one of percent_off or amount_off with currency, a duration, a unique id', async () => {
    const { stripe, fake: f, account } = await setup();
    const percent = await stripe.coupons.create({ id: 'SPRING', percent_off: 25, duration: 'repeating', duration_in_months: 3, name: 'Spring' });
    expect(percent).toMatchObject({ id: 'SPRING', object: 'coupon', percent_off: 25, amount_off: null, duration: 'repeating', duration_in_months: 3, times_redeemed: 0, valid: true, livemode: false });
    expect(await stripe.coupons.retrieve('SPRING')).toStrictEqual(percent);
    const fixed = await stripe.coupons.create({ amount_off: 500, currency: 'usd' });
    expect(fixed).toMatchObject({ id: expect.stringMatching(/^cpn_/), amount_off: 500, currency: 'usd', duration: 'once' });
    const refusal = (params: Stripe.CouponCreateParams) => stripe.coupons.create(params).then(() => null, (e: Stripe.errors.StripeError) => ({ status: e.statusCode, code: e.code, param: e.param }));
    expect(await refusal({ id: 'SPRING', percent_off: 5 })).toStrictEqual({ status: 400, code: 'resource_already_exists', param: 'id' });
    expect(await refusal({ duration: 'once' })).toStrictEqual({ status: 400, code: 'parameter_missing', param: 'percent_off' });
    expect(await refusal({ percent_off: 5, amount_off: 5, currency: 'usd' })).toMatchObject({ status: 400, param: 'percent_off' });
    expect(await refusal({ percent_off: 101 })).toMatchObject({ status: 400, code: 'parameter_invalid_float' });
    expect(await refusal({ amount_off: 500 })).toStrictEqual({ status: 400, code: 'parameter_missing', param: 'currency' });
    expect(await refusal({ percent_off: 5, duration: 'repeating' })).toStrictEqual({ status: 400, code: 'parameter_missing', param: 'duration_in_months' });
    expect(await refusal({ percent_off: 5, duration: 'once', duration_in_months: 2 })).toMatchObject({ status: 400, param: 'duration_in_months' });
    expect(await refusal({ percent_off: 5, name: 'N'.repeat(41) })).toMatchObject({ status: 400, param: 'name' });
    expect([...f.world.couponsOf(account.id).keys()]).toStrictEqual(['SPRING', fixed.id]);
  });

  it('discounts a Checkout Session by one existing coupon in its currency, refusing an unknown one, a second, or another currency', async () => {
    const { stripe } = await setup();
    await stripe.coupons.create({ id: 'TEN', percent_off: 10 });
    await stripe.coupons.create({ id: 'EUROS', amount_off: 300, currency: 'eur' });
    const session = await stripe.checkout.sessions.create({ ...SESSION, discounts: [{ coupon: 'TEN' }] });
    expect(session).toMatchObject({ amount_subtotal: 1000, amount_total: 900, total_details: { amount_discount: 100 }, discounts: [{ coupon: 'TEN', promotion_code: null }] });
    const refusal = (discounts: { coupon: string }[]) =>
      stripe.checkout.sessions.create({ ...SESSION, discounts }).then(() => null, (e: Stripe.errors.StripeError) => ({ status: e.statusCode, code: e.code, param: e.param }));
    expect(await refusal([{ coupon: 'NOPE' }])).toStrictEqual({ status: 400, code: 'resource_missing', param: 'discounts[0][coupon]' });
    expect(await refusal([{ coupon: 'TEN' }, { coupon: 'TEN' }])).toMatchObject({ status: 400, param: 'discounts' });
    expect(await refusal([{ coupon: 'EUROS' }])).toMatchObject({ status: 400, param: 'discounts[0][coupon]' });
  });

  it('trials: trial_period_days (1-730, subscription mode only) makes a trialing subscription, a $0 first invoice and a session with no payment required; customer_creation is for payment mode', async () => {
    const { stripe, fake: f } = await setup();
    const recurring = { ...SESSION, mode: 'subscription' as const, line_items: [{ quantity: 1, price_data: { ...SESSION.line_items[0]!.price_data, recurring: { interval: 'month' as const } } }] };
    const refused = async (params: Stripe.Checkout.SessionCreateParams) => {
      const err = await stripe.checkout.sessions.create(params).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      return (err as Stripe.errors.StripeInvalidRequestError).param;
    };
    expect(await refused({ ...SESSION, subscription_data: { trial_period_days: 7 } })).toBe('subscription_data');
    expect(await refused({ ...recurring, subscription_data: { trial_period_days: 731 } })).toBe('subscription_data[trial_period_days]');
    expect(await refused({ ...recurring, customer_creation: 'always' })).toBe('customer_creation');
    expect((await stripe.checkout.sessions.create({ ...SESSION, customer_creation: 'always' })).customer_creation).toBe('always');
    const session = await stripe.checkout.sessions.create({ ...recurring, subscription_data: { trial_period_days: 7 } });
    expect(session.amount_total).toBe(0);
    const events = f.world.pay(session.id, { email: 'ada@example.com' });
    const completed = events.find((e) => e.type === 'checkout.session.completed')!.data.object as unknown as Stripe.Checkout.Session;
    expect(completed).toMatchObject({ payment_status: 'no_payment_required', customer_details: { email: 'ada@example.com' } });
    const sub = f.world.subscriptions.get(completed.subscription as string)!;
    expect(sub).toMatchObject({ status: 'trialing' });
    expect(sub.trial_end! - sub.trial_start!).toBe(7 * 86_400);
    expect(events.find((e) => e.type === 'invoice.paid')!.data.object).toMatchObject({ amount_paid: 0, billing_reason: 'subscription_create' });
    expect(f.world.trialWillEnd(sub.id).map((e) => e.type)).toStrictEqual(['customer.subscription.trial_will_end']);
    expect(f.world.endTrial(sub.id).map((e) => e.type)).toStrictEqual(['customer.subscription.updated', 'charge.succeeded', 'invoice.paid']);
    expect(sub.status).toBe('active');
  });
});
