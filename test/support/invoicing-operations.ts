import { userId } from './harness.js';
import type { Operation } from './operations.js';

/**
 * A member's invoicing details (docs/portal.md, "Invoicing details"), described for the shared
 * security and transport tables, the fuzz test and the OpenAPI conformance test. Any user id of the
 * project may have them: nothing to seed.
 */

export const invoicingGet: Operation = {
  name: 'GET /v2/projects/{project_id}/users/{user_id}/invoicing',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/users/${userId()}/invoicing` };
  },
  allow: 'GET, PATCH',
  wrongMethod: 'POST',
};

export const invoicingUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/users/{user_id}/invoicing',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/users/${userId()}/invoicing`, payload: { name: 'Ada Lovelace', address: { line1: 'Hauptstrasse 1', city: 'Berlin', country: 'DE' } } };
  },
  invalidPayload: { vat_id: 'not a vat id' },
  allow: 'GET, PATCH',
  wrongMethod: 'POST',
};
