import { createHash } from 'node:crypto';

/**
 * The value rules of a checkout (docs/payments.md, "Checkout"): a plan's price and duration as
 * Stripe takes them, and the idempotency key that makes a retried checkout the same session.
 */

/**
 * Digits of each currency, as read: building an Intl.NumberFormat costs ~0.1 ms, on every checkout
 * and pay link. Bounded: Intl accepts any three letters, and a caller may pass what a request said.
 */
const DIGITS = new Map<string, number>();
const MAX_DIGITS_KEPT = 1000;

/** Digits after the point in `currency`'s smallest unit, as Intl knows them (JPY 0, USD 2, KWD 3). */
export function fractionDigits(currency: string): number {
  let digits = DIGITS.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    if (DIGITS.size < MAX_DIGITS_KEPT) DIGITS.set(currency, digits);
  }
  return digits;
}

/**
 * A decimal price ("29.99") in the currency's smallest unit (2999), as Stripe counts amounts;
 * null when the price has more fraction digits than the currency (1.50 JPY), which no card can pay.
 */
export function minorUnits(price: string, currency: string): number | null {
  const digits = fractionDigits(currency);
  const [whole, fraction = ''] = price.split('.');
  if (fraction.replace(/0+$/, '').length > digits) return null;
  return Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0').slice(0, digits) || '0');
}

export type Interval = 'day' | 'week' | 'month' | 'year';

/** A plan's duration (`N unit[s]`) as a Stripe billing interval; null for hours, which Stripe does not bill by. */
export function recurringOf(duration: string): { interval: Interval; intervalCount: number } | null {
  const m = /^(\d+) (hour|day|week|month|year)s?$/.exec(duration);
  if (!m || m[2] === 'hour') return null;
  return { interval: m[2] as Interval, intervalCount: Number(m[1]) };
}

/**
 * The Idempotency-Key a checkout sends Stripe: a digest of everything the session is made of, so a
 * retried call within Stripe's 24 hours gets the first session back (no second charge possible),
 * while a changed plan, price or URL makes a new one instead of an idempotency_error.
 */
export function checkoutIdempotencyKey(parts: Record<string, string | number | boolean | null>): string {
  const canonical = JSON.stringify(Object.keys(parts).sort().map((k) => [k, parts[k]]));
  return `tenure-checkout-${createHash('sha256').update(canonical).digest('hex')}`;
}
