import { describe, expect, it } from 'vitest';
import { couponProblem, discountOf, rankAutoApplied, stripeDurationOf, termsOf, type CheckoutContext, type CouponCandidate } from './coupon-rules.js';

const candidate = (o: Partial<CouponCandidate & { createdAt: string }> = {}): CouponCandidate & { createdAt: string } => ({
  id: o.id ?? 'c1',
  code: 'SAVE',
  couponType: 'percentage',
  amount: 10,
  currency: null,
  renewalConstraint: 'first_payment',
  renewalMonths: null,
  inviteeMode: 'any',
  planScope: 'all',
  planIds: [],
  maxUses: null,
  uses: 0,
  expiresAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...o,
});

const ctx: CheckoutContext = { planId: 'p1', currency: 'USD', unitAmount: 2000, mode: 'payment', hasMembership: false, now: new Date('2026-06-01T00:00:00.000Z') };

describe('coupon rules', () => {
  it('holds the terms together: a percentage 1-100 without currency, a fixed amount with one, renewal_months with "months" only', () => {
    expect(termsOf({ coupon_type: 'percentage', amount: 100 })).toStrictEqual({ couponType: 'percentage', amount: 100, currency: null, renewalConstraint: 'first_payment', renewalMonths: null });
    expect(termsOf({ coupon_type: 'percentage', amount: 101 })).toHaveProperty('problem');
    expect(termsOf({ coupon_type: 'percentage', amount: 5, currency: 'USD' })).toHaveProperty('problem');
    expect(termsOf({ coupon_type: 'fixed', amount: 500 })).toHaveProperty('problem');
    expect(termsOf({ coupon_type: 'fixed', amount: 500, currency: 'ABC' })).toHaveProperty('problem');
    expect(termsOf({ coupon_type: 'fixed', amount: 500, currency: 'EUR', renewal_constraint: 'months', renewal_months: 6 })).toMatchObject({ currency: 'EUR', renewalMonths: 6 });
    expect(termsOf({ coupon_type: 'fixed', amount: 500, currency: 'EUR', renewal_constraint: 'months' })).toHaveProperty('problem');
    expect(termsOf({ coupon_type: 'fixed', amount: 500, currency: 'EUR', renewal_months: 6 })).toHaveProperty('problem');
  });

  it("maps renewal_constraint onto Stripe's coupon duration", () => {
    expect(stripeDurationOf({ renewalConstraint: 'first_payment', renewalMonths: null })).toStrictEqual({ duration: 'once', durationInMonths: null });
    expect(stripeDurationOf({ renewalConstraint: 'every_payment', renewalMonths: null })).toStrictEqual({ duration: 'forever', durationInMonths: null });
    expect(stripeDurationOf({ renewalConstraint: 'months', renewalMonths: 3 })).toStrictEqual({ duration: 'repeating', durationInMonths: 3 });
  });

  it('takes a rounded percentage, or a fixed amount up to the whole price', () => {
    expect(discountOf({ couponType: 'percentage', amount: 15 }, 999)).toBe(150);
    expect(discountOf({ couponType: 'fixed', amount: 500 }, 2000)).toBe(500);
    expect(discountOf({ couponType: 'fixed', amount: 5000 }, 2000)).toBe(2000);
  });

  it('says why a coupon does not fit a checkout: expiry, plan, currency, member, a free one-time payment; never the uses count', () => {
    expect(couponProblem(candidate(), ctx)).toBeNull();
    expect(couponProblem(candidate({ maxUses: 1, uses: 1 }), ctx)).toBeNull();
    expect(couponProblem(candidate({ expiresAt: ctx.now }), ctx)).toMatch(/expired at 2026-06-01T00:00:00.000Z/);
    expect(couponProblem(candidate({ planScope: 'selected', planIds: ['p2'] }), ctx)).toMatch(/does not apply to plan p1/);
    expect(couponProblem(candidate({ couponType: 'fixed', amount: 100, currency: 'EUR' }), ctx)).toMatch(/in EUR off, and the plan is priced in USD/);
    expect(couponProblem(candidate({ inviteeMode: 'new_members' }), { ...ctx, hasMembership: true })).toMatch(/new members only/);
    expect(couponProblem(candidate({ inviteeMode: 'existing_members' }), ctx)).toMatch(/existing members only/);
    expect(couponProblem(candidate({ amount: 100 }), ctx)).toMatch(/makes this one-time payment free/);
    // A subscription's free first invoice is still a paid invoice (invoice.paid).
    expect(couponProblem(candidate({ amount: 100 }), { ...ctx, mode: 'subscription' })).toBeNull();
  });

  it('ranks the auto-applied coupons that fit by their discount on the price, then the newest', () => {
    const ranked = rankAutoApplied(
      [
        candidate({ id: 'ten', amount: 10 }),
        candidate({ id: 'fixed', couponType: 'fixed', amount: 500, currency: 'USD' }),
        candidate({ id: 'ten-newer', amount: 10, createdAt: '2026-02-01T00:00:00.000Z' }),
        candidate({ id: 'euro', couponType: 'fixed', amount: 900, currency: 'EUR' }),
      ],
      ctx,
    );
    expect(ranked.map((c) => c.id)).toStrictEqual(['fixed', 'ten-newer', 'ten']);
  });
});
