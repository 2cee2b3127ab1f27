import { accessProject } from './access-api.js';
import type { Operation } from './operations.js';

/** The access API (docs/access.md), rows of the shared-behaviour table (test/http/shared.*.test.ts). */

export const accessList: Operation = {
  name: 'GET /v2/projects/{project_id}/access',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    await accessProject(h, t, 1);
    return { url: `${t.base}/access?limit=10&offset=0` };
  },
  allow: 'GET',
  wrongMethod: 'DELETE',
};

export const accessResync: Operation = {
  name: 'POST /v2/projects/{project_id}/access/resync',
  method: 'POST',
  successStatus: 200,
  async prepare(h, t) {
    const { users } = await accessProject(h, t, 1);
    return { url: `${t.base}/access/resync`, payload: { user_id: users[0] } };
  },
  invalidPayload: { user_id: 'not digits' },
  allow: 'POST',
  wrongMethod: 'GET',
};
