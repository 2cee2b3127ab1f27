import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { createTarget } from '../support/catalogue.js';
import { createHarness, type Harness } from '../support/harness.js';
import { targetList } from '../support/operations.catalogue.js';
import { describeTransportErrors } from '../support/transport.js';

describeTransportErrors(targetList);

describe(`${targetList.name}: errors`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
    ['limit=-1', 'limit must be an integer from 1 to 100'],
    ['limit=1.5', 'limit must be an integer from 1 to 100'],
    ['limit=abc', 'limit must be an integer from 1 to 100'],
    ['limit=', 'limit must be an integer from 1 to 100'],
    ['offset=-1', 'offset must be a non-negative integer'],
    ['offset=1.5', 'offset must be a non-negative integer'],
    ['offset=abc', 'offset must be a non-negative integer'],
  ])('answers 422 for %s', async (query, message) => {
    const t = await h.tenant();
    await createTarget(t);
    const path = `${t.base}/targets`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });
});
