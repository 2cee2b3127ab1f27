import { seedUser } from '../support/keys.js';
import type { Operation } from '../support/operations.js';

/** `GET …/users/{user_id}/notifications` in the shared-behaviour table (test/support/operations.all.ts). */
export const userNotifications: Operation = {
  name: 'GET /v2/projects/{project_id}/users/{user_id}/notifications',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/users/${await seedUser(t, { username: 'hopper' })}/notifications?limit=5&offset=0` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};
