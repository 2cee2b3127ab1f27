import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { CheckoutCoupons } from '../../src/domain/payments/checkout-coupons.js';
import { rowsOf } from '../../src/database/db.js';
import { createPlan } from '../support/catalogue.js';
import { checkoutWith, createCoupon, getCoupon, redemptionRows } from '../support/coupons.js';
import { userId, useHarness } from '../support/harness.js';
import { connectStripe } from '../support/payments.js';

/**
 * A coupon's last use goes to one checkout however many race for it (docs/coupons.md, "Coupons
 * at checkout"): the use is taken by a conditional UPDATE, on both storages.
 */
describe('coupon uses under concurrent checkouts', () => {
  const h = useHarness();

  it('eight checkouts racing for the last use: one session with the coupon, seven 422s, uses = max_uses', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '12' });
    const coupon = await createCoupon(t, { max_uses: 3 });
    // Two uses gone already: one left.
    for (let i = 0; i < 2; i++) expect((await checkoutWith(t, plan.plan_id, userId(), coupon.code)).statusCode).toBe(200);
    const answers = await Promise.all(Array.from({ length: 8 }, () => checkoutWith(t, plan.plan_id, userId(), coupon.code)));
    const won = answers.filter((a) => a.statusCode === 200);
    expect(won, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    expect(won[0]!.json().data.coupon_id).toBe(coupon.coupon_id);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode, a.body).toBe(422);
      expect(a.json().error.message).toBe(`Coupon ${coupon.code} has been used up (max_uses 3)`);
    }
    expect((await getCoupon(t, coupon.coupon_id)).uses).toBe(3);
    expect((await redemptionRows(h, coupon.coupon_id)).filter((r) => r.status === 'reserved')).toHaveLength(3);
    const discounted = [...h.stripe.world.sessions.values()].filter((s) => s.metadata.project_id === t.projectId && s.discounts.length > 0);
    expect(discounted).toHaveLength(3);
  });

  it('the reservation alone: twelve reservations with distinct checkouts at once take exactly max_uses; the same checkout twice at once takes one', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const coupon = await createCoupon(t, { max_uses: 5 });
    const { stores, transactor, stripe, clock } = h.container;
    const coupons = new CheckoutCoupons(stores.coupons, transactor, stripe, clock);
    const reserve = (key: string) => coupons.reserve({ projectId: t.projectId, couponId: coupon.coupon_id, checkoutKey: key, userId: userId(), planId: plan.plan_id });
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => reserve(`checkout-${i}`)));
    expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'none')).toHaveLength(7);
    const counts = rowsOf<{ uses: number; held: number }>(
      await h.database.db.execute(sql`
        SELECT (SELECT uses FROM coupons WHERE id = ${coupon.coupon_id}) AS uses,
               (SELECT count(*)::int FROM coupon_redemptions WHERE coupon_id = ${coupon.coupon_id} AND status = 'reserved') AS held`),
    )[0];
    expect(counts).toStrictEqual({ uses: 5, held: 5 });

    const roomy = await createCoupon(t, { max_uses: 10 });
    const again = (key: string) => coupons.reserve({ projectId: t.projectId, couponId: roomy.coupon_id, checkoutKey: key, userId: userId(), planId: plan.plan_id });
    const twice = await Promise.all([again('same'), again('same'), again('same')]);
    expect([...twice].sort()).toStrictEqual(['already', 'already', 'reserved']);
    expect((await getCoupon(t, roomy.coupon_id)).uses).toBe(1);
  });
});
