import { describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';
import { planGet } from '../support/operations.catalogue.js';

const RETRIEVED = 'Plan retrieved successfully';

describe(`${planGet.name}: happy`, () => {
  const h = useHarness();

  it('answers the plan as created', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_name: 'Silver', plan_price: '4.5', plan_currency: 'EUR', plan_duration: '2 weeks' });
    const path = `${t.base}/plans/${plan.plan_id}`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: plan });
    expect(res.json().data.plan_price).toBe('4.50');
  });

  it('answers the plan with the targets it grants, in the order they were added', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const [b, a] = [await createTarget(t, { target_name: 'B' }), await createTarget(t, { target_name: 'A' })];
    await grant(t, plan.plan_id, b.target_id);
    await grant(t, plan.plan_id, a.target_id);
    const path = `${t.base}/plans/${plan.plan_id}`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, {
      method: 'GET',
      path,
      message: RETRIEVED,
      data: { ...plan, plan_targets: [{ ...b, plan_count: 1 }, { ...a, plan_count: 1 }] },
    });
  });

  it('accepts the plan id in upper case', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const path = `${t.base}/plans/${plan.plan_id.toUpperCase()}`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: plan });
  });
});
