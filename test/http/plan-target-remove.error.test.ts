import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planTargetRemove } from '../support/operations.catalogue.js';

type Ids = (t: Tenant, plan: string, target: string) => Promise<[string, string]>;

describe(`${planTargetRemove.name}: errors`, () => {
  const h = useHarness();

  /** Deletes the link for ids chosen by `ids` from a plan granting a target; nothing may change. */
  async function refused(ids: Ids, want: { status: number; code: string; message: unknown }) {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    const [planId, targetId] = await ids(t, plan.plan_id, target.target_id);
    const path = `${t.base}/plans/${planId}/targets/${targetId}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { ...want, method: 'DELETE', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  it('answers 404 naming the target when the plan does not grant it', async () => {
    await refused(async (t, plan) => [plan, (await createTarget(t)).target_id], {
      status: 404,
      code: 'NOT_FOUND',
      message: expect.stringMatching(/^Target [0-9a-f-]{36} is not granted by this plan$/),
    });
  });

  it('answers 404 to a second removal of the same link', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    const path = `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}`;
    expect((await t.request({ method: 'DELETE', url: path })).statusCode).toBe(204);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, {
      status: 404,
      code: 'NOT_FOUND',
      method: 'DELETE',
      path,
      message: `Target ${target.target_id} is not granted by this plan`,
    });
  });

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
  ])('answers 404 "Plan not found" for %s', async (_what, ids) => {
    await refused(ids, { status: 404, code: 'NOT_FOUND', message: 'Plan not found' });
  });

  it.each<[string, Ids]>([
    ['an unknown target', async (_t, plan) => [plan, randomUUID()]],
    ["another project's target", async (_t, plan) => [plan, (await createTarget(await h.tenant())).target_id]],
  ])('answers 404 "Target not found" for %s', async (_what, ids) => {
    await refused(ids, { status: 404, code: 'NOT_FOUND', message: 'Target not found' });
  });

  it('answers 422 for ids that are not UUIDs', async () => {
    await refused(async (_t, plan) => [plan, 'vip'], { status: 422, code: 'VALIDATION_ERROR', message: 'target_id must be a UUID' });
  });
});
