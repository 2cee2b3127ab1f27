import type { CouponsStore } from '../../store/coupons.store.js';
import type { MerchantAccountSecrets } from '../../store/merchant-accounts.store.js';
import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import type { Transactor } from '../transactions.js';
import { couponProblem, rankAutoApplied, stripeCouponIdOf, stripeDurationOf, type CheckoutContext, type CouponCandidate } from './coupon-rules.js';
import { errorOfRefusal } from './merchant-accounts.service.js';
import type { StripeApi } from './stripe-api.js';

/**
 * The coupon side of a checkout (docs/coupons.md, "Coupons at checkout"): which coupon applies,
 * a use of it reserved for the checkout, and the Stripe coupon the session is discounted by.
 */

/** The coupon statements a checkout runs outside the reservation: reads, a use released, Stripe coupons remembered. */
export type CheckoutCouponStatements = Pick<CouponsStore, 'byCode' | 'hasMembership' | 'autoApplied' | 'release' | 'attachSession' | 'stripeCouponOf' | 'rememberStripeCoupon'>;

/** The statements of a reservation, run in one transaction. */
export interface ReservationStores {
  coupons: Pick<CouponsStore, 'claimRedemption' | 'hasRedemption' | 'takeUse'>;
}

export type Reservation = 'reserved' | 'already' | 'none';

/** Rolls back a redemption claimed for a use that was not there. */
class NoUseLeft extends Error {}

export interface CouponChoice {
  /** The coupons to try, in order: the one named, or the auto-applied ones that fit, best first. */
  candidates: CouponCandidate[];
  /** Whether the client named it: then a coupon used up in the meantime is a 422, not the next one. */
  named: boolean;
}

export class CheckoutCoupons {
  constructor(
    private readonly store: CheckoutCouponStatements,
    private readonly transactor: Transactor<ReservationStores>,
    private readonly stripe: Pick<StripeApi, 'createCoupon'>,
    private readonly clock: Clock,
  ) {}

  /** The coupon named by `code` if it fits the checkout (a 422 naming why not), else the auto-applied ones that fit. */
  async choose(projectId: string, userId: string, code: string | undefined, ctx: Omit<CheckoutContext, 'hasMembership' | 'now'>): Promise<Result<CouponChoice>> {
    const now = this.clock.now();
    if (code !== undefined) {
      const coupon = await this.store.byCode(projectId, code);
      if (!coupon) return fail('VALIDATION_ERROR', `Coupon ${code} does not exist in this project`);
      const hasMembership = coupon.inviteeMode === 'any' ? false : await this.store.hasMembership(projectId, userId);
      const problem = couponProblem(coupon, { ...ctx, hasMembership, now });
      return problem ? fail('VALIDATION_ERROR', problem) : ok({ candidates: [coupon], named: true });
    }
    const auto = await this.store.autoApplied(projectId);
    if (auto.length === 0) return ok({ candidates: [], named: false });
    const hasMembership = auto.some((c) => c.inviteeMode !== 'any') ? await this.store.hasMembership(projectId, userId) : false;
    return ok({ candidates: rankAutoApplied(auto, { ...ctx, hasMembership, now }), named: false });
  }

  /**
   * Takes a use of the coupon for the checkout `checkoutKey`: `reserved` when one was left (and the
   * coupon is still there and unexpired), `already` when this checkout holds one (a retry), `none`
   * otherwise. The redemption row goes first, so a concurrent retry of the same checkout waits and
   * then finds it; the use is taken next, and when none is left the claim rolls back with it.
   */
  async reserve(r: { projectId: string; couponId: string; checkoutKey: string; userId: string; planId: string }): Promise<Reservation> {
    const now = this.clock.now();
    try {
      return await this.transactor.run(async ({ coupons }) => {
        if (!(await coupons.claimRedemption(r, now))) return (await coupons.hasRedemption(r.couponId, r.checkoutKey)) ? 'already' : 'none';
        if (!(await coupons.takeUse(r.couponId, now))) throw new NoUseLeft();
        return 'reserved';
      });
    } catch (err) {
      if (err instanceof NoUseLeft) return 'none';
      throw err;
    }
  }

  release(couponId: string, checkoutKey: string): Promise<void> {
    return this.store.release(couponId, checkoutKey, this.clock.now());
  }

  attachSession(couponId: string, checkoutKey: string, sessionId: string): Promise<boolean> {
    return this.store.attachSession(couponId, checkoutKey, sessionId);
  }

  /**
   * The Stripe coupon of `coupon` on the account: the one made at its first checkout there, or made
   * now (`POST /v1/coupons`, id `tenure_<coupon_id>`) and remembered. The limits are tenure's, not
   * set on Stripe's coupon: they can change (PATCH), and Stripe's cannot.
   */
  async stripeCouponFor(coupon: CouponCandidate, account: Pick<MerchantAccountSecrets, 'id' | 'projectId' | 'providerAccountId'>, secretKey: string): Promise<Result<string>> {
    const known = await this.store.stripeCouponOf(coupon.id, account.id, account.providerAccountId);
    if (known) return ok(known);
    const { duration, durationInMonths } = stripeDurationOf(coupon);
    const made = await this.stripe.createCoupon(secretKey, {
      id: stripeCouponIdOf(coupon.id),
      name: coupon.code,
      percentOff: coupon.couponType === 'percentage' ? coupon.amount : null,
      amountOff: coupon.couponType === 'fixed' ? coupon.amount : null,
      currency: coupon.couponType === 'fixed' ? coupon.currency!.toLowerCase() : null,
      duration,
      durationInMonths,
      metadata: { project_id: account.projectId, coupon_id: coupon.id },
    });
    if (!made.ok) return { ok: false, error: errorOfRefusal(made, `coupon ${coupon.code}`, 'Connect the merchant account again with a current key') };
    await this.store.rememberStripeCoupon(coupon.id, account.id, account.providerAccountId, made.couponId);
    return ok(made.couponId);
  }
}
