import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess } from '../support/api.js';
import { createPlan, createTarget, getPlan, getTarget, grant } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetUpdate } from '../support/operations.catalogue.js';

describe(`${targetUpdate.name}: happy`, () => {
  const h = useHarness();

  async function patch(t: Tenant, targetId: string, payload: object) {
    const path = `${t.base}/targets/${targetId}`;
    return { res: await t.request({ method: 'PATCH', url: path, payload }), path };
  }

  it.each([
    ['disables', { is_enabled: false }],
    ['renames', { target_name: 'Renamed' }],
    ['renames and disables', { target_name: 'Both', is_enabled: false }],
  ])('%s: total 1, "Successfully updated 1 target(s)", data the target', async (_what, body) => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const { res, path } = await patch(t, target.target_id, body);
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: 'Successfully updated 1 target(s)', data: { ...target, ...body } });
    expect(await getTarget(t, target.target_id)).toStrictEqual({ ...target, ...body });
  });

  it('enables a disabled target again', async () => {
    const t = await h.tenant();
    const target = await createTarget(t, { is_enabled: false });
    const { res } = await patch(t, target.target_id, { is_enabled: true });
    expect(res.json().data, res.body).toStrictEqual({ ...target, is_enabled: true });
  });

  it('writes one target.updated event carrying the updated target', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const { res } = await patch(t, target.target_id, { target_name: 'New' });
    const events = await eventRows(h, t.projectId);
    expect(events.map((e) => e.type)).toStrictEqual(['target.added', 'target.updated']);
    expect(events[1]!.data).toStrictEqual({ target: res.json().data });
  });

  it('keeps its computed counts and shows the new name in the plans granting it', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    const { res } = await patch(t, target.target_id, { target_name: 'New' });
    expect(res.json().data, res.body).toMatchObject({ plan_count: 1, target_name: 'New' });
    expect((await getPlan(t, plan.plan_id)).plan_targets).toStrictEqual([res.json().data]);
  });

  it('ignores unknown fields next to a known one (platform and external_id cannot change)', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const { res } = await patch(t, target.target_id, { is_enabled: false, platform: 'telegram', external_id: '1' });
    expect(res.json().data, res.body).toStrictEqual({ ...target, is_enabled: false });
  });
});
