import { describe, it } from 'vitest';
import { expectError } from '../support/api.js';
import { useHarness, userId } from '../support/harness.js';
import { seedUser } from '../support/keys.js';
import { userGet } from '../support/operations.keys.js';

describe(`${userGet.name}: errors`, () => {
  const h = useHarness();

  it('answers 404 for a user the project has not seen (another project\'s user included)', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const elsewhere = await seedUser(other);
    for (const id of [userId(), elsewhere]) {
      const path = `${t.base}/users/${id}`;
      expectError(await t.request({ method: 'GET', url: path }), { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'User not found' });
    }
  });

  it('answers 422 for a user id that is not digits', async () => {
    const t = await h.tenant();
    const path = `${t.base}/users/ada`;
    expectError(await t.request({ method: 'GET', url: path }), { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'user_id must be a string of digits' });
  });
});
