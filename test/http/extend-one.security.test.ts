import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectsStore } from '../../src/store/projects.store.js';
import { createMembership, expectError, membershipRow } from '../support/api.js';
import { createHarness, future, type Harness } from '../support/harness.js';
import { extendOne } from '../support/operations.js';

describe(`${extendOne.name}: revocation without the key cache`, () => {
  let h: Harness;
  beforeAll(async () => {
    // With the cache off, a revocation must bite on the very next request.
    h = await createHarness({ env: { TENURE_AUTH_CACHE_TTL_MS: '0' } });
  });
  afterAll(() => h.close());

  it('refuses a key revoked after it was used', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const url = `${t.base}/memberships/${m.user_id}/extend`;
    const first = await t.request({ method: 'PATCH', url, payload: { extend: future(40).iso } });
    expect(first.statusCode, first.body).toBe(200);
    const endDate = (await membershipRow(h, t.projectId, m.user_id))!.end_date;

    await new ProjectsStore(h.database.db).revokeKey(t.keyId, 'test');
    const res = await t.request({ method: 'PATCH', url, payload: { extend: future(80).iso } });
    expectError(res, { status: 401, code: 'UNAUTHORIZED', method: 'PATCH', path: url });
    expect((await membershipRow(h, t.projectId, m.user_id))!.end_date).toBe(endDate);
  });
});
