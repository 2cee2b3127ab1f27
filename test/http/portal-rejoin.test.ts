import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { headingOf, pathOf } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll } from '../support/payments.js';
import { Browser, csrfOf, openPortal, portalLink, textOf } from '../support/portal.js';
import { authorize, checkoutAfterLogin, guildJoinPasses, webShop, type WebShop } from '../support/web.js';

/**
 * docs/portal.md, "Rejoining the Discord server": a member whose Discord access waits for them to
 * join presses "Rejoin the Discord server" in their portal (a CSRF-checked form), logs in with
 * Discord (identify guilds.join, bound to them), and the guild join job adds them with their own
 * token; back on their portal the join's standing shows (joining, then the access being set up,
 * or what Discord refused and what to do). Another Discord account coming back changes nothing.
 */
describe('the portal: rejoin the Discord server', () => {
  const h = useHarness();
  const pass = guildJoinPasses(h);
  const REJOIN = 'Rejoin the Discord server';

  const joinsOf = async (projectId: string, user: string) =>
    rowsOf<{ plan_id: string | null; guild_id: string | null; state: string; last_error: string | null }>(
      await h.database.db.execute(sql`SELECT plan_id, guild_id, state, last_error FROM guild_joins WHERE project_id = ${projectId} AND user_id = ${user} ORDER BY created_at, id`),
    );

  /**
   * A member who bought on the web and was added to the guild, then left it: the access engine
   * found them gone, so their role row waits for them (as it records it: `waiting_for_member`).
   */
  async function memberWhoLeft(shop: WebShop, buyer: string) {
    const { sessionId } = await checkoutAfterLogin(h, shop, buyer);
    await deliverAll(h, shop.stripe, h.stripe.world.pay(sessionId));
    await pass();
    h.discord.removeMember(shop.guildId, buyer);
    const [role] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${shop.t.projectId} AND kind = 'role'`));
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${shop.t.projectId}, ${role!.id}, ${buyer}, 'discord', 'role', ${shop.roleId}, 'remove_role', 'granted', 'waiting_for_member')
      ON CONFLICT (target_id, user_id) DO UPDATE SET desired = 'granted', state = 'waiting_for_member'`);
    const portalPath = pathOf(await portalLink(shop.t, buyer));
    const { browser, page } = await openPortal(h, portalPath);
    return { roleTargetId: role!.id, portalPath, browser, page };
  }

  /** Presses Rejoin: on to Discord (consenting as `who`), back through the callback; the callback's answer. */
  async function rejoin(browser: Browser, portalPath: string, html: string, roleTargetId: string, who: string) {
    const action = `${portalPath}/discord-join/${roleTargetId}`;
    expect(html).toContain(`action="${action}"`);
    const pressed = await browser.post(action, { _csrf: csrfOf(html)! });
    expect(pressed.statusCode, pressed.body).toBe(303);
    const authorizeUrl = new URL(pressed.headers.location as string);
    expect(authorizeUrl.searchParams.get('scope')).toBe('identify guilds.join');
    h.discord.oauth.nextLogin = { userId: who };
    const back = new URL(await authorize(authorizeUrl.href));
    return browser.get(`${back.pathname}${back.search}`);
  }

  it('Rejoin → Discord → back on the portal: the join is queued for that guild with their token, made by the job, and the role is being set up', async () => {
    const shop = await webShop(h);
    const buyer = '133456789012345678';
    const m = await memberWhoLeft(shop, buyer);
    expect(textOf(m.page.body)).toContain('You are not in this server now.');
    const returned = await rejoin(m.browser, m.portalPath, m.page.body, m.roleTargetId, buyer);
    expect(returned.statusCode, returned.body).toBe(303);
    const next = String(returned.headers.location);
    expect(next).toMatch(/^\/portal\/[A-Za-z0-9_-]{32}\?done=joining$/);
    const joined = await m.browser.get(next);
    expect(joined.statusCode, joined.body).toBe(200);
    expect(textOf(joined.body)).toContain('we are adding you to the Discord server now');
    expect(textOf(joined.body)).toContain('We are adding you to this server now. Reload this page in a few seconds.');
    expect(joined.body).not.toContain(REJOIN);
    expect((await joinsOf(shop.t.projectId, buyer)).at(-1)).toMatchObject({ plan_id: null, guild_id: shop.guildId, state: 'pending' });

    await pass();
    expect(h.discord.oauth.joins.filter((j) => j === `${shop.guildId}:${buyer}`)).toHaveLength(2);
    expect((await joinsOf(shop.t.projectId, buyer)).at(-1)).toMatchObject({ guild_id: shop.guildId, state: 'joined', last_error: null });
    // The join made the member's rows due again: the access worker gives the role next.
    const reloaded = await m.browser.get(new URL(next, 'http://x').pathname);
    expect(textOf(reloaded.body)).toContain('Being set up: this takes a minute.');
    const [row] = rowsOf<{ state: string }>(await h.database.db.execute(sql`SELECT state FROM access WHERE target_id = ${m.roleTargetId} AND user_id = ${buyer}`));
    expect(row!.state).toBe('pending');
  });

  it('a server with two places of the member (the server and a role in it) offers one Rejoin', async () => {
    const shop = await webShop(h);
    const buyer = '193456789012345678';
    await memberWhoLeft(shop, buyer);
    const [guild] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${shop.t.projectId} AND kind = 'guild'`));
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${shop.t.projectId}, ${guild!.id}, ${buyer}, 'discord', 'guild', ${shop.guildId}, 'none', 'granted', 'waiting_for_member')`);
    const { page } = await openPortal(h, pathOf(await portalLink(shop.t, buyer)));
    expect(textOf(page.body).match(/You are not in this server now\./g)).toHaveLength(2);
    expect(page.body.match(/Rejoin the Discord server/g)).toHaveLength(1);
  });

  it('another Discord account coming back: 403, no token kept for it, no join queued', async () => {
    const shop = await webShop(h);
    const buyer = '143456789012345678';
    const m = await memberWhoLeft(shop, buyer);
    const before = await joinsOf(shop.t.projectId, buyer);
    const tokens = async () => rowsOf<{ user_id: string; access_token_sealed: string }>(await h.database.db.execute(sql`SELECT user_id, access_token_sealed FROM discord_member_tokens WHERE project_id = ${shop.t.projectId}`));
    const tokensBefore = await tokens();
    const other = '153456789012345678';
    const returned = await rejoin(m.browser, m.portalPath, m.page.body, m.roleTargetId, other);
    expect(returned.statusCode, returned.body).toBe(403);
    expect(headingOf(returned.body)).toBe('This is not the Discord account of your membership');
    expect(await joinsOf(shop.t.projectId, buyer)).toStrictEqual(before);
    expect(await joinsOf(shop.t.projectId, other)).toStrictEqual([]);
    expect(await tokens()).toStrictEqual(tokensBefore);
  });

  it.each([
    ['30001', 'your Discord account is in as many servers as Discord allows (100). Leave one, then press Rejoin again.', true, (shop: WebShop, user: string) => h.discord.oauth.tooManyGuilds(user)],
    ['40007', 'your Discord account is banned from this server. Please contact the community team', false, (shop: WebShop, user: string) => h.discord.oauth.bannedFrom(shop.guildId, user)],
    ['50013', 'the bot may not add members here (it needs the Create Invite permission). Please tell the community team', false, (shop: WebShop) => h.discord.oauth.allowInvites(shop.guildId, shop.bot.id, false)],
  ])('Discord refuses %s: the portal says what happened and what to do', async (code, words, canRetry, refuse) => {
    const shop = await webShop(h);
    const buyer = `16345678901234567${code.at(-1)}`;
    const m = await memberWhoLeft(shop, buyer);
    refuse(shop, buyer);
    const returned = await rejoin(m.browser, m.portalPath, m.page.body, m.roleTargetId, buyer);
    expect(returned.statusCode, returned.body).toBe(303);
    const next = String(returned.headers.location);
    expect((await m.browser.get(next)).statusCode).toBe(200);
    await pass();
    expect((await joinsOf(shop.t.projectId, buyer)).at(-1)).toMatchObject({ guild_id: shop.guildId, state: 'failed', last_error: expect.stringMatching(new RegExp(`^${code}:`)) });
    const after = await m.browser.get(new URL(next, 'http://x').pathname);
    expect(textOf(after.body)).toContain(`We could not add you: ${words}`);
    expect(after.body.includes(REJOIN)).toBe(canRetry);
  });

  it('the form needs its CSRF token and the session; a target not waiting for the member is not theirs to join; without a client secret no button', async () => {
    const shop = await webShop(h);
    const buyer = '173456789012345678';
    const m = await memberWhoLeft(shop, buyer);
    const action = `${m.portalPath}/discord-join/${m.roleTargetId}`;
    const logins = async () => rowsOf(await h.database.db.execute(sql`SELECT 1 FROM web_logins WHERE project_id = ${shop.t.projectId}`)).length;
    const before = await logins();
    expect((await m.browser.post(action, {})).statusCode).toBe(403);
    // Another browser, holding neither the CSRF cookie nor the session: refused.
    const stranger = new Browser(h);
    expect((await stranger.post(action, { _csrf: csrfOf(m.page.body)! })).statusCode).toBe(403);
    const [guild] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${shop.t.projectId} AND kind = 'guild'`));
    const notWaiting = await m.browser.post(`${m.portalPath}/discord-join/${guild!.id}`, { _csrf: csrfOf(m.page.body)! });
    expect(notWaiting.statusCode, notWaiting.body).toBe(404);
    expect(await logins()).toBe(before);

    const plain = await webShop(h, { clientSecret: false });
    const other = '183456789012345678';
    const created = await plain.t.request({ method: 'POST', url: `${plain.t.base}/memberships`, payload: { user_id: other, end_date: new Date(Date.now() + 30 * 86_400_000).toISOString() } });
    expect(created.statusCode, created.body).toBe(201);
    const [role] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${plain.t.projectId} AND kind = 'role'`));
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${plain.t.projectId}, ${role!.id}, ${other}, 'discord', 'role', ${plain.roleId}, 'remove_role', 'granted', 'waiting_for_member')`);
    const { page } = await openPortal(h, pathOf(await portalLink(plain.t, other)));
    expect(page.body).not.toContain(REJOIN);
    expect(textOf(page.body)).toContain('Join it with the invite link your community shares');
  });
});
