import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createPlan, planBody } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';
import { planCreate } from '../support/operations.catalogue.js';

const PRICE = 'plan_price must be a non-negative decimal string with at most 2 fraction digits, e.g. "29.99"';
const CURRENCY = 'plan_currency must be an ISO 4217 currency code of three upper-case letters, e.g. "USD"';
const DURATION = 'plan_duration must read "N hour|day|week|month|year[s]" with N from 1 to 9999, e.g. "1 month" or "3 months"';
const NAME = 'plan_name must be a non-blank string of at most 200 characters';

describe(`${planCreate.name}: errors`, () => {
  const h = useHarness();

  /** Sends `payload` to a project that already has a plan; answers 422 with `message`; nothing changes. */
  async function expect422(payload: unknown, message: string | RegExp) {
    const t = await h.tenant();
    await createPlan(t);
    const path = `${t.base}/plans`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({
      method: 'POST',
      url: path,
      payload: JSON.stringify(payload),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, {
      status: 422,
      code: 'VALIDATION_ERROR',
      method: 'POST',
      path,
      message: typeof message === 'string' ? message : expect.stringMatching(message),
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  // plan_currency may be left out: the project's default_currency (test/http/plan-extras.test.ts).
  it.each(['plan_name', 'plan_price', 'plan_duration'])('answers 422 when %s is missing', async (field) => {
    const body: Record<string, unknown> = planBody();
    delete body[field];
    await expect422(body, `${field} is required`);
  });

  it.each([
    ['a negative price', '-1'],
    ['three fraction digits', '10.999'],
    ['a trailing dot', '10.'],
    ['a leading dot', '.5'],
    ['a leading zero', '010'],
    ['a comma', '10,00'],
    ['an exponent', '1e3'],
    ['letters', 'ten'],
    ['the empty string', ''],
    ['13 integer digits', '1000000000000'],
    ['whitespace', ' 10 '],
    ['a currency sign', '$10'],
  ])('answers 422 for a plan_price of %s', async (_what, plan_price) => {
    await expect422(planBody({ plan_price }), PRICE);
  });

  it.each([
    ['a number', 10],
    ['null', null],
  ])('answers 422 for a plan_price that is %s, not a string', async (_what, plan_price) => {
    await expect422(planBody({ plan_price }), PRICE);
  });

  it.each([
    ['lower case', 'usd'],
    ['two letters', 'US'],
    ['four letters', 'USDT'],
    ['a symbol', '$'],
    ['a number', 840],
  ])('answers 422 for a plan_currency in %s', async (_what, plan_currency) => {
    await expect422(planBody({ plan_currency }), CURRENCY);
  });

  it.each(['XYZ', 'ABC', 'EUX'])('answers 422 for %s, three letters but no ISO 4217 code', async (plan_currency) => {
    await expect422(planBody({ plan_currency }), `plan_currency ${plan_currency} is not an ISO 4217 currency code`);
  });

  it.each([
    ['no number', 'month'],
    ['zero', '0 months'],
    ['a leading zero', '01 month'],
    ['a negative number', '-1 month'],
    ['a fraction', '1.5 months'],
    ['five digits', '10000 days'],
    ['an unknown unit', '1 fortnight'],
    ['minutes (not a unit)', '30 minutes'],
    ['upper case', '1 Month'],
    ['no space', '1month'],
    ['two spaces', '1  month'],
    ['trailing text', '1 month free'],
    ['words', 'forever'],
    ['the empty string', ''],
    ['a number', 30],
  ])('answers 422 for a plan_duration of %s', async (_what, plan_duration) => {
    await expect422(planBody({ plan_duration }), DURATION);
  });

  it.each([
    ['the empty string', ''],
    ['blanks only', '   '],
    ['201 characters', 'x'.repeat(201)],
    ['a number', 7],
  ])('answers 422 for a plan_name of %s', async (_what, plan_name) => {
    await expect422(planBody({ plan_name }), NAME);
  });

  it.each([
    ['the empty string', ''],
    ['51 characters', 'x'.repeat(51)],
    ['a number', 10],
  ])('answers 422 for a plan_price_formatted of %s', async (_what, plan_price_formatted) => {
    await expect422(planBody({ plan_price_formatted }), 'plan_price_formatted must be a non-blank string of at most 50 characters');
  });

  it.each([
    ['a string', 'recurring', 'plan_data must be an object'],
    ['an array', [true], 'plan_data must be an object'],
    ['a non-boolean plan_recurring', { plan_recurring: 'yes' }, 'plan_data.plan_recurring must be true or false'],
    ['a non-boolean plan_one_time', { plan_one_time: 1 }, 'plan_data.plan_one_time must be true or false'],
  ])('answers 422 for plan_data as %s', async (_what, plan_data, message) => {
    await expect422(planBody({ plan_data }), message);
  });

  it.each([
    ['an array', [planBody()]],
    ['a string', 'Gold'],
    ['null', null],
  ])('answers 422 for a body that is %s', async (_what, body) => {
    await expect422(body, /\S/);
  });
});
