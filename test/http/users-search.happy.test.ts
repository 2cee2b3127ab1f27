import { describe, expect, it } from 'vitest';
import { useHarness, type Tenant } from '../support/harness.js';
import { seedUser } from '../support/keys.js';
import { userSearch } from '../support/operations.keys.js';

describe(`${userSearch.name}: happy`, () => {
  const h = useHarness();

  async function search(t: Tenant, term: string, extra = '') {
    const res = await t.request({ method: 'GET', url: `${t.base}/users/search?search=${encodeURIComponent(term)}${extra}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  const ids = (body: { data: { user_id: string }[] }) => body.data.map((u) => u.user_id);

  it('matches the first name or username case-insensitively, newest first, with total, limit and offset', async () => {
    const t = await h.tenant();
    const ada = await seedUser(t, { first_name: 'Ada', username: 'countess' });
    const grace = await seedUser(t, { first_name: 'Grace', username: 'ADAmant' });
    await seedUser(t, { first_name: 'Alan', username: 'turing' });
    const body = await search(t, 'aDa');
    expect(body).toMatchObject({ ok: true, total: 2, limit: 10, offset: 0, message: 'Users retrieved successfully', path: `${t.base}/users/search` });
    expect(ids(body)).toStrictEqual([grace, ada]);
  });

  it('matches part of the user id', async () => {
    const t = await h.tenant();
    const a = await seedUser(t, null, '900111222333444555');
    await seedUser(t, null, '100000000000000001');
    expect(ids(await search(t, '1222333'))).toStrictEqual([a]);
  });

  it.each([
    ['%%%', 'a percent sign'],
    ['___', 'an underscore'],
    ['\\\\\\', 'a backslash'],
  ])('takes %s literally (%s), never as a wildcard', async (term) => {
    const t = await h.tenant();
    await seedUser(t, { first_name: 'Plain', username: 'nobody' });
    const literal = await seedUser(t, { first_name: `x${term}y`, username: 'odd' });
    expect(ids(await search(t, term))).toStrictEqual([literal]);
  });

  it('trims the term, pages, and finds nothing in another project', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    for (let i = 0; i < 3; i++) await seedUser(t, { username: `member${i}` });
    await seedUser(other, { username: 'member9' });
    const first = await search(t, '  member ', '&limit=2');
    expect(first).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(first.data).toHaveLength(2);
    const rest = await search(t, 'member', '&limit=2&offset=2');
    expect(rest.data.map((u: { user_name: { username: string } }) => u.user_name.username)).toStrictEqual(['member0']);
  });
});
