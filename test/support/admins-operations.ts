import { adminsPath, createAdmin } from './admins.js';
import { seedUser } from './keys.js';
import type { Operation } from './operations.js';

/**
 * The admins routes, described for the shared security and transport generators, the fuzz test
 * and the OpenAPI conformance test (test/support/operations.all.ts finds them by file name).
 */

export const adminList: Operation = {
  name: 'GET /v2/projects/{project_id}/admins',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await createAdmin(t);
    return { url: `${adminsPath(t)}?limit=10` };
  },
  allow: 'GET, POST',
  wrongMethod: 'DELETE',
};

export const adminAdd: Operation = {
  name: 'POST /v2/projects/{project_id}/admins',
  method: 'POST',
  successStatus: 201,
  async prepare(_h, t) {
    const userId = await seedUser(t);
    return { url: adminsPath(t), payload: { user_id: userId, permissions: ['all'] } };
  },
  invalidPayload: { user_id: 'someone', permissions: 'all' },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const adminPermissions: Operation = {
  name: 'GET /v2/projects/{project_id}/admins/permissions',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${adminsPath(t)}/permissions` };
  },
  // PUT and DELETE reach …/admins/{user_id} with user_id "permissions" (then a 422 on the id).
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'POST',
};

export const adminUpdate: Operation = {
  name: 'PUT /v2/projects/{project_id}/admins/{user_id}',
  method: 'PUT',
  successStatus: 200,
  async prepare(_h, t) {
    const admin = await createAdmin(t);
    return { url: `${adminsPath(t)}/${admin.user_id}`, payload: { permissions: ['plans:read'] } };
  },
  invalidPayload: { permissions: [42] },
  allow: 'PUT, DELETE',
  wrongMethod: 'POST',
};

export const adminRemove: Operation = {
  name: 'DELETE /v2/projects/{project_id}/admins/{user_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const admin = await createAdmin(t);
    return { url: `${adminsPath(t)}/${admin.user_id}` };
  },
  allow: 'PUT, DELETE',
  wrongMethod: 'POST',
};
