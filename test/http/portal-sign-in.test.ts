import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { headingOf } from '../support/front-desk.js';
import { future, useHarness, type Harness } from '../support/harness.js';
import { Browser, csrfOf, textOf } from '../support/portal.js';
import { authorize, callback, webShop, type WebShop } from '../support/web.js';

/**
 * Signing in to the portal with Discord (docs/portal.md, "Signing in with Discord"): the plan page's
 * "Manage your membership" → Log in with Discord (scope `identify`) → the callback → the member's
 * own portal link, opened at once by the same browser. And what refuses it.
 */

describe('Signing in to the portal with Discord', () => {
  const h = useHarness();

  async function member(shop: WebShop, userId: string, planName?: string, userName?: string) {
    if (planName !== undefined) {
      const res = await shop.t.request({ method: 'PATCH', url: `${shop.t.base}/plans/${shop.planId}`, payload: { plan_name: planName } });
      expect(res.statusCode, res.body).toBe(200);
    }
    const res = await shop.t.request({ method: 'POST', url: `${shop.t.base}/memberships`, payload: { user_id: userId, plan_id: shop.planId, end_date: future().iso, ...(userName ? { user_name: { first_name: userName, username: userName } } : {}) } });
    expect(res.statusCode, res.body).toBe(201);
  }

  /** The plan page's link → the sign-in page → its form posted: Discord's authorize URL. */
  async function startSignIn(h: Harness, browser: Browser, shop: WebShop) {
    const plans = await browser.get(`/p/${shop.t.projectId}`);
    const href = /Already a member\? <a href="([^"]+)">Manage your membership<\/a>/.exec(plans.body)?.[1];
    expect(href, plans.body).toBe(`/p/${shop.t.projectId}/portal`);
    const signIn = await browser.get(href!);
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(textOf(signIn.body)).toContain('Manage your membership');
    const res = await browser.post('/auth/discord/portal', { _csrf: csrfOf(signIn.body)!, project_id: shop.t.projectId });
    expect(res.statusCode, res.body).toBe(303);
    return new URL(res.headers.location as string);
  }

  it('a member: Discord (scope identify) → their portal link → the portal page in that browser, and no Discord token kept', async () => {
    const shop = await webShop(h);
    const discordId = '223456789012345678';
    await member(shop, discordId);
    h.discord.oauth.nextLogin = { userId: discordId };
    const browser = new Browser(h);
    const to = await startSignIn(h, browser, shop);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({ client_id: shop.bot.id, scope: 'identify', code_challenge_method: 'S256' });

    const back = await callback(h, await authorize(to.href), Object.fromEntries(browser.cookies));
    expect(back.statusCode, back.body).toBe(303);
    const portalPath = back.headers.location as string;
    expect(portalPath).toMatch(/^\/portal\/[A-Za-z0-9_-]{32}$/);
    const portal = await browser.get(portalPath);
    expect(portal.statusCode, portal.body).toBe(200);
    expect(headingOf(portal.body)).toBe('Your memberships');
    expect(textOf(portal.body)).toContain('Gold');
    // The session is the portal link's own: the page works again in this browser, and nowhere else.
    expect((await browser.get(portalPath)).statusCode).toBe(200);
    expect((await new Browser(h).get(portalPath)).statusCode).toBe(410);
    const tokens = rowsOf(await h.database.db.execute(sql`SELECT 1 FROM discord_member_tokens WHERE project_id = ${shop.t.projectId}`));
    expect(tokens).toStrictEqual([]);
  });

  it('a Discord account with no membership here gets a page saying so, with the plans, and no portal link', async () => {
    const shop = await webShop(h, { projectName: 'Chess <b>Club</b>' });
    const browser = new Browser(h);
    const to = await startSignIn(h, browser, shop);
    const back = await callback(h, await authorize(to.href), Object.fromEntries(browser.cookies));
    expect(back.statusCode, back.body).toBe(404);
    expect(headingOf(back.body)).toBe('No membership found');
    expect(back.body).toContain('We found no membership for this Discord account in Chess &lt;b&gt;Club&lt;/b&gt;.');
    expect(back.body).not.toContain('<b>Club');
    expect(back.body).toContain(`href="/p/${shop.t.projectId}"`);
    const links = rowsOf(await h.database.db.execute(sql`SELECT 1 FROM portal_links WHERE project_id = ${shop.t.projectId}`));
    expect(links).toStrictEqual([]);
  });

  it('a forged state, or the callback without this browser’s cookie, is refused (400) and opens no portal', async () => {
    const shop = await webShop(h);
    const discordId = '323456789012345678';
    await member(shop, discordId);
    h.discord.oauth.nextLogin = { userId: discordId };
    const browser = new Browser(h);
    const location = await authorize((await startSignIn(h, browser, shop)).href);
    const forged = new URL(location);
    forged.searchParams.set('state', 'A'.repeat(32));
    for (const [where, cookies] of [
      [forged.href, Object.fromEntries(browser.cookies)],
      [location, {}],
    ] as const) {
      const res = await callback(h, where, cookies);
      expect(res.statusCode, res.body).toBe(400);
      expect(headingOf(res.body)).toBe('This login did not start here');
    }
    const links = rowsOf(await h.database.db.execute(sql`SELECT 1 FROM portal_links WHERE project_id = ${shop.t.projectId}`));
    expect(links).toStrictEqual([]);
  });

  it('the sign-in form needs its CSRF token; an unknown project is a 404 page; no Discord login set up says to ask the bot', async () => {
    const shop = await webShop(h);
    const browser = new Browser(h);
    await browser.get(`/p/${shop.t.projectId}/portal`);
    const noToken = await browser.post('/auth/discord/portal', { project_id: shop.t.projectId });
    expect(noToken.statusCode, noToken.body).toBe(403);
    expect(rowsOf(await h.database.db.execute(sql`SELECT 1 FROM web_logins WHERE project_id = ${shop.t.projectId}`))).toStrictEqual([]);
    const unknown = await browser.get('/p/00000000-0000-4000-8000-000000000000/portal');
    expect(unknown.statusCode, unknown.body).toBe(404);
    const bare = await webShop(h, { clientSecret: false });
    const page = await new Browser(h).get(`/p/${bare.t.projectId}/portal`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).not.toContain('<form');
    expect(textOf(page.body)).toContain('/memberships on Discord, or /status on Telegram');
  });

  it('renders plan and user names with markup inert on the portal page', async () => {
    const shop = await webShop(h);
    const discordId = '423456789012345678';
    const payload = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    await member(shop, discordId, payload, payload);
    const named = await shop.t.request({ method: 'PATCH', url: `${shop.t.base}/users/${discordId}/invoicing`, payload: { name: payload, company: payload } });
    expect(named.statusCode, named.body).toBe(200);
    h.discord.oauth.nextLogin = { userId: discordId };
    const browser = new Browser(h);
    const back = await callback(h, await authorize((await startSignIn(h, browser, shop)).href), Object.fromEntries(browser.cookies));
    const portal = await browser.get(back.headers.location as string);
    expect(portal.statusCode, portal.body).toBe(200);
    expect(portal.body).not.toContain('<script>alert');
    expect(portal.body).not.toContain('<img src=x');
    expect(portal.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // The plan's name and the invoicing name and company: each shown, escaped.
    expect(portal.body.split('&lt;img src=x onerror=alert(2)&gt;').length - 1).toBeGreaterThanOrEqual(3);
  });

  it('a stolen portal link: the second browser to open it, and its forms, are refused', async () => {
    const shop = await webShop(h);
    const discordId = '523456789012345678';
    await member(shop, discordId);
    const link = await shop.t.request({ method: 'POST', url: `${shop.t.base}/users/${discordId}/portal-links` });
    expect(link.statusCode, link.body).toBe(200);
    const path = new URL(link.json().data.url as string).pathname;
    const owner = new Browser(h);
    const page = await owner.get(path);
    expect(page.statusCode, page.body).toBe(200);
    const thief = new Browser(h);
    const stolen = await thief.get(path);
    expect(stolen.statusCode, stolen.body).toBe(410);
    expect(headingOf(stolen.body)).toBe('This link has been used');
    // The thief posts the owner's form, token and all, without the owner's cookies: refused before anything runs.
    const sessions = h.stripe.portalSessions.length;
    const billing = await thief.post(`${path}/billing`, { _csrf: csrfOf(page.body)! });
    expect(billing.statusCode, billing.body).toBe(403);
    expect(h.stripe.portalSessions).toHaveLength(sessions);
    expect((await owner.get(path)).statusCode).toBe(200);
  });
});
