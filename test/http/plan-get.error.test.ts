import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planGet } from '../support/operations.catalogue.js';

describe(`${planGet.name}: errors`, () => {
  const h = useHarness();

  async function get(t: Tenant, planId: string) {
    const path = `${t.base}/plans/${planId}`;
    return { res: await t.request({ method: 'GET', url: path }), path };
  }

  it('answers 404 "Plan not found" for an id no plan has', async () => {
    const t = await h.tenant();
    const { res, path } = await get(t, randomUUID());
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Plan not found' });
  });

  it("answers 404 for another project's plan", async () => {
    const t = await h.tenant();
    const theirs = await createPlan(await h.tenant());
    const { res, path } = await get(t, theirs.plan_id);
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Plan not found' });
  });

  it('answers 404 for a deleted plan', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}` });
    const { res, path } = await get(t, plan.plan_id);
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Plan not found' });
  });

  it.each(['gold', '123', `${randomUUID()}0`])('answers 422 for the plan id %s, not a UUID', async (id) => {
    const t = await h.tenant();
    const { res, path } = await get(t, id);
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'plan_id must be a UUID' });
  });
});
