import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { PlanView } from '../../src/domain/plans/plan.view.js';
import { expectSuccess } from '../support/api.js';
import { createPlan, createTarget, getPlan, grant, spreadCreation } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { planList } from '../support/operations.catalogue.js';

const LISTED = 'Plans retrieved successfully';

describe(`${planList.name}: happy`, () => {
  const h = useHarness();

  /** Creates `n` plans with creation times a minute apart; returns them newest first. */
  async function seed(t: Tenant, n: number): Promise<PlanView[]> {
    const plans: PlanView[] = [];
    for (let i = 0; i < n; i++) plans.push(await createPlan(t, { plan_name: `Plan ${i}` }));
    await spreadCreation(h, 'plans', plans.map((p) => p.plan_id));
    return plans.reverse();
  }

  async function list(t: Tenant, query = '') {
    const path = `${t.base}/plans`;
    return { res: await t.request({ method: 'GET', url: `${path}${query}` }), path };
  }

  it('answers total 0 and an empty list for a project without plans', async () => {
    const t = await h.tenant();
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 0, message: LISTED, data: [] });
  });

  it('lists every plan, newest first, with total', async () => {
    const t = await h.tenant();
    const plans = await seed(t, 3);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 3, message: LISTED, data: plans });
  });

  it('pages with limit and offset; total stays the number of plans', async () => {
    const t = await h.tenant();
    const plans = await seed(t, 5);
    for (const [query, data] of [
      ['?limit=2', plans.slice(0, 2)],
      ['?limit=2&offset=2', plans.slice(2, 4)],
      ['?limit=2&offset=4', plans.slice(4)],
      ['?offset=5', []],
    ] as const) {
      const { res, path } = await list(t, query);
      expectSuccess(res, { method: 'GET', path, total: 5, message: LISTED, data });
    }
  });

  it('breaks ties of equal creation times by id, so pages neither repeat nor skip', async () => {
    const t = await h.tenant();
    const plans = await seed(t, 4);
    await h.database.db.execute(sql`UPDATE plans SET created_at = now() WHERE project_id = ${t.projectId}`);
    const seen: string[] = [];
    for (let offset = 0; offset < 4; offset++) {
      const { res } = await list(t, `?limit=1&offset=${offset}`);
      seen.push(res.json().data[0].plan_id);
    }
    expect(seen).toStrictEqual(plans.map((p) => p.plan_id).sort().reverse());
  });

  it('shows each plan with the targets it grants', async () => {
    const t = await h.tenant();
    const [plan] = await seed(t, 1);
    const target = await createTarget(t);
    await grant(t, plan!.plan_id, target.target_id);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 1, message: LISTED, data: [await getPlan(t, plan!.plan_id)] });
    expect(res.json().data[0].plan_targets).toStrictEqual([{ ...target, plan_count: 1 }]);
  });

  it('hides deleted plans from the list and from total', async () => {
    const t = await h.tenant();
    const [newest, middle, oldest] = await seed(t, 3);
    const del = await t.request({ method: 'DELETE', url: `${t.base}/plans/${middle!.plan_id}` });
    expect(del.statusCode, del.body).toBe(204);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 2, message: LISTED, data: [newest, oldest] });
  });

  it("never shows another project's plans", async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const mine = await seed(t, 1);
    await createPlan(other);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 1, message: LISTED, data: mine });
  });

  it('returns 20 by default and at most 100', async () => {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
      SELECT ${t.projectId}, 'P' || g, 1, 'USD', '1 day', '$1.00' FROM generate_series(1, 105) g`);
    const byDefault = await list(t);
    expect(byDefault.res.json().total, byDefault.res.body).toBe(105);
    expect(byDefault.res.json().data).toHaveLength(20);
    const max = await list(t, '?limit=100');
    const rest = await list(t, '?limit=100&offset=100');
    expect(max.res.json().data).toHaveLength(100);
    const ids = [...max.res.json().data, ...rest.res.json().data].map((p: PlanView) => p.plan_id);
    expect(new Set(ids).size).toBe(105);
  });
});
