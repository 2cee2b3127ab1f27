import { describe, it } from 'vitest';
import { accessProject } from '../support/access-api.js';
import { expectError } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { accessList } from '../support/operations.access.js';

describe(`${accessList.name}: errors`, () => {
  const h = useHarness();

  it.each([
    ['user_id=abc', 'user_id must be a string of digits'],
    ['user_id=', 'user_id must be a string of digits'],
    ['target_id=role', 'target_id must be a UUID'],
    ['state=done', 'state must be one of: synced, pending, waiting_for_member, failed'],
    ['state=SYNCED', 'state must be one of: synced, pending, waiting_for_member, failed'],
  ])('answers 422 for ?%s', async (query, message) => {
    const t = await h.tenant();
    await accessProject(h, t, 1);
    const path = `${t.base}/access`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });
});
