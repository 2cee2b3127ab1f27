import type { Operation } from '../support/operations.js';

/** Money and growth in the shared-behaviour table (test/support/operations.all.ts) and the OpenAPI conformance run. */
export const analyticsOperation: Operation = {
  name: 'GET /v2/projects/{project_id}/analytics',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/analytics?from=2026-01-01T00:00:00.000Z&to=2026-02-01T00:00:00.000Z&interval=week` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};
