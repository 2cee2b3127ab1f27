import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess } from '../support/api.js';
import { createPlan, createTarget, getPlan, getTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planTargetAdd } from '../support/operations.catalogue.js';

const ADDED = 'Target added to plan successfully';

describe(`${planTargetAdd.name}: happy`, () => {
  const h = useHarness();

  async function add(t: Tenant, planId: string, targetId: string) {
    const path = `${t.base}/plans/${planId}/targets/${targetId}`;
    return { res: await t.request({ method: 'POST', url: path }), path };
  }

  it('answers 200 with the plan now granting the target', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const { res, path } = await add(t, plan.plan_id, target.target_id);
    const granted = { ...plan, plan_targets: [{ ...target, plan_count: 1 }] };
    expectSuccess(res, { method: 'POST', path, message: ADDED, data: granted });
    expect(await getPlan(t, plan.plan_id)).toStrictEqual(granted);
    expect(await getTarget(t, target.target_id)).toStrictEqual({ ...target, plan_count: 1 });
  });

  it('writes one plan.updated event with the plan as answered', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const { res } = await add(t, plan.plan_id, target.target_id);
    const events = await eventRows(h, t.projectId);
    expect(events.map((e) => e.type)).toStrictEqual(['plan.created', 'target.added', 'plan.updated']);
    expect(events[2]!.data).toStrictEqual({ plan: res.json().data });
  });

  it('is idempotent: adding the same target again answers the same plan and writes no event', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const first = await add(t, plan.plan_id, target.target_id);
    const events = await eventRows(h, t.projectId);
    const again = await add(t, plan.plan_id, target.target_id);
    expectSuccess(again.res, { method: 'POST', path: again.path, message: ADDED, data: first.res.json().data });
    expect(await eventRows(h, t.projectId)).toStrictEqual(events);
  });

  it('lists several targets in the order they were added', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const targets = [await createTarget(t), await createTarget(t), await createTarget(t)];
    for (const target of [targets[2]!, targets[0]!, targets[1]!]) await add(t, plan.plan_id, target.target_id);
    const ids = (await getPlan(t, plan.plan_id)).plan_targets.map((x) => x.target_id);
    expect(ids).toStrictEqual([targets[2]!.target_id, targets[0]!.target_id, targets[1]!.target_id]);
  });

  it('counts every plan granting a target in its plan_count', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    for (let i = 0; i < 3; i++) await add(t, (await createPlan(t)).plan_id, target.target_id);
    expect((await getTarget(t, target.target_id)).plan_count).toBe(3);
  });

  it('grants a disabled target too', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t, { is_enabled: false })];
    const { res } = await add(t, plan.plan_id, target.target_id);
    expect(res.json().data.plan_targets, res.body).toStrictEqual([{ ...target, plan_count: 1 }]);
  });
});
