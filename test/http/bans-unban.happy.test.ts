import { describe, expect, it } from 'vitest';
import { eventRows, UUID } from '../support/api.js';
import { useHarness, userId } from '../support/harness.js';
import { ban, listUsers, seedUser } from '../support/keys.js';
import { userUnban } from '../support/operations.keys.js';

describe(`${userUnban.name}: happy`, () => {
  const h = useHarness();

  it('answers 204 without a body and lets the user get a membership again', async () => {
    const t = await h.tenant();
    const id = userId();
    await ban(t, id);
    const res = await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['x-request-id']).toMatch(UUID);
    await seedUser(t, { username: 'forgiven' }, id);
    expect((await listUsers(t)).data).toMatchObject([{ user_id: id, is_banned: false }]);
  });

  it('writes one user.unbanned event {user_id} with the unban; an unban of no ban writes none', async () => {
    const t = await h.tenant();
    const id = userId();
    await ban(t, id);
    expect((await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` })).statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` })).statusCode).toBe(404);
    expect((await eventRows(h, t.projectId)).map(({ type, data }) => ({ type, data }))).toStrictEqual([
      { type: 'user.banned', data: { user_id: id, reason: null } },
      { type: 'user.unbanned', data: { user_id: id } },
    ]);
  });

  it('lets the user be banned again afterwards', async () => {
    const t = await h.tenant();
    const id = userId();
    await ban(t, id, 'once');
    expect((await t.request({ method: 'DELETE', url: `${t.base}/ban/${id}` })).statusCode).toBe(204);
    expect((await ban(t, id, 'twice')).banned_reason).toBe('twice');
  });
});
