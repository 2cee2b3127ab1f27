import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { useHarness } from '../support/harness.js';
import { deliverAll, membershipOf } from '../support/payments.js';
import { eventsOf } from '../support/telegram.js';
import { checkoutAfterLogin, guildJoinPasses, webShop, type WebShop } from '../support/web.js';

/**
 * After payment (docs/web.md): a member who logged in with Discord on the web is added to the
 * guild of the plan's targets by the guild join job (Add Guild Member on the fake Discord, with
 * their own token and the bot's), queued once per payment in the payment's transaction; Discord's
 * refusals (30001, 40007, 50013) fail the join with `access.failed` for the plan's targets there.
 */

describe('guild joins after a payment of a member who logged in with Discord', () => {
  const h = useHarness();
  const pass = guildJoinPasses(h);
  const joins = async (projectId: string) =>
    rowsOf<{ state: string; attempts: number; last_error: string | null }>(
      await h.database.db.execute(sql`SELECT state, attempts, last_error FROM guild_joins WHERE project_id = ${projectId} ORDER BY created_at`),
    );

  /** Logs `buyer` in, opens their pay link (Stripe's checkout session) and pays it; Stripe's events delivered. */
  async function paidAfterLogin(shop: WebShop, buyer: string) {
    const { sessionId } = await checkoutAfterLogin(h, shop, buyer);
    const events = h.stripe.world.pay(sessionId);
    await deliverAll(h, shop.stripe, events);
    return events;
  }

  it('adds the member to the guild (201) with their token and the bot’s, once per payment', async () => {
    const shop = await webShop(h);
    const buyer = '223456789012345678';
    const events = await paidAfterLogin(shop, buyer);
    expect((await membershipOf(shop.t, buyer))?.status).toBe('active');
    expect(await joins(shop.t.projectId)).toMatchObject([{ state: 'pending' }]);
    await pass();
    expect(h.discord.memberRoles(shop.guildId, buyer)).toStrictEqual([]);
    expect(h.discord.oauth.joins).toContain(`${shop.guildId}:${buyer}`);
    expect(await joins(shop.t.projectId)).toMatchObject([{ state: 'joined', attempts: 1, last_error: null }]);
    // Stripe's events again: the payment is known, no second join.
    await deliverAll(h, shop.stripe, events);
    expect(await joins(shop.t.projectId)).toHaveLength(1);
    const put = h.discord.calls.filter((c) => c.method === 'PUT' && c.path.endsWith(`/guilds/${shop.guildId}/members/${buyer}`));
    expect(put).toHaveLength(1);
    expect(put[0]!.status).toBe(201);
  });

  it('a member whose token expired before the payment cleared: renewed with their refresh token, then joined', async () => {
    const shop = await webShop(h);
    const buyer = '723456789012345678';
    await paidAfterLogin(shop, buyer);
    const token = async () =>
      rowsOf<{ access_token_sealed: string; expired: boolean }>(
        await h.database.db.execute(sql`SELECT access_token_sealed, expires_at < now() AS expired FROM discord_member_tokens WHERE project_id = ${shop.t.projectId} AND user_id = ${buyer}`),
      )[0]!;
    await h.database.db.execute(sql`UPDATE discord_member_tokens SET expires_at = now() - interval '1 minute' WHERE project_id = ${shop.t.projectId}`);
    const before = await token();
    await pass();
    expect(h.discord.oauth.refreshes).toContain(buyer);
    expect(await joins(shop.t.projectId)).toMatchObject([{ state: 'joined' }]);
    expect(h.discord.memberRoles(shop.guildId, buyer)).toStrictEqual([]);
    const after = await token();
    expect(after.expired).toBe(false);
    expect(after.access_token_sealed).not.toBe(before.access_token_sealed);
  });

  it('a member already in the guild (204) is joined all the same', async () => {
    const shop = await webShop(h);
    const buyer = '323456789012345678';
    h.discord.addMember(shop.guildId, buyer);
    await paidAfterLogin(shop, buyer);
    await pass();
    expect(await joins(shop.t.projectId)).toMatchObject([{ state: 'joined' }]);
    expect(h.discord.calls.filter((c) => c.path.endsWith(`/members/${buyer}`) && c.method === 'PUT').map((c) => c.status)).toStrictEqual([204]);
  });

  it.each([
    ['30001', 'too many guilds', (_shop: WebShop, buyer: string) => h.discord.oauth.tooManyGuilds(buyer)],
    ['40007', 'banned from the guild', (shop: WebShop, buyer: string) => h.discord.oauth.bannedFrom(shop.guildId, buyer)],
    ['50013', 'the bot may not invite', (shop: WebShop) => h.discord.oauth.allowInvites(shop.guildId, shop.bot.id, false)],
  ])('Discord %s (%s): the join fails once, with access.failed for the plan’s target in that guild', async (code, _what, arrange) => {
    const shop = await webShop(h);
    const buyer = `4234567890123456${code.slice(-2)}`;
    arrange(shop, buyer);
    await paidAfterLogin(shop, buyer);
    await pass();
    await pass();
    expect(await joins(shop.t.projectId)).toMatchObject([{ state: 'failed', attempts: 1, last_error: expect.stringMatching(new RegExp(`^${code}: `)) }]);
    expect(h.discord.memberRoles(shop.guildId, buyer)).toBeNull();
    const failed = await eventsOf(h, shop.t.projectId, 'access.failed');
    const mine = failed.filter((e) => e.user_id === buyer && (e.error as { code: string }).code === code);
    expect(mine, JSON.stringify(failed)).toHaveLength(1);
    expect(mine[0]).toMatchObject({ platform: 'discord', target_id: expect.any(String) });
  });

  it('a member who paid without logging in on the web gets no join', async () => {
    const shop = await webShop(h);
    const { payLink } = await import('../support/front-desk.js');
    const link = await payLink(shop.t, shop.planId, '523456789012345678');
    const open = await h.app.inject({ method: 'GET', url: new URL(link.url).pathname });
    const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(open.headers.location as string)![1]!;
    await deliverAll(h, shop.stripe, h.stripe.world.pay(sessionId));
    expect(await joins(shop.t.projectId)).toStrictEqual([]);
  });
});
