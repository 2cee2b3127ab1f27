import { describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS, UUID } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { couponCode, couponsPath, createCoupon, getCoupon } from '../support/coupons.js';
import { future, useHarness } from '../support/harness.js';

describe('/v2/projects/{project_id}/coupons: happy', () => {
  const h = useHarness();

  it('creates a percentage coupon with the defaults: first payment only, any member, every plan, unlimited, never expiring', async () => {
    const t = await h.tenant();
    const path = couponsPath(t);
    const res = await t.request({ method: 'POST', url: path, payload: { code: 'Spring25', coupon_type: 'percentage', amount: 25 } });
    const data = res.json().data;
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path,
      message: 'Coupon created successfully',
      data: {
        coupon_id: expect.stringMatching(UUID),
        code: 'Spring25',
        coupon_type: 'percentage',
        amount: 25,
        currency: null,
        renewal_constraint: 'first_payment',
        renewal_months: null,
        auto_apply: false,
        invitee_mode: 'any',
        plan_scope: 'all',
        plan_ids: [],
        max_uses: null,
        uses: 0,
        expires_at: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: data.created_at,
      },
    });
    expect(await getCoupon(t, data.coupon_id)).toStrictEqual(data);
  });

  it('creates a fixed coupon in a currency, for selected plans, for some months of a subscription, limited in uses and time', async () => {
    const t = await h.tenant();
    const gold = await createPlan(t, { plan_price: '20', plan_currency: 'EUR' });
    const silver = await createPlan(t, { plan_price: '10', plan_currency: 'EUR' });
    const expires = future(10);
    const coupon = await createCoupon(t, {
      code: 'WELCOME5',
      coupon_type: 'fixed',
      amount: 500,
      currency: 'EUR',
      renewal_constraint: 'months',
      renewal_months: 3,
      auto_apply: true,
      invitee_mode: 'new_members',
      plan_scope: 'selected',
      plan_ids: [gold.plan_id, silver.plan_id, gold.plan_id.toUpperCase()],
      max_uses: 50,
      expires_at: expires.ms,
    });
    expect(coupon).toMatchObject({
      code: 'WELCOME5',
      coupon_type: 'fixed',
      amount: 500,
      currency: 'EUR',
      renewal_constraint: 'months',
      renewal_months: 3,
      auto_apply: true,
      invitee_mode: 'new_members',
      plan_scope: 'selected',
      max_uses: 50,
      uses: 0,
      expires_at: expires.iso,
    });
    // A plan named twice (in any case) is listed once.
    expect([...coupon.plan_ids].sort()).toStrictEqual([gold.plan_id, silver.plan_id].sort());
  });

  it('lists the coupons newest first with total, paged by limit and offset', async () => {
    const t = await h.tenant();
    const first = await createCoupon(t);
    const second = await createCoupon(t);
    const path = couponsPath(t);
    const res = await t.request({ method: 'GET', url: `${path}?limit=1&offset=1` });
    expectSuccess(res, { method: 'GET', path, message: 'Coupons retrieved successfully', total: 2, data: [expect.objectContaining({ coupon_id: expect.any(String) })] });
    const all = (await t.request({ method: 'GET', url: path })).json().data.map((c: { coupon_id: string }) => c.coupon_id);
    expect(new Set(all)).toStrictEqual(new Set([first.coupon_id, second.coupon_id]));
    expect(res.json().data[0].coupon_id).toBe(all[1]);
  });

  it('changes the code, the limits and the scope; null removes a limit; the discount terms stay', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const coupon = await createCoupon(t, { max_uses: 5, expires_at: future(3).iso });
    const path = `${couponsPath(t)}/${coupon.coupon_id}`;
    const code = couponCode('RENAMED');
    const res = await t.request({
      method: 'PATCH',
      url: path,
      payload: { code, auto_apply: true, invitee_mode: 'existing_members', plan_ids: [plan.plan_id], max_uses: null, expires_at: null },
    });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'PATCH',
      path,
      message: 'Coupon updated successfully',
      data: {
        ...coupon,
        code,
        auto_apply: true,
        invitee_mode: 'existing_members',
        plan_scope: 'selected',
        plan_ids: [plan.plan_id],
        max_uses: null,
        expires_at: null,
        updated_at: expect.stringMatching(ISO_MS),
      },
    });
    expect(data.updated_at >= coupon.updated_at).toBe(true);
    // plan_scope "all" alone clears the list.
    const back = await t.request({ method: 'PATCH', url: path, payload: { plan_scope: 'all' } });
    expect(back.json().data, back.body).toMatchObject({ plan_scope: 'all', plan_ids: [] });
  });

  it('deletes a coupon (204); it is gone from the list and reading it is a 404', async () => {
    const t = await h.tenant();
    const coupon = await createCoupon(t);
    const path = `${couponsPath(t)}/${coupon.coupon_id}`;
    const res = await t.request({ method: 'DELETE', url: path });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect((await t.request({ method: 'GET', url: path })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: couponsPath(t) })).json().total).toBe(0);
    // Its code is free again.
    expect((await t.request({ method: 'POST', url: couponsPath(t), payload: { code: coupon.code, coupon_type: 'percentage', amount: 5 } })).statusCode).toBe(201);
  });
});
