import { createMembership } from './api.js';
import type { Operation } from './operations.js';

/** A member's Telegram invite links (docs/access-telegram.md), a row of the shared-behaviour table (test/http/shared.*.test.ts). */

export const membershipInvites: Operation = {
  name: 'GET /v2/projects/{project_id}/memberships/{membership_id}/invites',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const m = await createMembership(t);
    return { url: `${t.base}/memberships/${m.membership_id}/invites` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};
