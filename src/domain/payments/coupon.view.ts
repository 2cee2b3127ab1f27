import type { CouponType, InviteeMode, PlanScope, RenewalConstraint } from './coupon-rules.js';

/** A coupon as the API shows it (docs/coupons.md). */
export interface CouponView {
  coupon_id: string;
  code: string;
  coupon_type: CouponType;
  /** Percent off (1-100) for `percentage`; for `fixed`, the amount off in the currency's smallest unit. */
  amount: number;
  /** ISO 4217 of a fixed coupon's amount; null for a percentage. */
  currency: string | null;
  renewal_constraint: RenewalConstraint;
  /** For `months`: how many months of a subscription the discount lasts; null otherwise. */
  renewal_months: number | null;
  auto_apply: boolean;
  invitee_mode: InviteeMode;
  plan_scope: PlanScope;
  /** The plans a `selected` coupon applies to; empty for `all`. */
  plan_ids: string[];
  /** Null: unlimited. */
  max_uses: number | null;
  /** Uses taken by checkouts: reserved when the session is made, given back when it expires unpaid. */
  uses: number;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}
