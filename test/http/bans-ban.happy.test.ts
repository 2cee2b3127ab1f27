import { describe, expect, it } from 'vitest';
import { createMembership, eventRows, expectError, expectSuccess, ISO_MS, membershipRows } from '../support/api.js';
import { future, useHarness, userId, type Tenant } from '../support/harness.js';
import { listUsers, seedUser } from '../support/keys.js';
import { userBan } from '../support/operations.keys.js';

describe(`${userBan.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/ban/${id}`;

  it('answers 200 with the ban: banned_at, banned_by (the calling key) and the reason', async () => {
    const t = await h.tenant();
    const id = userId();
    const res = await t.request({ method: 'PUT', url: pathFor(t, id), payload: { reason: '  chargeback fraud ' } });
    const data = res.json().data;
    expect(data.banned_at, res.body).toMatch(ISO_MS);
    expectSuccess(res, {
      method: 'PUT',
      path: pathFor(t, id),
      message: 'User banned successfully',
      data: { user_id: id, banned_at: data.banned_at, banned_by: t.keyId, banned_reason: 'chargeback fraud' },
    });
  });

  it.each([
    ['no body at all', undefined],
    ['an empty object', {}],
    ['a null reason', { reason: null }],
    ['an empty reason', { reason: '' }],
  ])('takes %s as no reason', async (_what, payload) => {
    const t = await h.tenant();
    const res = await t.request({ method: 'PUT', url: pathFor(t, userId()), ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.banned_reason, res.body).toBeNull();
  });

  it('refuses the banned user a new membership with 409; nothing is created', async () => {
    const t = await h.tenant();
    const id = userId();
    const banned = await t.request({ method: 'PUT', url: pathFor(t, id), payload: {} });
    expect(banned.statusCode, banned.body).toBe(200);
    const path = `${t.base}/memberships`;
    const res = await t.request({ method: 'POST', url: path, payload: { user_id: id, end_date: future().iso, user_name: { first_name: 'Eve' } } });
    expectError(res, { status: 409, code: 'CONFLICT', method: 'POST', path, message: `User ${id} is banned from this project` });
    expect(await membershipRows(h, t.projectId)).toStrictEqual([]);
    expect((await listUsers(t)).total).toBe(0);
  });

  it('keeps the existing membership of a user banned later, and shows them as banned', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await t.request({ method: 'PUT', url: pathFor(t, m.user_id), payload: { reason: 'abuse' } });
    expect((await membershipRows(h, t.projectId)).map((r) => r.user_id)).toStrictEqual([m.user_id]);
    expect((await listUsers(t)).data).toMatchObject([{ user_id: m.user_id, is_banned: true }]);
  });

  it('writes one user.banned event with the ban, {user_id, reason}; a second ban writes none', async () => {
    const t = await h.tenant();
    const [id, quiet] = [userId(), userId()];
    await t.request({ method: 'PUT', url: pathFor(t, id), payload: { reason: ' abuse ' } });
    await t.request({ method: 'PUT', url: pathFor(t, quiet) });
    const again = await t.request({ method: 'PUT', url: pathFor(t, id), payload: { reason: 'again' } });
    expect(again.statusCode, again.body).toBe(409);
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      { type: 'user.banned', project_id: t.projectId, data: { user_id: id, reason: 'abuse' } },
      { type: 'user.banned', project_id: t.projectId, data: { user_id: quiet, reason: null } },
    ]);
  });

  it('bans only in the project of the path: the user may join another project', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const id = userId();
    await a.request({ method: 'PUT', url: pathFor(a, id), payload: {} });
    expect(await seedUser(b, null, id)).toBe(id);
  });
});
