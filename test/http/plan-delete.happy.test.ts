import { describe, expect, it } from 'vitest';
import { createMembership, eventRows, expectError, membershipRows } from '../support/api.js';
import { createPlan, createTarget, getTarget, grant, planDeletedAt } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planDelete } from '../support/operations.catalogue.js';

describe(`${planDelete.name}: happy`, () => {
  const h = useHarness();

  const del = (t: Tenant, planId: string) => t.request({ method: 'DELETE', url: `${t.base}/plans/${planId}` });

  it('answers 204 without a body and hides the plan from get and list', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const res = await del(t, plan.plan_id);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    const path = `${t.base}/plans/${plan.plan_id}`;
    expectError(await t.request({ method: 'GET', url: path }), { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Plan not found' });
    const list = await t.request({ method: 'GET', url: `${t.base}/plans` });
    expect(list.json(), list.body).toMatchObject({ total: 0, data: [] });
  });

  it('keeps the row (soft delete) and writes one plan.deleted event with the plan as it was', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    await createPlan(t);
    const plan = await grant(t, (await createPlan(t)).plan_id, target.target_id);
    await del(t, plan.plan_id);
    expect(await planDeletedAt(h, plan.plan_id)).not.toBeNull();
    const events = await eventRows(h, t.projectId);
    expect(events.at(-1)).toStrictEqual({ type: 'plan.deleted', project_id: t.projectId, data: { plan } });
    expect(events.filter((e) => e.type === 'plan.deleted')).toHaveLength(1);
  });

  it('lets members keep their access and their plan_name and plan_duration until their end date', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t, { plan_name: 'Legacy', plan_duration: '6 months' });
    const member = await createMembership(t, { planId: plan.plan_id });
    await del(t, plan.plan_id);
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${member.membership_id}` });
    expect(res.json().data, res.body).toStrictEqual(member);
    expect(member).toMatchObject({ plan_id: plan.plan_id, plan_name: 'Legacy', plan_duration: '6 months', status: 'active' });
    expect((await membershipRows(h, t.projectId)).map((m) => m.status)).toStrictEqual(['active']);
  });

  it('refuses new memberships on the deleted plan (404)', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    await del(t, plan.plan_id);
    const path = `${t.base}/memberships`;
    const res = await t.request({
      method: 'POST',
      url: path,
      payload: { user_id: '42', end_date: new Date(Date.now() + 86_400_000).toISOString(), plan_id: plan.plan_id },
    });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Plan not found' });
  });

  it("drops out of its targets' plan_count; its active members still count as participants", async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, target.target_id);
    await createMembership(t, { planId: plan.plan_id });
    expect(await getTarget(t, target.target_id)).toMatchObject({ plan_count: 1, participant_count: 1 });
    await del(t, plan.plan_id);
    expect(await getTarget(t, target.target_id)).toMatchObject({ plan_count: 0, participant_count: 1 });
  });
});
