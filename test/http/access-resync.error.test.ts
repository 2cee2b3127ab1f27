import { describe, expect, it } from 'vitest';
import { accessProject, listAccess } from '../support/access-api.js';
import { expectError } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { accessResync } from '../support/operations.access.js';

describe(`${accessResync.name}: errors`, () => {
  const h = useHarness();

  it.each([
    ['a user_id that is not digits', { user_id: 'alice' }],
    ['a numeric user_id', { user_id: 42 }],
    ['a null user_id', { user_id: null }],
  ])('answers 422 for %s, and changes nothing', async (_what, payload) => {
    const t = await h.tenant();
    await accessProject(h, t, 1);
    const before = await listAccess(t);
    const path = `${t.base}/access/resync`;
    const res = await t.request({ method: 'POST', url: path, payload });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: 'user_id must be a string of digits' });
    expect(await listAccess(t)).toStrictEqual({ ...before, request_id: expect.any(String) });
  });
});
