import { describe, expect, it } from 'vitest';
import { ISO_MS, UUID } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { ban, listUsers, seedUser } from '../support/keys.js';
import { userList } from '../support/operations.keys.js';

describe(`${userList.name}: happy`, () => {
  const h = useHarness();

  const path = (t: Tenant) => `${t.base}/users`;

  it('answers an empty page with total, limit (default 10) and offset on a new project', async () => {
    const t = await h.tenant();
    const res = await t.request({ method: 'GET', url: path(t) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json(), res.body).toStrictEqual({
      ok: true,
      request_id: expect.stringMatching(UUID),
      method: 'GET',
      path: path(t),
      code: 200,
      total: 0,
      limit: 10,
      offset: 0,
      message: 'Users retrieved successfully',
      data: [],
    });
  });

  it('lists the users memberships named, newest first, with their names, ban state and balance', async () => {
    const t = await h.tenant();
    const ada = await seedUser(t, { first_name: 'Ada', username: 'ada_l' });
    const anon = await seedUser(t);
    const grace = await seedUser(t, { username: 'hopper' });
    await ban(t, anon, 'spam');
    const page = await listUsers(t);
    expect(page.total).toBe(3);
    expect(page.data.map((u) => u.user_id)).toStrictEqual([grace, anon, ada]);
    const [g, a, l] = page.data;
    expect(g).toStrictEqual({
      user_id: grace,
      user_first_seen: expect.stringMatching(ISO_MS),
      user_last_seen: expect.stringMatching(ISO_MS),
      is_admin: false,
      is_banned: false,
      user_name: { first_name: null, username: 'hopper' },
      balance: '0.00',
      currency: 'USD',
      unreachable: [],
    });
    expect(a).toMatchObject({ user_id: anon, is_banned: true, user_name: null });
    expect(l).toMatchObject({ user_id: ada, is_banned: false, user_name: { first_name: 'Ada', username: 'ada_l' } });
  });

  it('pages with limit and offset, echoing them; total stays the number of users', async () => {
    const t = await h.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift(await seedUser(t));
    const seen: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const res = await t.request({ method: 'GET', url: `${path(t)}?limit=2&offset=${offset}` });
      expect(res.json(), res.body).toMatchObject({ total: 5, limit: 2, offset });
      seen.push(...res.json().data.map((u: { user_id: string }) => u.user_id));
    }
    expect(seen).toStrictEqual(ids);
  });

  it('lists only the users of the project', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    await seedUser(b);
    expect((await listUsers(a)).total).toBe(0);
  });
});
