import { isCurrency } from '../plans/plan-rules.js';

/**
 * The value rules of coupons (docs/coupons.md): what a coupon takes off a price, how
 * long it lasts on a subscription as a Stripe coupon, and whether it fits a checkout. Pure, so
 * each rule is tested without a database.
 */

export const COUPON_TYPES = ['percentage', 'fixed'] as const;
export type CouponType = (typeof COUPON_TYPES)[number];

/** Which payments of a subscription the discount covers: Stripe's coupon `duration` once | forever | repeating. */
export const RENEWAL_CONSTRAINTS = ['first_payment', 'every_payment', 'months'] as const;
export type RenewalConstraint = (typeof RENEWAL_CONSTRAINTS)[number];

/** Who may use it: anyone, members new to the project (no membership, past or present), or members who have (had) one. */
export const INVITEE_MODES = ['any', 'new_members', 'existing_members'] as const;
export type InviteeMode = (typeof INVITEE_MODES)[number];

export const PLAN_SCOPES = ['all', 'selected'] as const;
export type PlanScope = (typeof PLAN_SCOPES)[number];

/** Letters, digits, `-` and `_`, starting with a letter or digit: what a member can type and a URL can carry. */
export const CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
/** Stripe's own bound on `duration_in_months` is not documented; three years matches its longest billing interval. */
export const MAX_RENEWAL_MONTHS = 36;
/** Stripe's largest amount in the smallest unit (eight digits). */
export const MAX_FIXED_AMOUNT = 99_999_999;
export const MAX_PLAN_IDS = 100;

/** The discount terms of a coupon: fixed once made, as Stripe's coupons are. */
export interface CouponTerms {
  couponType: CouponType;
  amount: number;
  currency: string | null;
  renewalConstraint: RenewalConstraint;
  renewalMonths: number | null;
}

/** The terms' fields of a create request, before they are checked together. */
export interface CouponTermsInput {
  coupon_type: CouponType;
  amount: number;
  currency?: string | null;
  renewal_constraint?: RenewalConstraint;
  renewal_months?: number | null;
}

/** The terms of a new coupon, or why they do not hold together (a 422's message). */
export function termsOf(input: CouponTermsInput): CouponTerms | { problem: string } {
  const renewalConstraint = input.renewal_constraint ?? 'first_payment';
  const currency = input.currency ?? null;
  if (input.coupon_type === 'percentage') {
    if (input.amount < 1 || input.amount > 100) return { problem: 'amount of a percentage coupon must be a whole percent from 1 to 100' };
    if (currency !== null) return { problem: 'currency is for fixed coupons only: a percentage coupon fits every currency; leave it out' };
  } else {
    if (input.amount < 1 || input.amount > MAX_FIXED_AMOUNT) {
      return { problem: `amount of a fixed coupon must be an integer from 1 to ${MAX_FIXED_AMOUNT}, in the currency's smallest unit (500 = 5.00 USD)` };
    }
    if (currency === null) return { problem: 'currency is required for a fixed coupon: the amount is in that currency' };
    if (!isCurrency(currency)) return { problem: `currency ${currency} is not an ISO 4217 currency code` };
  }
  const months = input.renewal_months ?? null;
  if (renewalConstraint === 'months') {
    if (months === null) return { problem: `renewal_months is required with renewal_constraint "months" (1 to ${MAX_RENEWAL_MONTHS})` };
  } else if (months !== null) {
    return { problem: 'renewal_months is for renewal_constraint "months" only; leave it out' };
  }
  return { couponType: input.coupon_type, amount: input.amount, currency, renewalConstraint, renewalMonths: months };
}

/** Stripe's `duration` (and `duration_in_months`) for the terms. */
export function stripeDurationOf(t: Pick<CouponTerms, 'renewalConstraint' | 'renewalMonths'>): { duration: 'once' | 'forever' | 'repeating'; durationInMonths: number | null } {
  switch (t.renewalConstraint) {
    case 'first_payment':
      return { duration: 'once', durationInMonths: null };
    case 'every_payment':
      return { duration: 'forever', durationInMonths: null };
    case 'months':
      return { duration: 'repeating', durationInMonths: t.renewalMonths };
  }
}

/**
 * What the coupon takes off a price of `unitAmount` (smallest unit): a percentage rounded as
 * Stripe rounds it (half up, on the amount), a fixed amount at most the whole price.
 */
export function discountOf(t: Pick<CouponTerms, 'couponType' | 'amount'>, unitAmount: number): number {
  if (t.couponType === 'percentage') return Math.round((unitAmount * t.amount) / 100);
  return Math.min(t.amount, unitAmount);
}

/** A coupon as a checkout weighs it. */
export interface CouponCandidate extends CouponTerms {
  id: string;
  code: string;
  inviteeMode: InviteeMode;
  planScope: PlanScope;
  planIds: string[];
  maxUses: number | null;
  uses: number;
  expiresAt: Date | null;
}

/** What a checkout is, as the coupon rules see it. */
export interface CheckoutContext {
  planId: string;
  currency: string;
  unitAmount: number;
  mode: 'payment' | 'subscription';
  /** Whether the member has, or has had, a membership in the project. */
  hasMembership: boolean;
  now: Date;
}

/**
 * Why `coupon` cannot be used for this checkout (the 422's message), or null when it can. Uses
 * left are not judged here but when one is reserved (CheckoutCoupons.reserve), race-safe, and where a
 * retried checkout finds the use it holds already: judged from the count, its own use would
 * refuse it.
 */
export function couponProblem(c: CouponCandidate, ctx: CheckoutContext): string | null {
  const name = `Coupon ${c.code}`;
  if (c.expiresAt && c.expiresAt.getTime() <= ctx.now.getTime()) return `${name} expired at ${c.expiresAt.toISOString()}`;
  if (c.planScope === 'selected' && !c.planIds.includes(ctx.planId)) return `${name} does not apply to plan ${ctx.planId}`;
  if (c.couponType === 'fixed' && c.currency !== ctx.currency) {
    return `${name} takes an amount in ${c.currency} off, and the plan is priced in ${ctx.currency}`;
  }
  if (c.inviteeMode === 'new_members' && ctx.hasMembership) return `${name} is for new members only, and this user has (or had) a membership in the project`;
  if (c.inviteeMode === 'existing_members' && !ctx.hasMembership) return `${name} is for existing members only, and this user has never had a membership in the project`;
  // Stripe makes no free one-time payment from a Checkout Session; a subscription's free first invoice is still paid (invoice.paid).
  if (ctx.mode === 'payment' && discountOf(c, ctx.unitAmount) >= ctx.unitAmount) {
    return `${name} makes this one-time payment free: there would be nothing to pay; create the membership instead (POST /memberships)`;
  }
  return null;
}

/**
 * The auto-applied coupons that fit the checkout, the best first: the largest discount on this
 * price, then the newest. Each is tried in turn when a use is reserved, so a coupon used up in the
 * meantime gives way to the next.
 */
export function rankAutoApplied(candidates: readonly (CouponCandidate & { createdAt: string })[], ctx: CheckoutContext): CouponCandidate[] {
  return candidates
    .filter((c) => couponProblem(c, ctx) === null)
    .sort((a, b) => discountOf(b, ctx.unitAmount) - discountOf(a, ctx.unitAmount) || b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
}

/** The Stripe coupon's `id` for a coupon: tenure's id, so a coupon made twice (a lost answer, a race) is found, not doubled. */
export const stripeCouponIdOf = (couponId: string) => `tenure_${couponId}`;
