import { describe, expect, it } from 'vitest';
import { expectRefusal, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';

/**
 * tenure's additions to the plan (docs/plans-targets.md, "Value rules"): `plan_currency` left out
 * takes the project's `default_currency` setting, and a plan's own `reminder_offsets`, checked as
 * the setting is.
 */

describe('plans: default currency and reminder_offsets', () => {
  const h = useHarness();

  it('a plan created without plan_currency takes default_currency (USD until set); a PATCH keeps its currency', async () => {
    const t = await h.tenant();
    const base = { plan_name: 'Gold', plan_price: '9.5', plan_duration: '1 month' };
    const usd = await t.request({ method: 'POST', url: `${t.base}/plans`, payload: base });
    expect(usd.statusCode, usd.body).toBe(201);
    expect(usd.json().data).toMatchObject({ plan_currency: 'USD', plan_price_formatted: '$9.50' });
    const set = await t.request({ method: 'PATCH', url: `${t.base}/settings`, payload: { default_currency: 'EUR' } });
    expect(set.statusCode, set.body).toBe(204);
    const eur = await t.request({ method: 'POST', url: `${t.base}/plans`, payload: base });
    expect(eur.json().data).toMatchObject({ plan_currency: 'EUR', plan_price_formatted: '€9.50' });
    // A currency sent wins; the default is for creation only.
    expect(await createPlan(t, { plan_currency: 'GBP' })).toMatchObject({ plan_currency: 'GBP' });
    const patched = await t.request({ method: 'PATCH', url: `${t.base}/plans/${usd.json().data.plan_id}`, payload: { plan_name: 'Gold 2' } });
    expect(patched.json().data.plan_currency).toBe('USD');
  });

  it('reminder_offsets on a plan are stored as the setting stores them, shown only when set, cleared by null', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { reminder_offsets: ['1d', '7d', '24h'] });
    expect(plan.reminder_offsets).toStrictEqual(['7d', '1d']);
    const none = await t.request({ method: 'PATCH', url: `${t.base}/plans/${plan.plan_id}`, payload: { reminder_offsets: [] } });
    expect(none.json().data.reminder_offsets).toStrictEqual([]);
    const cleared = await t.request({ method: 'PATCH', url: `${t.base}/plans/${plan.plan_id}`, payload: { reminder_offsets: null } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect('reminder_offsets' in cleared.json().data).toBe(false);
  });

  it('bad reminder_offsets are a 422 naming the field, on create and update, and nothing changes', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const before = await projectState(h, t.projectId);
    for (const offsets of [['2w'], ['0d'], ['91d'], [3], 'daily', Array.from({ length: 11 }, (_, i) => `${i + 1}d`)]) {
      const created = await t.request({ method: 'POST', url: `${t.base}/plans`, payload: { plan_name: 'A', plan_price: '1', plan_currency: 'USD', plan_duration: '1 day', reminder_offsets: offsets } });
      expectRefusal(created, /reminder_offsets must be/);
      const patched = await t.request({ method: 'PATCH', url: `${t.base}/plans/${plan.plan_id}`, payload: { reminder_offsets: offsets } });
      expectRefusal(patched, /reminder_offsets must be/);
    }
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});
