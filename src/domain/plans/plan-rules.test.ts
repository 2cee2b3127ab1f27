import { describe, expect, it } from 'vitest';
import { changesSomething, DURATION_PATTERN, extrasProblem, formatPrice, isCurrency, mergePlan, newPlan, PRICE_PATTERN, type PlanFields } from './plan-rules.js';

const current: PlanFields = {
  name: 'Gold',
  price: '10.00',
  currency: 'USD',
  duration: '1 month',
  priceFormatted: 'ten dollars',
  recurring: false,
  oneTime: true,
  trialDays: null,
  reminderOffsets: null,
};

describe('plan value rules', () => {
  it.each(['0', '0.5', '10', '10.05', '999999999999.99'])('PRICE_PATTERN accepts %s', (price) => {
    expect(new RegExp(PRICE_PATTERN).test(price)).toBe(true);
  });

  it.each(['', '-1', '01', '1.', '.1', '1.234', '1e2', '1000000000000', '1,5'])('PRICE_PATTERN refuses %j', (price) => {
    expect(new RegExp(PRICE_PATTERN).test(price)).toBe(false);
  });

  it.each(['1 hour', '24 hours', '1 days', '9999 years', '2 week'])('DURATION_PATTERN accepts %s', (duration) => {
    expect(new RegExp(DURATION_PATTERN).test(duration)).toBe(true);
  });

  it.each(['0 days', '10000 days', '1 Day', '1day', ' 1 day', '1 day ', '1 minute', 'P1M'])('DURATION_PATTERN refuses %j', (duration) => {
    expect(new RegExp(DURATION_PATTERN).test(duration)).toBe(false);
  });

  it('knows ISO 4217 codes', () => {
    expect(isCurrency('USD')).toBe(true);
    expect(isCurrency('EUR')).toBe(true);
    expect(isCurrency('XYZ')).toBe(false);
    expect(isCurrency('usd')).toBe(false);
  });

  it('formats a price exactly from its decimal string', () => {
    expect(formatPrice('999999999999.99', 'USD')).toBe('$999,999,999,999.99');
    expect(formatPrice('0.1', 'EUR')).toBe('€0.10');
  });
});

describe('newPlan', () => {
  it('defaults plan_data and the display price', () => {
    expect(newPlan({ plan_name: 'A', plan_price: '5', plan_currency: 'USD', plan_duration: '1 day' })).toStrictEqual({
      name: 'A',
      price: '5',
      currency: 'USD',
      duration: '1 day',
      priceFormatted: '$5.00',
      recurring: false,
      oneTime: true,
      trialDays: null,
      reminderOffsets: null,
    });
  });
});

describe('extrasProblem', () => {
  it('takes a trial on a recurring plan and normalises offsets as the setting does', () => {
    const plan = { ...current, recurring: true, trialDays: 14, reminderOffsets: ['1d', '24h', '7d'] };
    expect(extrasProblem(plan)).toStrictEqual({ ok: true, value: { ...plan, reminderOffsets: ['7d', '1d'] } });
  });

  it('refuses a trial on a one-time plan, a trial out of range and bad offsets', () => {
    expect(extrasProblem({ ...current, trialDays: 7 })).toMatchObject({ ok: false, message: expect.stringContaining('needs a recurring plan') });
    expect(extrasProblem({ ...current, recurring: true, trialDays: 731 })).toMatchObject({ ok: false, message: expect.stringContaining('from 1 to 730') });
    expect(extrasProblem({ ...current, reminderOffsets: ['2w'] })).toMatchObject({ ok: false, message: expect.stringContaining('reminder_offsets must be') });
  });
});

describe('mergePlan', () => {
  it('keeps everything not in the patch, the display price included', () => {
    expect(mergePlan(current, { plan_name: 'Silver' })).toStrictEqual({ ...current, name: 'Silver' });
  });

  it('re-formats the display price when price or currency change without one', () => {
    expect(mergePlan(current, { plan_price: '12' }).priceFormatted).toBe('$12.00');
    expect(mergePlan(current, { plan_currency: 'GBP' }).priceFormatted).toBe('£10.00');
  });

  it('takes a display price sent with the new price', () => {
    expect(mergePlan(current, { plan_price: '12', plan_price_formatted: '12 bucks' }).priceFormatted).toBe('12 bucks');
  });

  it('merges plan_data flag by flag', () => {
    expect(mergePlan(current, { plan_data: { plan_recurring: true } })).toMatchObject({ recurring: true, oneTime: true });
  });
});

describe('changesSomething', () => {
  it.each([{}, { plan_data: {} }, { other: 1 } as object])('is false for %j', (patch) => {
    expect(changesSomething(patch)).toBe(false);
  });

  it.each([{ plan_name: 'x' }, { plan_data: { plan_one_time: false } }])('is true for %j', (patch) => {
    expect(changesSomething(patch)).toBe(true);
  });
});
