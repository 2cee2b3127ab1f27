import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { createHarness, type Harness } from '../support/harness.js';
import { apiKeyList } from '../support/operations.keys.js';
import { describeTransportErrors } from '../support/transport.js';

describeTransportErrors(apiKeyList);

describe(`${apiKeyList.name}: errors`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  const LIMIT = 'limit must be an integer from 1 to 100';
  const OFFSET = 'offset must be a non-negative integer';

  it.each([
    ['limit=0', LIMIT],
    ['limit=101', LIMIT],
    ['limit=abc', LIMIT],
    ['limit=1.5', LIMIT],
    ['limit=-1', LIMIT],
    ['limit=', LIMIT],
    ['offset=-1', OFFSET],
    ['offset=abc', OFFSET],
    ['offset=0.5', OFFSET],
  ])('answers 422 for ?%s', async (query, message) => {
    const t = await h.tenant();
    const path = `${t.base}/integrations/api-keys`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });
});
