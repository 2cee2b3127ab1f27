import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess, UUID } from '../support/api.js';
import { getPlan, planBody } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planCreate } from '../support/operations.catalogue.js';

const CREATED = 'Plan created successfully';

describe(`${planCreate.name}: happy`, () => {
  const h = useHarness();

  async function create(t: Tenant, payload: unknown) {
    const path = `${t.base}/plans`;
    const res = await t.request({ method: 'POST', url: path, payload: payload as object });
    return { res, path, plan: res.json().data };
  }

  it('answers 201 with code 201 and the plan; defaults plan_data to recurring false, one-time true', async () => {
    const t = await h.tenant();
    const { res, path, plan } = await create(t, planBody());
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path,
      message: CREATED,
      data: {
        plan_id: expect.stringMatching(UUID),
        plan_name: 'Gold',
        plan_price: '10.00',
        plan_currency: 'USD',
        plan_duration: '1 month',
        plan_price_formatted: '$10.00',
        plan_data: { plan_recurring: false, plan_one_time: true },
        plan_targets: [],
      },
    });
    expect(await getPlan(t, plan.plan_id)).toStrictEqual(plan);
  });

  it('writes one plan.created event carrying the plan the API answered', async () => {
    const t = await h.tenant();
    const { plan } = await create(t, planBody());
    expect(await eventRows(h, t.projectId)).toStrictEqual([{ type: 'plan.created', project_id: t.projectId, data: { plan } }]);
  });

  it('keeps plan_data as sent', async () => {
    const t = await h.tenant();
    const { res, plan } = await create(t, planBody({ plan_data: { plan_recurring: true, plan_one_time: false } }));
    expect(res.statusCode, res.body).toBe(201);
    expect(plan.plan_data).toStrictEqual({ plan_recurring: true, plan_one_time: false });
  });

  it('defaults the one flag left out of plan_data', async () => {
    const t = await h.tenant();
    const { plan } = await create(t, planBody({ plan_data: { plan_recurring: true } }));
    expect(plan.plan_data).toStrictEqual({ plan_recurring: true, plan_one_time: true });
  });

  it.each([
    ['10', '10.00'],
    ['29.9', '29.90'],
    ['29.99', '29.99'],
    ['0', '0.00'],
    ['0.5', '0.50'],
    ['999999999999.99', '999999999999.99'],
  ])('stores plan_price %s as the decimal string %s', async (sent, stored) => {
    const t = await h.tenant();
    const { res, plan } = await create(t, planBody({ plan_price: sent }));
    expect(res.statusCode, res.body).toBe(201);
    expect(plan.plan_price).toBe(stored);
  });

  it.each([
    ['10.00', 'USD', '$10.00'],
    ['29.99', 'EUR', '€29.99'],
    ['1234.5', 'GBP', '£1,234.50'],
    ['1000', 'JPY', '¥1,000'],
  ])('formats %s %s as %s when plan_price_formatted is left out', async (price, currency, formatted) => {
    const t = await h.tenant();
    const body: Record<string, unknown> = planBody({ plan_price: price, plan_currency: currency });
    delete body.plan_price_formatted;
    const { res, plan } = await create(t, body);
    expect(res.statusCode, res.body).toBe(201);
    expect(plan.plan_price_formatted).toBe(formatted);
  });

  it('keeps a plan_price_formatted the client sends', async () => {
    const t = await h.tenant();
    const { plan } = await create(t, planBody({ plan_price: '10.00', plan_price_formatted: 'US$ 10' }));
    expect(plan.plan_price_formatted).toBe('US$ 10');
  });

  it.each(['1 hour', '12 hours', '1 day', '7 days', '1 week', '2 weeks', '1 month', '3 months', '1 year', '9999 years', '1 months'])(
    'accepts the duration %s as written',
    async (duration) => {
      const t = await h.tenant();
      const { res, plan } = await create(t, planBody({ plan_duration: duration }));
      expect(res.statusCode, res.body).toBe(201);
      expect(plan.plan_duration).toBe(duration);
    },
  );

  it('ignores unknown fields', async () => {
    const t = await h.tenant();
    const { res, plan } = await create(t, planBody({ color: 'gold', plan_targets: ['x'] }));
    expect(res.statusCode, res.body).toBe(201);
    expect(plan.plan_targets).toStrictEqual([]);
    expect(plan).not.toHaveProperty('color');
  });

  it('creates plans of the same name side by side, each with its own id', async () => {
    const t = await h.tenant();
    const [a, b] = [await create(t, planBody()), await create(t, planBody())];
    expect(a.plan.plan_id).not.toBe(b.plan.plan_id);
  });
});
