import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { useHarness } from '../support/harness.js';
import { headingOf, openPage, pathOf, payLink } from '../support/front-desk.js';
import { deliverAll } from '../support/payments.js';
import { textOf } from '../support/portal.js';
import { checkoutAfterLogin, cookieHeader, cookiesOf, guildJoinPasses, plansPage, webShop, type WebShop } from '../support/web.js';

/**
 * docs/web.md, "When a plan cannot be bought": a plan whose access the bot cannot give now (its bot
 * missing or unhealthy, one of its targets unhealthy, the last guild join refused for want of
 * Create Invite) offers no way to pay on the plan page, refuses Buy with Discord, and its pay links
 * make no Checkout Session: the buyer reads that it cannot be bought right now, and nothing is
 * charged. Read from what the access engine and the guild joins recorded: no call to the platform.
 */
describe('a plan whose access cannot be given is not sold', () => {
  const h = useHarness();
  const pass = guildJoinPasses(h);
  const CANNOT = 'This plan cannot be bought right now';
  const logins = async (projectId: string) => rowsOf(await h.database.db.execute(sql`SELECT 1 FROM web_logins WHERE project_id = ${projectId}`)).length;

  /** The Buy form posted anyway (a page kept open from before): its CSRF token from the sign-in page's form, the same cookie. */
  async function buyAnyway(shop: WebShop) {
    const signIn = await h.app.inject({ method: 'GET', url: `/p/${shop.t.projectId}/portal`, headers: { accept: 'text/html' } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(signIn.body)![1]!;
    return h.app.inject({
      method: 'POST',
      url: '/auth/discord/start',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(cookiesOf(signIn)) },
      payload: new URLSearchParams({ _csrf: csrf, project_id: shop.t.projectId, plan_id: shop.planId }).toString(),
    });
  }

  /** What the buyer meets: the Buy form's answer, and a pay link's (made by the API, as a bot would). */
  async function refusedEverywhere(shop: WebShop) {
    const started = { res: await buyAnyway(shop) };
    expect(started.res.statusCode, started.res.body).toBe(409);
    expect(headingOf(started.res.body)).toBe(CANNOT);
    expect(await logins(shop.t.projectId)).toBe(0);
    const sessions = h.stripe.calls.filter((c) => c.path === '/v1/checkout/sessions').length;
    const link = await payLink(shop.t, shop.planId, '823456789012345678');
    const opened = await openPage(h, pathOf(link.url));
    expect(opened.statusCode, opened.body).toBe(409);
    expect(headingOf(opened.body)).toBe(CANNOT);
    expect(h.stripe.calls.filter((c) => c.path === '/v1/checkout/sessions')).toHaveLength(sessions);
  }

  it('a healthy plan is sold; an unhealthy target (the bot lacks a right there) stops it on the page, at Buy and at the pay link', async () => {
    const healthy = await webShop(h);
    expect((await plansPage(h, healthy.t.projectId)).res.body).toContain('Buy Gold with Discord');

    const shop = await webShop(h);
    await h.database.db.execute(sql`
      UPDATE targets SET health = 'unhealthy', health_error = '{"code": "50013", "message": "Missing Permissions"}'::jsonb WHERE project_id = ${shop.t.projectId} AND kind = 'role'`);
    const page = await plansPage(h, shop.t.projectId);
    expect(page.res.body).not.toContain('Buy Gold with Discord');
    expect(textOf(page.res.body)).toContain(`${CANNOT}: the community’s bot cannot give its access at the moment. Nothing is charged.`);
    await refusedEverywhere(shop);
    // The owner fixes it (any change to the target, as docs/access-discord.md says): sold again.
    await h.database.db.execute(sql`UPDATE targets SET health = 'ok', health_error = NULL, updated_at = now() WHERE project_id = ${shop.t.projectId}`);
    expect((await buyAnyway(shop)).statusCode).toBe(303);
  });

  it('the Discord bot unhealthy (its token refused) stops the plan', async () => {
    const shop = await webShop(h);
    await h.database.db.execute(sql`UPDATE integrations SET health = 'unhealthy', last_error = '{"code": "unauthorized", "message": "401: Unauthorized"}'::jsonb WHERE project_id = ${shop.t.projectId}`);
    expect((await plansPage(h, shop.t.projectId)).res.body).toContain(CANNOT);
    await refusedEverywhere(shop);
  });

  it('a guild join refused 50013 (no Create Invite) stops the plan until a target of it changes', async () => {
    const shop = await webShop(h);
    h.discord.oauth.allowInvites(shop.guildId, shop.bot.id, false);
    const { sessionId } = await checkoutAfterLogin(h, shop, '923456789012345678');
    await deliverAll(h, shop.stripe, h.stripe.world.pay(sessionId));
    await pass();
    const [join] = rowsOf<{ state: string; last_error: string }>(await h.database.db.execute(sql`SELECT state, last_error FROM guild_joins WHERE project_id = ${shop.t.projectId}`));
    expect(join).toMatchObject({ state: 'failed', last_error: expect.stringMatching(/^50013:/) });
    await refusedEverywhere(shop);
    // Given the permission, the owner updates the plan's target (PATCH, any change): the plan is sold again.
    h.discord.oauth.allowInvites(shop.guildId, shop.bot.id, true);
    const [role] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${shop.t.projectId} AND kind = 'role'`));
    const patched = await shop.t.request({ method: 'PATCH', url: `${shop.t.base}/targets/${role!.id}`, payload: { target_name: 'VIP' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await buyAnyway(shop)).statusCode).toBe(303);
  });
});
