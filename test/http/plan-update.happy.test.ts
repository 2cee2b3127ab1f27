import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess } from '../support/api.js';
import { createPlan, createTarget, getPlan, grant } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planUpdate } from '../support/operations.catalogue.js';

const UPDATED = 'Plan updated successfully';

describe(`${planUpdate.name}: happy`, () => {
  const h = useHarness();

  async function patch(t: Tenant, planId: string, payload: object) {
    const path = `${t.base}/plans/${planId}`;
    return { res: await t.request({ method: 'PATCH', url: path, payload }), path };
  }

  it('changes only the fields sent and answers the whole plan', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res, path } = await patch(t, plan.plan_id, { plan_name: 'Platinum' });
    expectSuccess(res, { method: 'PATCH', path, message: UPDATED, data: { ...plan, plan_name: 'Platinum' } });
    expect(await getPlan(t, plan.plan_id)).toStrictEqual({ ...plan, plan_name: 'Platinum' });
  });

  it('writes one plan.updated event carrying the updated plan', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res } = await patch(t, plan.plan_id, { plan_duration: '1 year' });
    const events = await eventRows(h, t.projectId);
    expect(events.map((e) => e.type)).toStrictEqual(['plan.created', 'plan.updated']);
    expect(events[1]!.data).toStrictEqual({ plan: res.json().data });
  });

  it('re-formats plan_price_formatted when the price changes and no new one is sent', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res } = await patch(t, plan.plan_id, { plan_price: '12.5' });
    expect(res.json().data, res.body).toMatchObject({ plan_price: '12.50', plan_price_formatted: '$12.50' });
  });

  it('re-formats plan_price_formatted when the currency changes', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res } = await patch(t, plan.plan_id, { plan_currency: 'EUR' });
    expect(res.json().data, res.body).toMatchObject({ plan_price: '10.00', plan_currency: 'EUR', plan_price_formatted: '€10.00' });
  });

  it('keeps a plan_price_formatted sent with the new price', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res } = await patch(t, plan.plan_id, { plan_price: '15', plan_price_formatted: '15 dollars' });
    expect(res.json().data, res.body).toMatchObject({ plan_price: '15.00', plan_price_formatted: '15 dollars' });
  });

  it('keeps plan_price_formatted when neither price nor currency changes', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_price_formatted: 'ten bucks' });
    const { res } = await patch(t, plan.plan_id, { plan_name: 'Renamed' });
    expect(res.json().data.plan_price_formatted, res.body).toBe('ten bucks');
  });

  it('merges plan_data: a flag left out keeps its value', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res } = await patch(t, plan.plan_id, { plan_data: { plan_recurring: true } });
    expect(res.json().data.plan_data, res.body).toStrictEqual({ plan_recurring: true, plan_one_time: true });
    const again = await patch(t, plan.plan_id, { plan_data: { plan_one_time: false } });
    expect(again.res.json().data.plan_data, again.res.body).toStrictEqual({ plan_recurring: true, plan_one_time: false });
  });

  it('changes every field at once', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const body = {
      plan_name: 'Yearly',
      plan_price: '99.99',
      plan_currency: 'GBP',
      plan_duration: '1 year',
      plan_price_formatted: '£99.99/yr',
      plan_data: { plan_recurring: true, plan_one_time: false },
    };
    const { res, path } = await patch(t, plan.plan_id, body);
    expectSuccess(res, { method: 'PATCH', path, message: UPDATED, data: { ...plan, ...body } });
  });

  it('keeps the targets the plan grants', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const target = await createTarget(t);
    const granted = await grant(t, plan.plan_id, target.target_id);
    const { res } = await patch(t, plan.plan_id, { plan_name: 'Renamed' });
    expect(res.json().data, res.body).toStrictEqual({ ...granted, plan_name: 'Renamed' });
  });

  it('renames the plan on its memberships too (they show the current plan_name)', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const created = await t.request({
      method: 'POST',
      url: `${t.base}/memberships`,
      payload: { user_id: '123456789', end_date: new Date(Date.now() + 86_400_000).toISOString(), plan_id: plan.plan_id },
    });
    expect(created.statusCode, created.body).toBe(201);
    await patch(t, plan.plan_id, { plan_name: 'Renamed', plan_duration: '2 months' });
    const got = await t.request({ method: 'GET', url: `${t.base}/memberships/${created.json().data.membership_id}` });
    expect(got.json().data, got.body).toMatchObject({ plan_id: plan.plan_id, plan_name: 'Renamed', plan_duration: '2 months' });
  });

  it('ignores unknown fields next to a known one', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const { res, path } = await patch(t, plan.plan_id, { plan_name: 'X', plan_id: 'forged', color: 'red' });
    expectSuccess(res, { method: 'PATCH', path, message: UPDATED, data: { ...plan, plan_name: 'X' } });
  });
});
