import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness, userId } from '../support/harness.js';
import { ban } from '../support/keys.js';
import { userUnban } from '../support/operations.keys.js';

describe(`${userUnban.name}: errors`, () => {
  const h = useHarness();

  it.each([
    ['a user who was never banned', async () => userId()],
    ['a user banned in another project only', async () => {
      const id = userId();
      await ban(await h.tenant(), id);
      return id;
    }],
  ])('answers 404 "User not found in ban list" for %s', async (_what, seed) => {
    const t = await h.tenant();
    const id = await seed();
    const path = `${t.base}/ban/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'User not found in ban list' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 404 for a second unban', async () => {
    const t = await h.tenant();
    const id = userId();
    await ban(t, id);
    expect((await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` })).statusCode).toBe(204);
    const res = await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` });
    expect(res.statusCode, res.body).toBe(404);
  });

  it('answers 422 for a user_id that is not digits', async () => {
    const t = await h.tenant();
    const path = `${t.base}/ban/nobody`;
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'DELETE', path, message: 'user_id must be a string of digits' });
  });
});
