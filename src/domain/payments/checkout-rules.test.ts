import { describe, expect, it } from 'vitest';
import { checkoutIdempotencyKey, minorUnits, recurringOf } from './checkout-rules.js';

describe('checkout rules', () => {
  it('counts a price in the currency\'s smallest unit', () => {
    expect(minorUnits('29.99', 'USD')).toBe(2999);
    expect(minorUnits('10', 'EUR')).toBe(1000);
    expect(minorUnits('0.5', 'USD')).toBe(50);
    expect(minorUnits('1500', 'JPY')).toBe(1500);
    expect(minorUnits('1500.00', 'JPY')).toBe(1500);
    expect(minorUnits('1.5', 'JPY')).toBeNull();
    expect(minorUnits('1.25', 'KWD')).toBe(1250);
    expect(minorUnits('999999999999.99', 'USD')).toBe(99999999999999);
  });

  it('bills a duration by day, week, month or year, never by hour', () => {
    expect(recurringOf('1 month')).toStrictEqual({ interval: 'month', intervalCount: 1 });
    expect(recurringOf('3 months')).toStrictEqual({ interval: 'month', intervalCount: 3 });
    expect(recurringOf('2 weeks')).toStrictEqual({ interval: 'week', intervalCount: 2 });
    expect(recurringOf('1 year')).toStrictEqual({ interval: 'year', intervalCount: 1 });
    expect(recurringOf('12 hours')).toBeNull();
  });

  it('keys a checkout by what it is made of, whatever the order of the parts', () => {
    const a = checkoutIdempotencyKey({ plan: 'p', user: '1', price: 100 });
    expect(a).toBe(checkoutIdempotencyKey({ user: '1', price: 100, plan: 'p' }));
    expect(a).not.toBe(checkoutIdempotencyKey({ plan: 'p', user: '1', price: 101 }));
    expect(a).toMatch(/^tenure-checkout-[0-9a-f]{64}$/);
    expect(a.length).toBeLessThanOrEqual(255);
  });
});
