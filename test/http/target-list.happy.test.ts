import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { TargetView } from '../../src/domain/targets/target.view.js';
import { createMembership, expectSuccess } from '../support/api.js';
import { createPlan, createTarget, getTarget, grant, spreadCreation } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetList } from '../support/operations.catalogue.js';

const LISTED = 'Targets retrieved successfully';

describe(`${targetList.name}: happy`, () => {
  const h = useHarness();

  /** Creates `n` targets with creation times a minute apart; returns them newest first. */
  async function seed(t: Tenant, n: number): Promise<TargetView[]> {
    const targets: TargetView[] = [];
    for (let i = 0; i < n; i++) targets.push(await createTarget(t, { target_name: `Target ${i}` }));
    await spreadCreation(h, 'targets', targets.map((x) => x.target_id));
    return targets.reverse();
  }

  async function list(t: Tenant, query = '') {
    const path = `${t.base}/targets`;
    return { res: await t.request({ method: 'GET', url: `${path}${query}` }), path };
  }

  it('answers total 0 and an empty list for a project without targets', async () => {
    const t = await h.tenant();
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 0, message: LISTED, data: [] });
  });

  it('lists every target, newest first, with total', async () => {
    const t = await h.tenant();
    const targets = await seed(t, 3);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 3, message: LISTED, data: targets });
  });

  it('pages with limit and offset; total stays the number of targets', async () => {
    const t = await h.tenant();
    const targets = await seed(t, 5);
    for (const [query, data] of [
      ['?limit=2', targets.slice(0, 2)],
      ['?limit=2&offset=2', targets.slice(2, 4)],
      ['?limit=2&offset=4', targets.slice(4)],
      ['?limit=3&offset=9', []],
    ] as const) {
      const { res, path } = await list(t, query);
      expectSuccess(res, { method: 'GET', path, total: 5, message: LISTED, data });
    }
  });

  it('breaks ties of equal creation times by id, so pages neither repeat nor skip', async () => {
    const t = await h.tenant();
    const targets = await seed(t, 4);
    await h.database.db.execute(sql`UPDATE targets SET created_at = now() WHERE project_id = ${t.projectId}`);
    const seen: string[] = [];
    for (let offset = 0; offset < 4; offset++) seen.push((await list(t, `?limit=1&offset=${offset}`)).res.json().data[0].target_id);
    expect(seen).toStrictEqual(targets.map((x) => x.target_id).sort().reverse());
  });

  it('shows the computed counts of each target', async () => {
    const t = await h.tenant();
    const [busy, idle] = await seed(t, 2);
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, busy!.target_id);
    await createMembership(t, { planId: plan.plan_id });
    await createMembership(t, { planId: plan.plan_id });
    const { res, path } = await list(t);
    expectSuccess(res, {
      method: 'GET',
      path,
      total: 2,
      message: LISTED,
      data: [{ ...busy, plan_count: 1, participant_count: 2 }, idle],
    });
    expect(res.json().data[0]).toStrictEqual(await getTarget(t, busy!.target_id));
  });

  it("never shows another project's targets", async () => {
    const t = await h.tenant();
    const mine = await seed(t, 1);
    await createTarget(await h.tenant());
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 1, message: LISTED, data: mine });
  });

  it('returns 20 by default and at most 100', async () => {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO targets (project_id, name, platform, kind, external_id)
      SELECT ${t.projectId}, 'T' || g, 'discord', 'role', g::text FROM generate_series(1, 105) g`);
    const byDefault = await list(t);
    expect(byDefault.res.json().total, byDefault.res.body).toBe(105);
    expect(byDefault.res.json().data).toHaveLength(20);
    const max = await list(t, '?limit=100');
    const rest = await list(t, '?limit=100&offset=100');
    const ids = [...max.res.json().data, ...rest.res.json().data].map((x: TargetView) => x.target_id);
    expect(max.res.json().data).toHaveLength(100);
    expect(new Set(ids).size).toBe(105);
  });
});
