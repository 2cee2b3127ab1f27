import { describe, expect, it } from 'vitest';
import { eventRows } from '../support/api.js';
import { createPlan, createTarget, getPlan, getTarget, grant } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';
import { planTargetRemove } from '../support/operations.catalogue.js';

describe(`${planTargetRemove.name}: happy`, () => {
  const h = useHarness();

  it('answers 204 without a body; the plan no longer grants the target, the others stay', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const [a, b] = [await createTarget(t), await createTarget(t)];
    await grant(t, plan.plan_id, a.target_id);
    await grant(t, plan.plan_id, b.target_id);
    const res = await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}/targets/${a.target_id}` });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect(await getPlan(t, plan.plan_id)).toStrictEqual({ ...plan, plan_targets: [{ ...b, plan_count: 1 }] });
    expect(await getTarget(t, a.target_id)).toStrictEqual(a);
  });

  it('writes one plan.updated event with the plan without the target', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}` });
    const events = await eventRows(h, t.projectId);
    expect(events.at(-1)).toStrictEqual({ type: 'plan.updated', project_id: t.projectId, data: { plan } });
    expect(events.map((e) => e.type)).toStrictEqual(['plan.created', 'target.added', 'plan.updated', 'plan.updated']);
  });

  it('can grant the target again afterwards', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    await t.request({ method: 'DELETE', url: `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}` });
    const again = await grant(t, plan.plan_id, target.target_id);
    expect(again.plan_targets.map((x) => x.target_id)).toStrictEqual([target.target_id]);
  });
});
