import { describe, expect, it } from 'vitest';
import { createMembership, eventRows, expectError } from '../support/api.js';
import { createPlan, createTarget, getPlan, grant } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetDelete } from '../support/operations.catalogue.js';

describe(`${targetDelete.name}: happy`, () => {
  const h = useHarness();

  const del = (t: Tenant, targetId: string) => t.request({ method: 'DELETE', url: `${t.base}/targets/${targetId}` });

  it('answers 204 without a body; the target is gone from get and list', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const res = await del(t, target.target_id);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    const path = `${t.base}/targets/${target.target_id}`;
    expectError(await t.request({ method: 'GET', url: path }), { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Target not found' });
    const list = await t.request({ method: 'GET', url: `${t.base}/targets` });
    expect(list.json(), list.body).toMatchObject({ total: 0, data: [] });
  });

  it('writes one target.removed event with the target as it was', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    await del(t, target.target_id);
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      { type: 'target.added', project_id: t.projectId, data: { target } },
      { type: 'target.removed', project_id: t.projectId, data: { target } },
    ]);
  });

  it('removes it from the plans granting it, with a plan.updated event for each plan not deleted', async () => {
    const t = await h.tenant();
    const [target, kept] = [await createTarget(t), await createTarget(t)];
    const [a, b, gone] = [await createPlan(t), await createPlan(t), await createPlan(t)];
    for (const plan of [a, b, gone]) await grant(t, plan.plan_id, target.target_id);
    await grant(t, a.plan_id, kept.target_id);
    await t.request({ method: 'DELETE', url: `${t.base}/plans/${gone.plan_id}` });
    const before = (await eventRows(h, t.projectId)).length;
    await del(t, target.target_id);

    const planA = await getPlan(t, a.plan_id);
    expect(planA.plan_targets.map((x) => x.target_id)).toStrictEqual([kept.target_id]);
    expect((await getPlan(t, b.plan_id)).plan_targets).toStrictEqual([]);
    const events = (await eventRows(h, t.projectId)).slice(before);
    expect(events.map((e) => e.type)).toStrictEqual(['target.removed', 'plan.updated', 'plan.updated']);
    expect(events.slice(1).map((e) => e.data)).toStrictEqual([{ plan: planA }, { plan: await getPlan(t, b.plan_id) }]);
  });

  it('keeps memberships on plans that granted it', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    const member = await createMembership(t, { planId: plan.plan_id });
    await del(t, target.target_id);
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${member.membership_id}` });
    expect(res.json().data, res.body).toStrictEqual(member);
  });

  it('deletes a parent once its children are gone, and the same external id can be registered again', async () => {
    const t = await h.tenant();
    const guild = await createTarget(t, { kind: 'guild' });
    const role = await createTarget(t, { parent_target_id: guild.target_id });
    expect((await del(t, role.target_id)).statusCode).toBe(204);
    expect((await del(t, guild.target_id)).statusCode).toBe(204);
    const again = await createTarget(t, { kind: 'guild', external_id: guild.external_id });
    expect(again.target_id).not.toBe(guild.target_id);
  });
});
