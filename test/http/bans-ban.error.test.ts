import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness, userId } from '../support/harness.js';
import { ban } from '../support/keys.js';
import { userBan } from '../support/operations.keys.js';

describe(`${userBan.name}: errors`, () => {
  const h = useHarness();

  it('answers 409 for a user already banned; the first ban is kept as it was', async () => {
    const t = await h.tenant();
    const id = userId();
    const first = await ban(t, id, 'first');
    const path = `${t.base}/ban/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PUT', url: path, payload: { reason: 'second' } });
    expectError(res, { status: 409, code: 'CONFLICT', method: 'PUT', path, message: `User ${id} is already banned` });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    expect(first.banned_reason).toBe('first');
  });

  const REASON = 'reason must be a string of at most 500 characters, or null';

  it.each([
    ['user_id of letters', 'abc', { reason: 'x' }, 'user_id must be a string of digits'],
    ['user_id of 33 digits', '9'.repeat(33), {}, 'user_id must be a string of digits'],
    ['a numeric reason', userId(), { reason: 42 }, REASON],
    ['a reason of 501 characters', userId(), { reason: 'x'.repeat(501) }, REASON],
    ['a reason object', userId(), { reason: { text: 'x' } }, REASON],
    ['an array body', userId(), [], 'body must be object'],
  ])('answers 422 for %s; nothing changes', async (_what, id, payload, message) => {
    const t = await h.tenant();
    const path = `${t.base}/ban/${id}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PUT', url: path, payload: payload as object });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PUT', path, message });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});
