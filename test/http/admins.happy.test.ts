import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/api.js';
import { adminsPath, createAdmin } from '../support/admins.js';
import { useHarness } from '../support/harness.js';
import { listUsers, seedUser } from '../support/keys.js';

describe('/v2/projects/{project_id}/admins: happy', () => {
  const h = useHarness();

  it('makes a user of the project an admin: 201 with the admin, and the users API says is_admin', async () => {
    const t = await h.tenant();
    const userId = await seedUser(t, { first_name: 'Ada', username: 'ada' });
    const path = adminsPath(t);
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId, permissions: ['memberships:read', 'memberships:update', 'memberships:read'] } });
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path,
      message: 'Admin added successfully',
      data: { user_id: userId, user_name: { first_name: 'Ada', username: 'ada' }, permissions: ['memberships:read', 'memberships:update'] },
    });
    const users = await listUsers(t);
    expect(users.data.find((u) => u.user_id === userId)?.is_admin).toBe(true);
  });

  it('lists the admins, newest first, with total, limit 50 by default, paged by offset', async () => {
    const t = await h.tenant();
    const first = await createAdmin(t, ['all']);
    const second = await createAdmin(t, ['plans:read'], { first_name: null, username: 'bo' });
    // The first made a minute earlier, so the two never tie on the millisecond.
    await h.database.db.execute(sql`UPDATE admins SET created_at = created_at - interval '1 minute' WHERE project_id = ${t.projectId} AND user_id = ${first.user_id}`);
    await seedUser(t); // a user who is not an admin is not listed
    const path = adminsPath(t);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, {
      method: 'GET',
      path,
      total: 2,
      message: 'Admins fetched successfully',
      data: [
        { user_id: second.user_id, user_name: { first_name: null, username: 'bo' }, permissions: ['plans:read'] },
        { user_id: first.user_id, user_name: { first_name: null, username: null }, permissions: ['all'] },
      ],
    });
    const paged = await t.request({ method: 'GET', url: `${path}?limit=1&offset=1` });
    expect(paged.json(), paged.body).toMatchObject({ total: 2, data: [{ user_id: first.user_id }] });
  });

  it('replaces the whole set of permissions: 200 "Admin updated successfully"', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['memberships:read', 'plans:read']);
    const path = `${adminsPath(t)}/${admin.user_id}`;
    const res = await t.request({ method: 'PUT', url: path, payload: { permissions: ['coupons:add'] } });
    expectSuccess(res, { method: 'PUT', path, message: 'Admin updated successfully', data: { ...admin, permissions: ['coupons:add'] } });
    const list = await t.request({ method: 'GET', url: adminsPath(t) });
    expect(list.json().data, list.body).toStrictEqual([{ ...admin, permissions: ['coupons:add'] }]);
  });

  it('removes an admin: 204, gone from the list; the person stays a user, no longer is_admin', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t);
    const res = await t.request({ method: 'DELETE', url: `${adminsPath(t)}/${admin.user_id}` });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    const list = await t.request({ method: 'GET', url: adminsPath(t) });
    expect(list.json(), list.body).toMatchObject({ total: 0, data: [] });
    const users = await listUsers(t);
    expect(users.data.find((u) => u.user_id === admin.user_id)?.is_admin, JSON.stringify(users)).toBe(false);
    // Made an admin again, from scratch.
    const again = await t.request({ method: 'POST', url: adminsPath(t), payload: { user_id: admin.user_id, permissions: [] } });
    expect(again.statusCode, again.body).toBe(201);
  });

  it('fetches the catalogue of permissions: area:action strings and all', async () => {
    const t = await h.tenant();
    const path = `${adminsPath(t)}/permissions`;
    const res = await t.request({ method: 'GET', url: path });
    const data = res.json().data as string[];
    expectSuccess(res, { method: 'GET', path, total: data.length, message: 'Permissions fetched successfully', data });
    expect(data).toContain('all');
    expect(data).toEqual(expect.arrayContaining(['admins:read', 'admins:add', 'ban:add', 'memberships:update', 'settings.integrations:write']));
    for (const p of data.filter((x) => x !== 'all')) expect(p).toMatch(/^[a-z_.-]+:[a-z_]+$/);
  });

  it("keeps each project's admins to itself", async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    await createAdmin(t, ['all']);
    const res = await other.request({ method: 'GET', url: adminsPath(other) });
    expect(res.json(), res.body).toMatchObject({ total: 0, data: [] });
  });
});
