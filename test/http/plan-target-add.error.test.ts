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

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['a telegram target to a plan granting a discord role', {}, { platform: 'telegram', kind: 'group', external_id: '-1001' }],
    ['a discord role to a plan granting a telegram channel', { platform: 'telegram', kind: 'channel', external_id: '@tenure_vip' }, {}],
  ])('answers 422 naming the one-platform rule for %s, and links nothing', async (_what, granted, adding) => {
    const mixed = (a: string, b: string) =>
      `A plan grants targets of one platform only (a member's user_id is their id on that platform): ` +
      `this plan grants ${a} targets, so a ${b} target cannot be added; make a separate plan for ${b}`;
    await refused(
      async (t, plan) => {
        const first = await createTarget(t, granted);
        const linked = await t.request({ method: 'POST', url: `${t.base}/plans/${plan}/targets/${first.target_id}` });
        expect(linked.statusCode, linked.body).toBe(200);
        return [plan, (await createTarget(t, adding)).target_id];
      },
      {
        status: 422,
        code: 'VALIDATION_ERROR',
        message: granted.platform === 'telegram' ? mixed('telegram', 'discord') : mixed('discord', 'telegram'),
      },
    );
  });
});
