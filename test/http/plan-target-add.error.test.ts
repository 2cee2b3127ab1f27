import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createPlan, createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planTargetAdd } from '../support/operations.catalogue.js';

type Ids = (t: Tenant, plan: string, target: string) => Promise<[string, string]>;

describe(`${planTargetAdd.name}: errors`, () => {
  const h = useHarness();

  /** Posts the link for ids chosen by `ids` from a fresh plan and target; nothing may change. */
  async function refused(ids: Ids, want: { status: number; code: string; message: string }) {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const [planId, targetId] = await ids(t, plan.plan_id, target.target_id);
    const path = `${t.base}/plans/${planId}/targets/${targetId}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: path });
    expectError(res, { ...want, method: 'POST', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const plan404 = { status: 404, code: 'NOT_FOUND', message: 'Plan not found' };
  const target404 = { status: 404, code: 'NOT_FOUND', message: 'Target not found' };

  it.each<[string, Ids]>([
    ['an unknown plan', async (_t, _p, target) => [randomUUID(), target]],
    ["another project's plan", async (_t, _p, target) => [(await createPlan(await h.tenant())).plan_id, target]],
    [
      'a deleted plan',
      async (t, plan, target) => {
        await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan}` });
        return [plan, target];
      },
    ],
    ['an unknown plan and an unknown target (the plan is named first)', async () => [randomUUID(), randomUUID()]],
  ])('answers 404 "Plan not found" for %s', async (_what, ids) => {
    await refused(ids, plan404);
  });

  it.each<[string, Ids]>([
    ['an unknown target', async (_t, plan) => [plan, randomUUID()]],
    ["another project's target", async (_t, plan) => [plan, (await createTarget(await h.tenant())).target_id]],
    [
      'a deleted target',
      async (t, plan, target) => {
        await t.request({ method: 'DELETE', url: `${t.base}/targets/${target}` });
        return [plan, target];
      },
    ],
  ])('answers 404 "Target not found" for %s', async (_what, ids) => {
    await refused(ids, target404);
  });

  it.each<[string, Ids, string]>([
    ['plan id', async (_t, _p, target) => ['gold', target], 'plan_id must be a UUID'],
    ['target id', async (_t, plan) => [plan, 'vip'], 'target_id must be a UUID'],
  ])('answers 422 for a %s that is not a UUID', async (_what, ids, message) => {
    await refused(ids, { status: 422, code: 'VALIDATION_ERROR', message });
  });
});
