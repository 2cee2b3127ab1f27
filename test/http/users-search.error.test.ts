import { describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { userSearch } from '../support/operations.keys.js';

describe(`${userSearch.name}: errors`, () => {
  const h = useHarness();

  const TERM = 'search must be 3 to 100 characters';

  it.each([
    ['no search parameter', '', 'search is required'],
    ['an empty search', 'search=', TERM],
    ['2 characters', 'search=ab', TERM],
    ['3 spaces around 1 character', 'search=%20a%20', TERM],
    ['101 characters', `search=${'a'.repeat(101)}`, TERM],
    ['a bad limit', 'search=abc&limit=0', 'limit must be an integer from 1 to 100'],
    ['a bad offset', 'search=abc&offset=-2', 'offset must be an integer from 0 to 1000000000'],
  ])('answers 422 for %s', async (_what, query, message) => {
    const t = await h.tenant();
    const path = `${t.base}/users/search`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });
});
