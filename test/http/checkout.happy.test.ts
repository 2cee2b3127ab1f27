import { describe, expect, it } from 'vitest';
import { expectSuccess, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { userId, useHarness } from '../support/harness.js';
import { CHECKOUT_URLS, checkoutPath, connectStripe } from '../support/payments.js';

describe('POST /v2/projects/{project_id}/checkout: happy', () => {
  const h = useHarness();

  it('makes a one-time Checkout Session for a plan: its price in cents, its name, metadata naming project, plan and user', async () => {
    const t = await h.tenant();
    const { view, secretKey } = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_name: 'Gold', plan_price: '29.99', plan_currency: 'EUR', plan_duration: '1 month' });
    const user = userId();
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: user, ...CHECKOUT_URLS } });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'POST',
      path: checkoutPath(t),
      message: 'Checkout session created successfully',
      data: { session_id: expect.stringMatching(/^cs_test_/), checkout_url: `https://checkout.stripe.com/c/pay/${data.session_id}`, mode: 'payment', merchant_account_id: view.merchant_account_id, coupon_id: null, coupon_code: null },
    });
    const session = h.stripe.world.session(data.session_id);
    expect(session).toMatchObject({ account: h.stripe.world.accountOfKey(secretKey)!.id, mode: 'payment', amount_total: 2999, currency: 'eur', client_reference_id: user, ...CHECKOUT_URLS });
    expect(session.metadata).toStrictEqual({ project_id: t.projectId, plan_id: plan.plan_id, user_id: user });
    expect(session.params).toMatchObject({ line_items: [{ quantity: '1', price_data: { currency: 'eur', unit_amount: '2999', product_data: { name: 'Gold' } } }] });
    expect(session.params).not.toHaveProperty('subscription_data');
    expect(session.params).not.toHaveProperty('discounts');
    // Nothing is written until Stripe reports the payment.
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('makes a subscription for a recurring plan, billed every plan_duration, its subscription carrying the metadata too', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '5', plan_currency: 'USD', plan_duration: '3 months', plan_data: { plan_recurring: true, plan_one_time: false } });
    const user = userId();
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: user, ...CHECKOUT_URLS } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.mode).toBe('subscription');
    const session = h.stripe.world.session(res.json().data.session_id);
    const metadata = { project_id: t.projectId, plan_id: plan.plan_id, user_id: user };
    expect(session.params).toMatchObject({
      mode: 'subscription',
      subscription_data: { metadata },
      line_items: [{ price_data: { unit_amount: '500', currency: 'usd', recurring: { interval: 'month', interval_count: '3' } } }],
    });
  });

  it('answers a retried checkout with the same session: one session on Stripe, the retry sent with the same idempotency key', async () => {
    const t = await h.tenant();
    const { secretKey } = await connectStripe(h, t);
    const plan = await createPlan(t);
    const payload = { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS };
    const first = await t.request({ method: 'POST', url: checkoutPath(t), payload });
    const second = await t.request({ method: 'POST', url: checkoutPath(t), payload });
    expect(second.json().data, second.body).toStrictEqual(first.json().data);
    const posts = h.stripe.calls.filter((c) => c.key === secretKey && c.path === '/v1/checkout/sessions');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.idempotencyKey).toMatch(/^tenure-checkout-[0-9a-f]{64}$/);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    expect([...h.stripe.world.sessions.values()].filter((s) => s.metadata.project_id === t.projectId)).toHaveLength(1);
    // Another member, or other URLs, is another checkout.
    const other = await t.request({ method: 'POST', url: checkoutPath(t), payload: { ...payload, user_id: userId() } });
    expect(other.json().data.session_id).not.toBe(first.json().data.session_id);
  });

  it('uses the production account when the project has both, or the one named by merchant_account_id', async () => {
    const t = await h.tenant();
    const sandbox = await connectStripe(h, t);
    const production = await connectStripe(h, t, { environment: 'production' });
    const plan = await createPlan(t);
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS } });
    expect(res.json().data).toMatchObject({ merchant_account_id: production.view.merchant_account_id, session_id: expect.stringMatching(/^cs_live_/) });
    const named = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: userId(), merchant_account_id: sandbox.view.merchant_account_id, ...CHECKOUT_URLS } });
    expect(named.json().data).toMatchObject({ merchant_account_id: sandbox.view.merchant_account_id, session_id: expect.stringMatching(/^cs_test_/) });
  });
});
