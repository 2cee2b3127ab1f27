import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { accessProject, listAccess } from '../support/access-api.js';
import { createMembership, expectSuccess } from '../support/api.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';
import { accessResync } from '../support/operations.access.js';

const reconciledAt = async (h: Harness, t: Tenant) =>
  rowsOf<{ reconciled_at: string | null }>(
    await h.database.db.execute(sql`SELECT reconciled_at::text FROM integrations WHERE project_id = ${t.projectId}`),
  ).map((r) => r.reconciled_at);

describe(`${accessResync.name}: happy`, () => {
  const h = useHarness();
  const resync = (t: Tenant, payload?: object) =>
    t.request({ method: 'POST', url: `${t.base}/access/resync`, ...(payload === undefined ? {} : { payload }) });

  it('the whole project (no body): re-plans what is not planned yet and moves the reconciliation to now', async () => {
    const t = await h.tenant();
    const { plan } = await accessProject(h, t, 1);
    await h.database.db.execute(sql`UPDATE integrations SET reconciled_at = now() WHERE project_id = ${t.projectId}`);
    // Two members the planner has not seen yet (the worker runtime is not running here).
    await createMembership(t, { planId: plan.plan_id });
    await createMembership(t, { planId: plan.plan_id });
    const path = `${t.base}/access/resync`;
    const res = await resync(t);
    expectSuccess(res, {
      method: 'POST',
      path,
      message: 'Access resynced successfully',
      data: { user_id: null, changed: 2, requeued: 0, reconciling: 1 },
    });
    expect((await listAccess(t)).total).toBe(3);
    expect(await reconciledAt(h, t)).toStrictEqual([null]);
    // Again: nothing left to change.
    expect((await resync(t, {})).json().data).toStrictEqual({ user_id: null, changed: 0, requeued: 0, reconciling: 1 });
  });

  it('one member: re-planned, and their granted rows set back to pending to be applied again; nobody else touched', async () => {
    const t = await h.tenant();
    const { users } = await accessProject(h, t, 3);
    const [me, failed, other] = users as [string, string, string];
    await h.database.db.execute(sql`
      UPDATE access SET state = 'synced', applied = 'granted', attempts = 1, synced_at = now() WHERE project_id = ${t.projectId}`);
    await h.database.db.execute(sql`UPDATE access SET state = 'failed' WHERE project_id = ${t.projectId} AND user_id = ${failed}`);
    await h.database.db.execute(sql`UPDATE integrations SET reconciled_at = now() WHERE project_id = ${t.projectId}`);
    const res = await resync(t, { user_id: me });
    expect(res.json().data, res.body).toStrictEqual({ user_id: me, changed: 0, requeued: 1, reconciling: 0 });
    const rows = new Map((await listAccess(t)).data.map((r) => [r.user_id, r]));
    expect(rows.get(me)).toMatchObject({ desired: 'granted', state: 'pending', attempts: 0 });
    expect(rows.get(other)).toMatchObject({ state: 'synced', attempts: 1 });
    // A failed row waits for its target's fix, not a resync.
    expect((await resync(t, { user_id: failed })).json().data).toMatchObject({ requeued: 0 });
    expect((await listAccess(t, `?user_id=${failed}`)).data).toMatchObject([{ state: 'failed' }]);
    expect(await reconciledAt(h, t)).not.toStrictEqual([null]);
  });

  it('one member whose change the planner has not read yet: the re-plan applies it (changed counts it)', async () => {
    const t = await h.tenant();
    const { users } = await accessProject(h, t, 1);
    const membership = (await listAccess(t)).data[0]!;
    await t.request({ method: 'PUT', url: `${t.base}/ban/${users[0]}`, payload: {} });
    const res = await resync(t, { user_id: users[0] });
    expect(res.json().data, res.body).toStrictEqual({ user_id: users[0], changed: 1, requeued: 0, reconciling: 0 });
    expect((await listAccess(t)).data).toMatchObject([{ user_id: users[0], target_id: membership.target_id, desired: 'revoked' }]);
  });

  it('a project with no bot connected: nothing to do, all counts 0', async () => {
    const t = await h.tenant();
    const res = await resync(t, {});
    expect(res.json().data, res.body).toStrictEqual({ user_id: null, changed: 0, requeued: 0, reconciling: 0 });
  });
});
