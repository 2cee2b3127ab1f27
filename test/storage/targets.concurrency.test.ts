import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { eventRows } from '../support/api.js';
import { createPlan, createTarget, getPlan, getTarget, targetBody } from '../support/catalogue.js';
import { useHarness } from '../support/harness.js';

/**
 * Plans and targets under concurrent requests (on PostgreSQL these really interleave): the locks
 * taken by the stores keep each outcome one of the serial ones, and no request fails with a 500.
 */
describe('plans and targets: concurrent requests', () => {
  const h = useHarness();

  const count = async (query: ReturnType<typeof sql>) => rowsOf<{ n: number }>(await h.database.db.execute(query))[0]!.n;

  it('granting the same target 8 times at once links it once and writes one plan.updated', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const url = `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}`;
    const replies = await Promise.all(Array.from({ length: 8 }, () => t.request({ method: 'POST', url })));
    for (const res of replies) expect(res.statusCode, res.body).toBe(200);
    const granted = await getPlan(t, plan.plan_id);
    for (const res of replies) expect(res.json().data).toStrictEqual(granted);
    expect(await count(sql`SELECT count(*)::int AS n FROM plan_targets WHERE plan_id = ${plan.plan_id}`)).toBe(1);
    expect((await eventRows(h, t.projectId)).filter((e) => e.type === 'plan.updated')).toHaveLength(1);
  });

  it('registering the same external id 6 times at once creates one target; the rest get 409', async () => {
    const t = await h.tenant();
    const body = targetBody();
    const replies = await Promise.all(Array.from({ length: 6 }, () => t.request({ method: 'POST', url: `${t.base}/targets`, payload: body })));
    expect(replies.map((r) => r.statusCode).sort()).toStrictEqual([201, 409, 409, 409, 409, 409]);
    expect(await count(sql`SELECT count(*)::int AS n FROM targets WHERE project_id = ${t.projectId}`)).toBe(1);
    expect((await eventRows(h, t.projectId)).map((e) => e.type)).toStrictEqual(['target.added']);
  });

  it('a batch update racing the deletion of one of its targets is all or nothing', async () => {
    const t = await h.tenant();
    const [a, b] = [await createTarget(t), await createTarget(t)];
    const [batch, del] = await Promise.all([
      t.request({
        method: 'PATCH',
        url: `${t.base}/targets`,
        payload: [
          { target_id: a.target_id, target_name: 'A2' },
          { target_id: b.target_id, target_name: 'B2' },
        ],
      }),
      t.request({ method: 'DELETE', url: `${t.base}/targets/${b.target_id}` }),
    ]);
    expect(del.statusCode, del.body).toBe(204);
    expect([200, 404], batch.body).toContain(batch.statusCode);
    // Either the batch ran first (a renamed) or it found b gone and changed nothing.
    expect((await getTarget(t, a.target_id)).target_name).toBe(batch.statusCode === 200 ? 'A2' : a.target_name);
  });

  it('granting a target while it is deleted leaves no link behind', async () => {
    const t = await h.tenant();
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    const [grant, del] = await Promise.all([
      t.request({ method: 'POST', url: `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}` }),
      t.request({ method: 'DELETE', url: `${t.base}/targets/${target.target_id}` }),
    ]);
    expect(del.statusCode, del.body).toBe(204);
    expect([200, 404], grant.body).toContain(grant.statusCode);
    expect((await getPlan(t, plan.plan_id)).plan_targets).toStrictEqual([]);
  });

  it('a child registered while its parent is deleted: never both', async () => {
    const t = await h.tenant();
    const guild = await createTarget(t, { kind: 'guild' });
    const [child, del] = await Promise.all([
      t.request({ method: 'POST', url: `${t.base}/targets`, payload: targetBody({ parent_target_id: guild.target_id }) }),
      t.request({ method: 'DELETE', url: `${t.base}/targets/${guild.target_id}` }),
    ]);
    const outcome = [child.statusCode, del.statusCode];
    expect([[201, 409], [404, 204]], `${child.body} ${del.body}`).toContainEqual(outcome);
    const orphans = await count(sql`
      SELECT count(*)::int AS n FROM targets c WHERE c.project_id = ${t.projectId} AND c.parent_target_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM targets p WHERE p.id = c.parent_target_id)`);
    expect(orphans).toBe(0);
  });
});
