import { describe, expect, it } from 'vitest';
import { expectError, expectRefusal, forEachCase, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { userId, useHarness } from '../support/harness.js';
import { CHECKOUT_URLS, checkoutPath, connectStripe } from '../support/payments.js';

describe('POST /v2/projects/{project_id}/checkout: errors', () => {
  const h = useHarness();

  it('refuses bad input with a 422 naming it, asking Stripe nothing and changing nothing', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t);
    const hourly = await createPlan(t, { plan_duration: '12 hours', plan_data: { plan_recurring: true } });
    const free = await createPlan(t, { plan_price: '0' });
    const yen = await createPlan(t, { plan_price: '1.50', plan_currency: 'JPY' });
    const valid = { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS };
    const before = await projectState(h, t.projectId);
    const calls = h.stripe.calls.length;
    await forEachCase(
      [
        ['a plan id that is not a UUID', [{ ...valid, plan_id: 'gold' }, 'plan_id must be a UUID']],
        ['a user id that is not digits', [{ ...valid, user_id: 'bob' }, 'user_id must be a string of digits']],
        ['no success_url', [{ plan_id: plan.plan_id, user_id: '1', cancel_url: CHECKOUT_URLS.cancel_url }, /success_url/]],
        ['a success_url that is not http(s)', [{ ...valid, success_url: 'javascript:alert(1)' }, 'success_url must be an http:// or https:// URL of at most 2048 characters']],
        ['a cancel_url that is not a URL', [{ ...valid, cancel_url: 'https://exa mple.com' }, 'cancel_url must be an http:// or https:// URL of at most 2048 characters']],
        ['an empty coupon', [{ ...valid, coupon: '' }, 'coupon must be a string of 1 to 200 characters']],
        ['a coupon the project does not have', [{ ...valid, coupon: 'SPRING' }, 'Coupon SPRING does not exist in this project']],
        ['a recurring plan by the hour', [{ ...valid, plan_id: hourly.plan_id }, 'The plan renews every 12 hours, and Stripe bills subscriptions by day, week, month or year only']],
        ['a free plan', [{ ...valid, plan_id: free.plan_id }, /The plan is free/]],
        ['a price finer than its currency', [{ ...valid, plan_id: yen.plan_id }, /has more decimals than JPY/]],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'POST', url: checkoutPath(t), payload }), message),
    );
    expect(h.stripe.calls.length).toBe(calls);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('404 for an unknown plan or merchant account, 409 without a Stripe account or for a banned user', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const path = checkoutPath(t);
    const payload = { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS };
    expectError(await t.request({ method: 'POST', url: path, payload }), {
      status: 409,
      code: 'CONFLICT',
      method: 'POST',
      path,
      message: 'No Stripe account is connected to this project: connect one first (POST /merchant-accounts)',
    });
    await connectStripe(h, t);
    const unknownPlan = { ...payload, plan_id: '00000000-0000-4000-8000-000000000000' };
    expectError(await t.request({ method: 'POST', url: path, payload: unknownPlan }), { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Plan not found' });
    const unknownAccount = { ...payload, merchant_account_id: '00000000-0000-4000-8000-000000000000' };
    expectError(await t.request({ method: 'POST', url: path, payload: unknownAccount }), { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Merchant account not found' });
    const banned = userId();
    expect((await t.request({ method: 'PUT', url: `${t.base}/ban/${banned}`, payload: {} })).statusCode).toBe(200);
    expectError(await t.request({ method: 'POST', url: path, payload: { ...payload, user_id: banned } }), { status: 409, code: 'CONFLICT', method: 'POST', path, message: `User ${banned} is banned from this project` });
  });

  it('a key Stripe stopped taking is a 422 saying to connect the account again', async () => {
    const t = await h.tenant();
    const { account, secretKey } = await connectStripe(h, t);
    const plan = await createPlan(t);
    account.secretKeys.delete(secretKey);
    const path = checkoutPath(t);
    const res = await t.request({ method: 'POST', url: path, payload: { plan_id: plan.plan_id, user_id: userId(), ...CHECKOUT_URLS } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: expect.stringMatching(/^Stripe refused the secret key \(401\).*Connect the merchant account again/) });
  });
});
