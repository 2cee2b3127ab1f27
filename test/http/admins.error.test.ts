import { describe, expect, it } from 'vitest';
import { expectError, expectRefusal } from '../support/api.js';
import { adminsPath, createAdmin } from '../support/admins.js';
import { useHarness, userId } from '../support/harness.js';
import { seedUser } from '../support/keys.js';

describe('/v2/projects/{project_id}/admins: errors', () => {
  const h = useHarness();

  it('refuses a user the project has not seen: 404, and makes nobody an admin', async () => {
    const t = await h.tenant();
    const path = adminsPath(t);
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: userId(), permissions: ['all'] } });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'User not found' });
    const list = await t.request({ method: 'GET', url: path });
    expect(list.json(), list.body).toMatchObject({ total: 0, data: [] });
  });

  it('refuses an admin made twice: 409, the first permissions kept', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['plans:read']);
    const path = adminsPath(t);
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: admin.user_id, permissions: ['all'] } });
    expectError(res, { status: 409, code: 'CONFLICT', method: 'POST', path, message: `User ${admin.user_id} is already an admin` });
    const list = await t.request({ method: 'GET', url: path });
    expect(list.json().data, list.body).toStrictEqual([admin]);
  });

  it('names the unknown permissions: 422 on add and on update, nothing changed', async () => {
    const t = await h.tenant();
    const id = await seedUser(t);
    const add = await t.request({ method: 'POST', url: adminsPath(t), payload: { user_id: id, permissions: ['plans:read', 'plans:fly', 'ALL'] } });
    expectRefusal(add, 'Unknown permissions: plans:fly, ALL');
    const admin = await createAdmin(t, ['plans:read']);
    const update = await t.request({ method: 'PUT', url: `${adminsPath(t)}/${admin.user_id}`, payload: { permissions: ['everything'] } });
    expectRefusal(update, 'Unknown permissions: everything');
    const list = await t.request({ method: 'GET', url: adminsPath(t) });
    expect(list.json().data, list.body).toStrictEqual([admin]);
  });

  it('answers 404 "Admin not found" for a user who is not an admin, on update and delete', async () => {
    const t = await h.tenant();
    const id = await seedUser(t);
    const path = `${adminsPath(t)}/${id}`;
    expectError(await t.request({ method: 'PUT', url: path, payload: { permissions: ['all'] } }), { status: 404, code: 'NOT_FOUND', method: 'PUT', path, message: 'Admin not found' });
    expectError(await t.request({ method: 'DELETE', url: path }), { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Admin not found' });
  });

  it.each([
    ['a missing permissions', { user_id: '123' }, /permissions/],
    ['permissions not an array', { user_id: '123', permissions: 'all' }, /permissions/],
    ['a user_id not of digits', { user_id: 'ada', permissions: ['all'] }, /user_id/],
  ])('refuses %s: 422 naming it', async (_label, payload, message) => {
    const t = await h.tenant();
    expectRefusal(await t.request({ method: 'POST', url: adminsPath(t), payload }), message);
  });

  it('refuses an unknown query parameter or a bad limit: 422 naming it', async () => {
    const t = await h.tenant();
    expectRefusal(await t.request({ method: 'GET', url: `${adminsPath(t)}?role=owner` }), /role/);
    expectRefusal(await t.request({ method: 'GET', url: `${adminsPath(t)}?limit=0` }), /limit/);
  });
});
