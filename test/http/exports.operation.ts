import { createMembership } from '../support/api.js';
import type { Operation } from '../support/operations.js';

/** The exports in the shared-behaviour table (test/support/operations.all.ts) and the OpenAPI conformance run. */
export const exportOperations: Operation[] = [
  {
    name: 'GET /v2/projects/{project_id}/memberships/export',
    method: 'GET',
    successStatus: 200,
    async prepare(_h, t) {
      await createMembership(t);
      return { url: `${t.base}/memberships/export?format=csv&status=active` };
    },
    // DELETE …/memberships/{membership_id} matches the path too (and refuses `export` as an id).
    allow: 'GET, DELETE',
    wrongMethod: 'POST',
    file: true,
  },
  {
    name: 'GET /v2/projects/{project_id}/payments/export',
    method: 'GET',
    successStatus: 200,
    async prepare(_h, t) {
      return { url: `${t.base}/payments/export?format=ndjson` };
    },
    allow: 'GET',
    wrongMethod: 'POST',
    file: true,
  },
];
