import { describe, expect, it } from 'vitest';
import { expectError, expectInstantFormatError, expectRefusal, forEachCase, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { couponBody, couponsPath, createCoupon } from '../support/coupons.js';
import { useHarness } from '../support/harness.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('/v2/projects/{project_id}/coupons: errors', () => {
  const h = useHarness();

  it('refuses every bad create with a 422 naming the problem, and changes nothing', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const foreignPlan = await createPlan(other);
    const plan = await createPlan(t);
    const deleted = await createPlan(t);
    expect((await t.request({ method: 'DELETE', url: `${t.base}/plans/${deleted.plan_id}` })).statusCode).toBe(204);
    const path = couponsPath(t);
    const before = await projectState(h, t.projectId);
    await forEachCase(
      [
        ['no code', [{ coupon_type: 'percentage', amount: 10 }, /code/]],
        ['a code with a space', [couponBody({ code: 'SPRING SALE' }), 'code must be 1 to 64 letters, digits, - or _, starting with a letter or digit']],
        ['a code of 65 characters', [couponBody({ code: 'A'.repeat(65) }), 'code must be 1 to 64 letters, digits, - or _, starting with a letter or digit']],
        ['an unknown coupon_type', [couponBody({ coupon_type: 'half' }), 'coupon_type must be one of: percentage, fixed']],
        ['an amount as a string', [couponBody({ amount: '20' }), /^amount must be an integer from 1 to 99999999$/]],
        ['an amount of 0', [couponBody({ amount: 0 }), 'amount must be an integer from 1 to 99999999']],
        ['a fractional amount', [couponBody({ amount: 12.5 }), 'amount must be an integer from 1 to 99999999']],
        ['a percentage over 100', [couponBody({ amount: 101 }), 'amount of a percentage coupon must be a whole percent from 1 to 100']],
        ['a percentage with a currency', [couponBody({ currency: 'USD' }), 'currency is for fixed coupons only: a percentage coupon fits every currency; leave it out']],
        ['a fixed coupon without currency', [couponBody({ coupon_type: 'fixed', amount: 500 }), 'currency is required for a fixed coupon: the amount is in that currency']],
        ['a lower-case currency', [couponBody({ coupon_type: 'fixed', amount: 500, currency: 'usd' }), 'currency must be an ISO 4217 currency code of three upper-case letters, e.g. "USD"']],
        ['a currency that is no ISO 4217 code', [couponBody({ coupon_type: 'fixed', amount: 500, currency: 'XYZ' }), 'currency XYZ is not an ISO 4217 currency code']],
        ['an unknown renewal_constraint', [couponBody({ renewal_constraint: 'forever' }), 'renewal_constraint must be one of: first_payment, every_payment, months']],
        ['months without renewal_months', [couponBody({ renewal_constraint: 'months' }), 'renewal_months is required with renewal_constraint "months" (1 to 36)']],
        ['renewal_months without months', [couponBody({ renewal_months: 3 }), 'renewal_months is for renewal_constraint "months" only; leave it out']],
        ['renewal_months of 37', [couponBody({ renewal_constraint: 'months', renewal_months: 37 }), 'renewal_months must be an integer from 1 to 36']],
        ['auto_apply as a string', [couponBody({ auto_apply: 'yes' }), 'auto_apply must be true or false']],
        ['an unknown invitee_mode', [couponBody({ invitee_mode: 'friends' }), 'invitee_mode must be one of: any, new_members, existing_members']],
        ['an unknown plan_scope', [couponBody({ plan_scope: 'some' }), 'plan_scope must be one of: all, selected']],
        ['selected without plans', [couponBody({ plan_scope: 'selected' }), 'plan_ids must list at least one plan with plan_scope "selected"']],
        ['plans with scope all', [couponBody({ plan_scope: 'all', plan_ids: [plan.plan_id] }), 'plan_ids is for plan_scope "selected" only: with "all" the coupon applies to every plan']],
        ['an empty plan list', [couponBody({ plan_scope: 'selected', plan_ids: [] }), 'plan_ids must be an array of 1 to 100 plan ids']],
        ['a plan id that is not a UUID', [couponBody({ plan_scope: 'selected', plan_ids: ['gold'] }), 'plan_ids[] must be a UUID']],
        ['a plan of another project', [couponBody({ plan_scope: 'selected', plan_ids: [plan.plan_id, foreignPlan.plan_id] }), `plan_ids: ${foreignPlan.plan_id} is no plan of this project`]],
        ['a deleted plan', [couponBody({ plan_scope: 'selected', plan_ids: [deleted.plan_id] }), `plan_ids: ${deleted.plan_id} is no plan of this project`]],
        ['max_uses of 0', [couponBody({ max_uses: 0 }), 'max_uses must be an integer from 1 to 1000000000 (or null: unlimited)']],
        ['an expiry in the past', [couponBody({ expires_at: '2020-01-01T00:00:00.000Z' }), 'expires_at must be a future timestamp']],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'POST', url: path, payload }), message),
    );
    expectInstantFormatError(await t.request({ method: 'POST', url: path, payload: couponBody({ expires_at: 'tomorrow' }) }), { method: 'POST', path, field: 'expires_at' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('409 for a code the project has, whatever its case; another project may use it', async () => {
    const t = await h.tenant();
    await createCoupon(t, { code: 'Summer' });
    const path = couponsPath(t);
    const before = await projectState(h, t.projectId);
    expectError(await t.request({ method: 'POST', url: path, payload: couponBody({ code: 'SUMMER' }) }), {
      status: 409,
      code: 'CONFLICT',
      method: 'POST',
      path,
      message: 'A coupon with code SUMMER already exists in this project (codes are matched whatever their case)',
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    const other = await createCoupon(t);
    const otherPath = `${path}/${other.coupon_id}`;
    const renamed = await t.request({ method: 'PATCH', url: otherPath, payload: { code: 'summer' } });
    expectError(renamed, { status: 409, code: 'CONFLICT', method: 'PATCH', path: otherPath, message: 'A coupon with code summer already exists in this project (codes are matched whatever their case)' });
    expect((await t.request({ method: 'GET', url: otherPath })).json().data).toStrictEqual(other);
    const elsewhere = await h.tenant();
    expect((await createCoupon(elsewhere, { code: 'SUMMER' })).code).toBe('SUMMER');
  });

  it('refuses a PATCH of the discount terms, an empty PATCH and bad values with a 422, changing nothing', async () => {
    const t = await h.tenant();
    const coupon = await createCoupon(t);
    const path = `${couponsPath(t)}/${coupon.coupon_id}`;
    const before = await projectState(h, t.projectId);
    await forEachCase(
      [
        ['the amount', [{ amount: 50 }, 'amount cannot be changed: a coupon\'s discount is fixed once made, as Stripe\'s coupons are; create a new coupon (and delete this one)']],
        ['the type and currency', [{ coupon_type: 'fixed', currency: 'USD', max_uses: 3 }, 'coupon_type, currency cannot be changed: a coupon\'s discount is fixed once made, as Stripe\'s coupons are; create a new coupon (and delete this one)']],
        ['the renewal', [{ renewal_constraint: 'every_payment' }, /^renewal_constraint cannot be changed/]],
        ['nothing', [{}, 'Provide at least one of code, auto_apply, invitee_mode, plan_scope, plan_ids, max_uses, expires_at']],
        ['a bad code', [{ code: '-x' }, 'code must be 1 to 64 letters, digits, - or _, starting with a letter or digit']],
        ['max_uses as a string', [{ max_uses: '5' }, 'max_uses must be an integer from 1 to 1000000000 (or null: unlimited)']],
        ['plans of no project', [{ plan_ids: [MISSING] }, `plan_ids: ${MISSING} is no plan of this project`]],
        ['selected without plans', [{ plan_scope: 'selected' }, 'plan_ids must list at least one plan with plan_scope "selected"']],
        ['an expiry in the past', [{ expires_at: 1_600_000_000_000 }, 'expires_at must be a future timestamp']],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'PATCH', url: path, payload }), message),
    );
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('404 for a coupon that does not exist or is another project\'s; 422 for an id that is not a UUID', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const foreign = await createCoupon(other);
    for (const id of [MISSING, foreign.coupon_id]) {
      const path = `${couponsPath(t)}/${id}`;
      for (const [method, payload] of [['GET', undefined], ['PATCH', { max_uses: 2 }], ['DELETE', undefined]] as const) {
        expectError(await t.request({ method, url: path, ...(payload ? { payload } : {}) }), { status: 404, code: 'NOT_FOUND', method, path, message: 'Coupon not found' });
      }
    }
    expect((await other.request({ method: 'GET', url: `${couponsPath(other)}/${foreign.coupon_id}` })).json().data).toStrictEqual(foreign);
    const bad = `${couponsPath(t)}/not-a-uuid`;
    expectError(await t.request({ method: 'GET', url: bad }), { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path: bad, message: 'coupon_id must be a UUID' });
  });
});
