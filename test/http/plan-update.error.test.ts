import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planUpdate } from '../support/operations.catalogue.js';

const NOTHING = 'Provide at least one of plan_name, plan_price, plan_currency, plan_duration, plan_price_formatted, plan_data, trial_days, reminder_offsets';

describe(`${planUpdate.name}: errors`, () => {
  const h = useHarness();

  /** PATCHes a plan of a fresh project (or `planId`); checks the answer and that nothing changed. */
  async function refused(
    payload: unknown,
    want: { status: number; code: string; message: string | RegExp },
    planId?: (t: Tenant) => Promise<string>,
  ) {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const id = planId ? await planId(t) : plan.plan_id;
    const path = `${t.base}/plans/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PATCH', url: path, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
    expectError(res, {
      status: want.status,
      code: want.code,
      method: 'PATCH',
      path,
      message: typeof want.message === 'string' ? want.message : expect.stringMatching(want.message),
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const invalid = (message: string | RegExp) => ({ status: 422, code: 'VALIDATION_ERROR', message });

  it.each([
    ['an empty object', {}],
    ['only unknown fields', { color: 'red' }],
    ['an empty plan_data', { plan_data: {} }],
  ])('answers 422 for %s: nothing to change', async (_what, body) => {
    await refused(body, invalid(NOTHING));
  });

  it.each([
    ['plan_price', '-5', /^plan_price must be/],
    ['plan_price', 5, /^plan_price must be/],
    ['plan_currency', 'eur', /^plan_currency must be/],
    ['plan_duration', '1 decade', /^plan_duration must read/],
    ['plan_name', '', /^plan_name must be/],
    ['plan_name', null, /^plan_name must be/],
    ['plan_price_formatted', '', /^plan_price_formatted must be/],
    ['plan_data', { plan_recurring: 'true' }, 'plan_data.plan_recurring must be true or false'],
  ])('answers 422 for %s = %j', async (field, value, message) => {
    await refused({ [field]: value }, invalid(message));
  });

  it('answers 422 for a currency that is not ISO 4217, even next to valid fields', async () => {
    await refused({ plan_name: 'Fine', plan_currency: 'QQQ' }, invalid('plan_currency QQQ is not an ISO 4217 currency code'));
  });

  it('validates before looking the plan up (422 for an unknown plan with a bad body)', async () => {
    await refused({ plan_price: 'x' }, invalid(/^plan_price must be/), async () => randomUUID());
  });

  it.each([
    ['an id no plan has', async () => randomUUID()],
    ["another project's plan", async () => (await createPlan(await h.tenant())).plan_id],
    [
      'a deleted plan',
      async (t: Tenant) => {
        const plan = await createPlan(t);
        await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}` });
        return plan.plan_id;
      },
    ],
  ])('answers 404 "Plan not found" for %s', async (_what, planId) => {
    await refused({ plan_name: 'X' }, { status: 404, code: 'NOT_FOUND', message: 'Plan not found' }, planId);
  });

  it('answers 422 for a plan id that is not a UUID', async () => {
    await refused({ plan_name: 'X' }, invalid('plan_id must be a UUID'), async () => 'gold');
  });
});
