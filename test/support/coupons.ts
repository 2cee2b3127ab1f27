import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { CouponView } from '../../src/domain/payments/coupon.view.js';
import { rowsOf } from '../../src/database/db.js';
import type { Harness, Tenant } from './harness.js';
import { CHECKOUT_URLS, checkoutPath } from './payments.js';

/** Coupon test helpers (docs/coupons.md). */

export const couponsPath = (t: Tenant) => `${t.base}/coupons`;

let sequence = 0;
/** A fresh code: codes are unique per project, whatever their case. */
export const couponCode = (prefix = 'SAVE') => `${prefix}${Date.now().toString(36).toUpperCase()}${(sequence++).toString(36).toUpperCase()}`;

export const couponBody = (overrides: Record<string, unknown> = {}) => ({ code: couponCode(), coupon_type: 'percentage', amount: 20, ...overrides });

/** A coupon that must be created (201); the answer's `data`. */
export async function createCoupon(t: Tenant, overrides: Record<string, unknown> = {}): Promise<CouponView> {
  const res = await t.request({ method: 'POST', url: couponsPath(t), payload: couponBody(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function getCoupon(t: Tenant, couponId: string): Promise<CouponView> {
  const res = await t.request({ method: 'GET', url: `${couponsPath(t)}/${couponId}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** A checkout with `coupon` (left out when undefined); the raw answer. */
export function checkoutWith(t: Tenant, planId: string, user: string, coupon?: string) {
  return t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: planId, user_id: user, ...CHECKOUT_URLS, ...(coupon === undefined ? {} : { coupon }) } });
}

export interface RedemptionRow {
  coupon_id: string;
  user_id: string;
  checkout_session_id: string | null;
  status: string;
}

export async function redemptionRows(h: Harness, couponId: string): Promise<RedemptionRow[]> {
  return rowsOf<RedemptionRow>(
    await h.database.db.execute(sql`
      SELECT coupon_id, user_id, checkout_session_id, status FROM coupon_redemptions WHERE coupon_id = ${couponId} ORDER BY created_at, id`),
  );
}
