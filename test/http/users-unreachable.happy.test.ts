import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ISO_MS } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { listUsers, seedUser } from '../support/keys.js';
import { userList } from '../support/operations.keys.js';

/**
 * The user object says where the project's bot cannot write to the member (docs/front-desk.md,
 * "Members the bot cannot reach"): one entry per platform while recorded, none once the member
 * talked to the bot again. The record itself is written by the confirmations job (its own tests);
 * here it is seeded as that job writes it.
 */

describe(`${userList.name}: the platforms a user cannot be reached on`, () => {
  const h = useHarness();

  const record = (t: Tenant, userId: string, platform: string, reason: string, since: string) =>
    h.database.db.execute(sql`
      INSERT INTO unreachable_members (project_id, user_id, platform, reason, since)
      VALUES (${t.projectId}, ${userId}, ${platform}, ${reason}, ${since}::timestamptz)`);

  it('lists each platform with its reason and since, empty for a reachable user, on list, search and get', async () => {
    const t = await h.tenant();
    const reachable = await seedUser(t, { username: 'reachable_one' });
    const closed = await seedUser(t, { username: 'closed_one' });
    await record(t, closed, 'telegram', 'bot_blocked', '2030-01-02T03:04:05.678Z');
    await record(t, closed, 'discord', 'dm_closed', '2030-01-01T00:00:00.000Z');

    const page = await listUsers(t);
    const byId = new Map(page.data.map((u) => [u.user_id, u]));
    expect(byId.get(reachable)!.unreachable).toStrictEqual([]);
    expect(byId.get(closed)!.unreachable).toStrictEqual([
      { platform: 'discord', reason: 'dm_closed', since: '2030-01-01T00:00:00.000Z' },
      { platform: 'telegram', reason: 'bot_blocked', since: '2030-01-02T03:04:05.678Z' },
    ]);

    const res = await t.request({ method: 'GET', url: `${t.base}/users/search?search=closed_one` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data, res.body).toMatchObject([{ user_id: closed, unreachable: [{ platform: 'discord' }, { platform: 'telegram', since: expect.stringMatching(ISO_MS) }] }]);
    const one = await t.request({ method: 'GET', url: `${t.base}/users/${closed}` });
    expect(one.json().data.unreachable, one.body).toStrictEqual(byId.get(closed)!.unreachable);
  });

  it('drops a platform once the member talks to the bot there, and never shows another project\'s record', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const member = await seedUser(t);
    await seedUser(other, null, member);
    await record(t, member, 'telegram', 'no_conversation', '2030-01-01T00:00:00.000Z');
    expect((await listUsers(other)).data[0]!.unreachable).toStrictEqual([]);

    expect(await h.container.stores.notifications.clearUnreachable(t.projectId, member, 'telegram')).toBe(true);
    expect((await listUsers(t)).data[0]!.unreachable).toStrictEqual([]);
  });
});
