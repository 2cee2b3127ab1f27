import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { accessProject, listAccess } from '../support/access-api.js';
import { createMembership, expectSuccess, ISO_MS } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { accessList } from '../support/operations.access.js';

describe(`${accessList.name}: happy`, () => {
  const h = useHarness();

  it('answers 200 with total and the rows {user_id, target_id, platform, desired, state, last_error, attempts, synced_at}', async () => {
    const t = await h.tenant();
    const { role, users } = await accessProject(h, t, 1);
    const path = `${t.base}/access`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, {
      method: 'GET',
      path,
      total: 1,
      message: 'Access retrieved successfully',
      data: [
        {
          user_id: users[0],
          target_id: role.target_id,
          platform: 'discord',
          desired: 'granted',
          state: 'pending',
          last_error: null,
          attempts: 0,
          synced_at: null,
        },
      ],
    });
  });

  it('shows a failed row’s error and a synced row’s synced_at as the API shows instants', async () => {
    const t = await h.tenant();
    const { users } = await accessProject(h, t, 2);
    const error = { code: '50013', message: 'Missing Permissions' };
    await h.database.db.execute(sql`
      UPDATE access SET state = 'failed', attempts = 1, last_error = ${JSON.stringify(error)}::jsonb
      WHERE project_id = ${t.projectId} AND user_id = ${users[0]}`);
    await h.database.db.execute(sql`
      UPDATE access SET state = 'synced', applied = 'granted', attempts = 1, synced_at = now()
      WHERE project_id = ${t.projectId} AND user_id = ${users[1]}`);
    const { data } = await listAccess(t);
    const byUser = new Map(data.map((r) => [r.user_id, r]));
    expect(byUser.get(users[0]!)).toMatchObject({ state: 'failed', attempts: 1, last_error: error, synced_at: null });
    expect(byUser.get(users[1]!)).toMatchObject({ state: 'synced', attempts: 1, last_error: null, synced_at: expect.stringMatching(ISO_MS) });
  });

  it('filters by user_id, target_id and state, alone or together; total counts the matches', async () => {
    const t = await h.tenant();
    const { guild, plan, users } = await accessProject(h, t, 3);
    // The plan grants the guild too: every member gets a second row.
    await t.request({ method: 'POST', url: `${t.base}/plans/${plan.plan_id}/targets/${guild.target_id}` });
    await h.container.stores.accessPlan.planProject(t.projectId);
    await h.database.db.execute(sql`UPDATE access SET state = 'synced', applied = 'granted' WHERE project_id = ${t.projectId} AND user_id = ${users[0]}`);

    expect((await listAccess(t)).total).toBe(6);
    const mine = await listAccess(t, `?user_id=${users[1]}`);
    expect(mine.total).toBe(2);
    expect(new Set(mine.data.map((r) => r.user_id))).toStrictEqual(new Set([users[1]]));
    const onGuild = await listAccess(t, `?target_id=${guild.target_id}`);
    expect(onGuild.total).toBe(3);
    expect(new Set(onGuild.data.map((r) => r.target_id))).toStrictEqual(new Set([guild.target_id]));
    expect((await listAccess(t, '?state=synced')).data.map((r) => r.user_id)).toStrictEqual([users[0], users[0]]);
    expect((await listAccess(t, '?state=pending')).total).toBe(4);
    const both = await listAccess(t, `?user_id=${users[0]}&target_id=${guild.target_id}&state=synced`);
    expect(both.data).toMatchObject([{ user_id: users[0], target_id: guild.target_id, state: 'synced' }]);
    expect((await listAccess(t, `?user_id=${users[0]}&state=failed`)).total).toBe(0);
  });

  it('lists only the project’s own rows: a member of another project with the same user id is not shown', async () => {
    const [a, b] = [await h.tenant(), await h.tenant()];
    const { users } = await accessProject(h, a, 1);
    const other = await accessProject(h, b, 0);
    await createMembership(b, { userId: users[0], planId: other.plan.plan_id });
    await h.container.stores.accessPlan.planProject(b.projectId);
    const listed = await listAccess(a, `?user_id=${users[0]}`);
    expect(listed.total).toBe(1);
    expect(listed.data[0]!.target_id).not.toBe(other.role.target_id);
    expect((await listAccess(b)).data.map((r) => r.target_id)).toStrictEqual([other.role.target_id]);
  });

  it('answers an empty list for a project with no bot connected (no rows are planned without one)', async () => {
    const t = await h.tenant();
    const plan = (await accessProject(h, t, 0)).plan;
    await h.database.db.execute(sql`DELETE FROM integrations WHERE project_id = ${t.projectId}`);
    await createMembership(t, { planId: plan.plan_id });
    await h.container.stores.accessPlan.planProject(t.projectId);
    expect(await listAccess(t)).toMatchObject({ total: 0, data: [] });
  });
});
