import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectRefusal, forEachCase, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { checkoutWith, createCoupon, getCoupon, redemptionRows } from '../support/coupons.js';
import { userId, useHarness } from '../support/harness.js';
import { connectStripe, deliverAll } from '../support/payments.js';

/** Checkout with a coupon (docs/coupons.md, "Coupons at checkout"), against the fake Stripe. */
describe('POST /v2/projects/{project_id}/checkout with a coupon', () => {
  const h = useHarness();

  const paymentsOf = async (t: { base: string; request: (o: { method: 'GET'; url: string }) => Promise<{ json(): { data: { amount_minor: number; user_id: string }[] } }> }) =>
    (await t.request({ method: 'GET', url: `${t.base}/payments?limit=100` })).json().data;

  it('discounts the session by the coupon, made once as a Stripe coupon on the account; the use is reserved, then redeemed when paid', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '20.00', plan_currency: 'EUR' });
    const coupon = await createCoupon(t, { code: 'Spring25', amount: 25 });
    const user = userId();
    const res = await checkoutWith(t, plan.plan_id, user, 'spring25');
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ coupon_id: coupon.coupon_id, coupon_code: 'Spring25', mode: 'payment' });
    const stripeCouponId = `tenure_${coupon.coupon_id}`;
    const made = h.stripe.calls.filter((c) => c.key === stripe.secretKey && c.method === 'POST' && c.path === '/v1/coupons');
    expect(made).toHaveLength(1);
    expect(made[0]!.params).toStrictEqual({
      id: stripeCouponId,
      name: 'Spring25',
      duration: 'once',
      percent_off: '25',
      metadata: { project_id: t.projectId, coupon_id: coupon.coupon_id },
    });
    const session = h.stripe.world.session(data.session_id);
    expect(session.params).toMatchObject({ discounts: [{ coupon: stripeCouponId }] });
    expect(session).toMatchObject({ amount_subtotal: 2000, amount_total: 1500, total_details: { amount_discount: 500 } });
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(1);
    expect(await redemptionRows(h, coupon.coupon_id)).toStrictEqual([{ coupon_id: coupon.coupon_id, user_id: user, checkout_session_id: data.session_id, status: 'reserved' }]);

    // Another member's checkout reuses the Stripe coupon: no second POST /v1/coupons.
    const second = await checkoutWith(t, plan.plan_id, userId(), 'SPRING25');
    expect(second.statusCode, second.body).toBe(200);
    expect(h.stripe.calls.filter((c) => c.key === stripe.secretKey && c.path === '/v1/coupons')).toHaveLength(1);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(2);

    await deliverAll(h, stripe, h.stripe.world.pay(data.session_id));
    expect((await redemptionRows(h, coupon.coupon_id)).map((r) => r.status)).toStrictEqual(['redeemed', 'reserved']);
    expect(await paymentsOf(t)).toMatchObject([{ user_id: user, amount_minor: 1500 }]);
    expect(h.stripe.world.couponsOf(stripe.account.id).get(stripeCouponId)!.times_redeemed).toBe(1);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(2);
  });

  it('a retried checkout answers the same session and holds one use; a session that expires unpaid gives its use back', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '9.99' });
    const coupon = await createCoupon(t, { max_uses: 1 });
    const user = userId();
    const first = await checkoutWith(t, plan.plan_id, user, coupon.code);
    const retry = await checkoutWith(t, plan.plan_id, user, coupon.code);
    expect(retry.json().data, retry.body).toStrictEqual(first.json().data);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(1);
    expect(await redemptionRows(h, coupon.coupon_id)).toHaveLength(1);
    // Its one use is held: another member is refused.
    expectRefusal(await checkoutWith(t, plan.plan_id, userId(), coupon.code), `Coupon ${coupon.code} has been used up (max_uses 1)`);

    const [receipt] = await deliverAll(h, stripe, h.stripe.world.expire(first.json().data.session_id));
    expect(receipt!.outcome).toBe(`applied: the use of coupon ${coupon.code} reserved by the session is given back`);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(0);
    expect((await redemptionRows(h, coupon.coupon_id))[0]!.status).toBe('released');
    // The first checkout retried: Stripe answers the expired session again, which holds no use.
    const late = await checkoutWith(t, plan.plan_id, user, coupon.code);
    expect(late.json().data, late.body).toStrictEqual(first.json().data);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(0);
    const other = await checkoutWith(t, plan.plan_id, userId(), coupon.code);
    expect(other.statusCode, other.body).toBe(200);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(1);
  });

  it('on a subscription: every_payment discounts each renewal (Stripe duration forever), first_payment only the first invoice (once)', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '20', plan_currency: 'USD', plan_duration: '1 month', plan_data: { plan_recurring: true, plan_one_time: false } });
    const always = await createCoupon(t, { coupon_type: 'fixed', amount: 500, currency: 'USD', renewal_constraint: 'every_payment' });
    const once = await createCoupon(t, { renewal_constraint: 'first_payment', amount: 50 });
    const months = await createCoupon(t, { renewal_constraint: 'months', renewal_months: 3, amount: 10 });
    const amounts: Record<string, number[]> = {};
    for (const c of [always, once]) {
      const user = userId();
      const res = await checkoutWith(t, plan.plan_id, user, c.code);
      expect(res.statusCode, res.body).toBe(200);
      await deliverAll(h, stripe, h.stripe.world.pay(res.json().data.session_id));
      const subscription = h.stripe.world.session(res.json().data.session_id).subscription!;
      await deliverAll(h, stripe, h.stripe.world.renew(subscription));
      amounts[c.code] = (await paymentsOf(t)).filter((p) => p.user_id === user).map((p) => p.amount_minor).sort();
    }
    expect(amounts[always.code]).toStrictEqual([1500, 1500]);
    expect(amounts[once.code]).toStrictEqual([1000, 2000]);
    const durations = h.stripe.calls.filter((c) => c.key === stripe.secretKey && c.path === '/v1/coupons').map((c) => [c.params.duration, c.params.duration_in_months]);
    expect(durations).toStrictEqual([['forever', undefined], ['once', undefined]]);
    const repeating = await checkoutWith(t, plan.plan_id, userId(), months.code);
    expect(repeating.statusCode, repeating.body).toBe(200);
    expect(h.stripe.calls.at(-2)!.params).toMatchObject({ duration: 'repeating', duration_in_months: '3', percent_off: '10' });
  });

  it('refuses a coupon that does not fit the checkout with a 422 saying why, reserving nothing and asking Stripe nothing', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '10', plan_currency: 'EUR' });
    const otherPlan = await createPlan(t, { plan_price: '10', plan_currency: 'EUR' });
    const member = userId();
    expect((await t.request({ method: 'POST', url: `${t.base}/memberships`, payload: { user_id: member, end_date: '2099-01-01T00:00:00.000Z' } })).statusCode).toBe(201);
    const expired = await createCoupon(t, { expires_at: '2099-01-01T00:00:00.000Z' });
    await h.database.db.execute(sql`UPDATE coupons SET expires_at = '2021-05-01T00:00:00.000Z' WHERE id = ${expired.coupon_id}`);
    const usedUp = await createCoupon(t, { max_uses: 1 });
    expect((await checkoutWith(t, plan.plan_id, userId(), usedUp.code)).statusCode).toBe(200);
    const scoped = await createCoupon(t, { plan_scope: 'selected', plan_ids: [otherPlan.plan_id] });
    const dollars = await createCoupon(t, { coupon_type: 'fixed', amount: 100, currency: 'USD' });
    const newOnly = await createCoupon(t, { invitee_mode: 'new_members' });
    const existingOnly = await createCoupon(t, { invitee_mode: 'existing_members' });
    const everything = await createCoupon(t, { amount: 100 });
    const tooMuch = await createCoupon(t, { coupon_type: 'fixed', amount: 1000, currency: 'EUR' });
    const before = await projectState(h, t.projectId);
    const calls = h.stripe.calls.length;
    await forEachCase(
      [
        ['an expired coupon', [userId(), expired.code, `Coupon ${expired.code} expired at 2021-05-01T00:00:00.000Z`]],
        ['a used-up coupon', [userId(), usedUp.code, `Coupon ${usedUp.code} has been used up (max_uses 1)`]],
        ['another plan\'s coupon', [userId(), scoped.code, `Coupon ${scoped.code} does not apply to plan ${plan.plan_id}`]],
        ['a fixed coupon in another currency', [userId(), dollars.code, `Coupon ${dollars.code} takes an amount in USD off, and the plan is priced in EUR`]],
        ['a new-members coupon for a member', [member, newOnly.code, `Coupon ${newOnly.code} is for new members only, and this user has (or had) a membership in the project`]],
        ['an existing-members coupon for a newcomer', [userId(), existingOnly.code, `Coupon ${existingOnly.code} is for existing members only, and this user has never had a membership in the project`]],
        ['100% off a one-time payment', [userId(), everything.code, `Coupon ${everything.code} makes this one-time payment free: there would be nothing to pay; create the membership instead (POST /memberships)`]],
        ['more off than the price', [userId(), tooMuch.code, /^Coupon \S+ makes this one-time payment free/]],
      ] as const,
      async ([user, code, message]) => expectRefusal(await checkoutWith(t, plan.plan_id, user, code), message),
    );
    expect(h.stripe.calls.length).toBe(calls);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    // The member-only coupons do fit their members.
    expect((await checkoutWith(t, plan.plan_id, member, existingOnly.code)).statusCode).toBe(200);
  });

  it('applies the best fitting auto_apply coupon when none is named, the next one when it is used up, and none when none fits', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '20', plan_currency: 'USD' });
    const unscoped = await createPlan(t, { plan_price: '20', plan_currency: 'USD' });
    const tenPercent = await createCoupon(t, { amount: 10, auto_apply: true, plan_scope: 'selected', plan_ids: [plan.plan_id] });
    const fiveOff = await createCoupon(t, { coupon_type: 'fixed', amount: 500, currency: 'USD', auto_apply: true, max_uses: 1, plan_scope: 'selected', plan_ids: [plan.plan_id] });
    const ninety = await createCoupon(t, { amount: 90 });
    const best = await checkoutWith(t, plan.plan_id, userId());
    expect(best.json().data, best.body).toMatchObject({ coupon_id: fiveOff.coupon_id, coupon_code: fiveOff.code });
    expect(h.stripe.world.session(best.json().data.session_id).amount_total).toBe(1500);
    const next = await checkoutWith(t, plan.plan_id, userId());
    expect(next.json().data, next.body).toMatchObject({ coupon_id: tenPercent.coupon_id });
    expect(h.stripe.world.session(next.json().data.session_id).amount_total).toBe(1800);
    // The plan named in capitals is the same plan.
    const capitals = await checkoutWith(t, plan.plan_id.toUpperCase(), userId(), tenPercent.code);
    expect(capitals.json().data, capitals.body).toMatchObject({ coupon_id: tenPercent.coupon_id });
    const none = await checkoutWith(t, unscoped.plan_id, userId());
    expect(none.json().data, none.body).toMatchObject({ coupon_id: null, coupon_code: null });
    expect(h.stripe.world.session(none.json().data.session_id).params).not.toHaveProperty('discounts');
    // Naming a coupon overrides the automatic ones (here the non-automatic 90%).
    const named = await checkoutWith(t, plan.plan_id, userId(), ninety.code);
    expect(named.json().data, named.body).toMatchObject({ coupon_id: ninety.coupon_id });
    expect(h.stripe.world.session(named.json().data.session_id).amount_total).toBe(200);
  });

  it('gives the reserved use back when Stripe refuses the session (a key it stopped taking): a 422, the coupon as before', async () => {
    const t = await h.tenant();
    const { account, secretKey } = await connectStripe(h, t);
    const plan = await createPlan(t);
    const coupon = await createCoupon(t, { max_uses: 1 });
    account.secretKeys.delete(secretKey);
    const res = await checkoutWith(t, plan.plan_id, userId(), coupon.code);
    expectRefusal(res, /^Stripe refused the secret key \(401\).*Connect the merchant account again/);
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(0);
    expect((await redemptionRows(h, coupon.coupon_id)).map((r) => r.status)).toStrictEqual(['released']);
  });
});
