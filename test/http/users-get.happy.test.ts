import { describe, expect, it } from 'vitest';
import { ISO_MS, UUID } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { ban, listUsers, seedUser } from '../support/keys.js';
import { userGet } from '../support/operations.keys.js';

describe(`${userGet.name}: happy`, () => {
  const h = useHarness();

  it('answers the user object, as the list shows it', async () => {
    const t = await h.tenant();
    const ada = await seedUser(t, { first_name: 'Ada', username: 'ada_l' });
    await ban(t, ada, 'spam');
    const path = `${t.base}/users/${ada}`;
    const res = await t.request({ method: 'GET', url: path });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json(), res.body).toStrictEqual({
      ok: true,
      request_id: expect.stringMatching(UUID),
      method: 'GET',
      path,
      code: 200,
      message: 'User retrieved successfully',
      data: {
        user_id: ada,
        user_first_seen: expect.stringMatching(ISO_MS),
        user_last_seen: expect.stringMatching(ISO_MS),
        is_admin: false,
        is_banned: true,
        user_name: { first_name: 'Ada', username: 'ada_l' },
        balance: '0.00',
        currency: 'USD',
        unreachable: [],
      },
    });
    expect(res.json().data).toStrictEqual((await listUsers(t)).data[0]);
  });
});
