import { describe, it } from 'vitest';
import { createMembership, expectError } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { membershipList } from '../support/operations.js';

describe(`${membershipList.name}: errors`, () => {
  const h = useHarness();

  it.each([
    ['user_id=abc', 'user_id must be a string of digits'],
    ['user_id=-5', 'user_id must be a string of digits'],
    [`user_id=${'1'.repeat(33)}`, 'user_id must be a string of digits'],
  ])('answers 422 for ?%s', async (query, message) => {
    const t = await h.tenant();
    await createMembership(t);
    const path = `${t.base}/memberships`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });
});
