import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { headingOf } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { discordPath, telegramPath } from '../support/bots.js';
import { authorize, callback, callbackUrl, cookieHeader, loginThrough, plansPage, startLogin, webShop } from '../support/web.js';

/**
 * Login with Discord (docs/web.md): Buy → Discord's authorize page (the fake Discord) → the
 * callback → the buyer's own pay link; and every way it can go wrong, each a page saying what
 * happened and what to do.
 */

describe('Login with Discord', () => {
  const h = useHarness();
  const logins = async (projectId: string) => rowsOf(await h.database.db.execute(sql`SELECT state_hash FROM web_logins WHERE project_id = ${projectId}`));

  it('Buy → Discord (PKCE S256, state, our callback) → back: a pay link for the buyer’s Discord id, their token kept sealed', async () => {
    const shop = await webShop(h);
    const buyer = '123456789012345678';
    h.discord.oauth.nextLogin = { userId: buyer };
    const started = await startLogin(h, shop);
    expect(started.res.statusCode, started.res.body).toBe(303);
    const to = new URL(started.res.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(`${new URL(h.config.access.discordApiUrl).origin}/oauth2/authorize`);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: shop.bot.id,
      scope: 'identify guilds.join',
      redirect_uri: callbackUrl(h),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      state: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    const loginCookie = started.res.cookies.find((c) => c.name === 'tenure_login')!;
    expect(loginCookie).toMatchObject({ value: to.searchParams.get('state'), path: '/auth/discord/', httpOnly: true, sameSite: 'Lax', maxAge: 600 });
    // Only the state's digest is stored.
    expect(JSON.stringify(await logins(shop.t.projectId))).not.toContain(to.searchParams.get('state'));

    const back = await callback(h, await authorize(to.href), started.cookies);
    expect(back.statusCode, back.body).toBe(303);
    const payLinkId = /^\/pay\/([A-Za-z0-9_-]{32})$/.exec(back.headers.location as string)?.[1];
    expect(payLinkId, String(back.headers.location)).toBeDefined();
    expect(back.cookies.find((c) => c.name === 'tenure_login')?.value).toBe('');
    const link = await h.services.payLinks.find(shop.t.projectId, payLinkId!);
    expect(link).toMatchObject({ plan_id: shop.planId, user_id: buyer, open: true });
    const tokens = rowsOf<Record<string, string>>(await h.database.db.execute(sql`SELECT * FROM discord_member_tokens WHERE project_id = ${shop.t.projectId}`));
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ user_id: buyer, access_token_sealed: expect.stringMatching(/^v1\./), refresh_token_sealed: expect.stringMatching(/^v1\./) });
    expect(await logins(shop.t.projectId)).toStrictEqual([]);
  });

  it('a state used twice: the second answer is 410, and makes no second pay link', async () => {
    const shop = await webShop(h);
    const { res, location, cookies } = await loginThrough(h, shop);
    expect(res.statusCode, res.body).toBe(303);
    const again = await callback(h, location, cookies);
    expect(again.statusCode, again.body).toBe(410);
    expect(headingOf(again.body)).toBe('This login has already been used');
    const links = rowsOf(await h.database.db.execute(sql`SELECT 1 FROM pay_links WHERE project_id = ${shop.t.projectId}`));
    expect(links).toHaveLength(1);
  });

  it('a forged state, a state without the browser’s cookie, or another browser’s: 400, and the real login stays usable', async () => {
    const shop = await webShop(h);
    const started = await startLogin(h, shop);
    const location = await authorize(started.res.headers.location as string);
    const forged = new URL(location);
    forged.searchParams.set('state', 'A'.repeat(32));
    for (const [where, cookies] of [
      [forged.href, started.cookies],
      [location, {}],
      [location, { tenure_login: 'B'.repeat(32) }],
    ] as const) {
      const res = await callback(h, where, cookies);
      expect(res.statusCode, res.body).toBe(400);
      expect(headingOf(res.body)).toBe('This login did not start here');
    }
    expect((await callback(h, location, started.cookies)).statusCode).toBe(303);
  });

  it('an expired login (over 10 minutes): 410, nothing charged, back to the plans', async () => {
    const shop = await webShop(h);
    const started = await startLogin(h, shop);
    const location = await authorize(started.res.headers.location as string);
    await h.database.db.execute(sql`UPDATE web_logins SET expires_at = now() - interval '1 second' WHERE project_id = ${shop.t.projectId}`);
    const res = await callback(h, location, started.cookies);
    expect(res.statusCode, res.body).toBe(410);
    expect(headingOf(res.body)).toBe('This login has expired');
    expect(res.body).toContain(`href="/p/${shop.t.projectId}"`);
  });

  it('consent denied (error=access_denied): a page saying so, and no pay link', async () => {
    const shop = await webShop(h);
    h.discord.oauth.nextLogin = { deny: true };
    const { res, location } = await loginThrough(h, shop);
    expect(new URL(location).searchParams.get('error')).toBe('access_denied');
    expect(res.statusCode, res.body).toBe(403);
    expect(headingOf(res.body)).toBe('You did not allow the login');
    expect(rowsOf(await h.database.db.execute(sql`SELECT 1 FROM pay_links WHERE project_id = ${shop.t.projectId}`))).toStrictEqual([]);
  });

  it('the token exchange refused (invalid_grant), or a client secret Discord does not take: 502, no token kept', async () => {
    const shop = await webShop(h);
    h.discord.oauth.refuseExchanges = true;
    const refused = await loginThrough(h, shop);
    expect(refused.res.statusCode, refused.res.body).toBe(502);
    expect(headingOf(refused.res.body)).toBe('Discord did not accept the login');
    h.discord.oauth.refuseExchanges = false;
    h.discord.oauth.registerApplication(shop.bot.id, 'another-secret-entirely', [callbackUrl(h)]);
    const badClient = await loginThrough(h, shop);
    expect(badClient.res.statusCode, badClient.res.body).toBe(502);
    expect(rowsOf(await h.database.db.execute(sql`SELECT 1 FROM discord_member_tokens WHERE project_id = ${shop.t.projectId}`))).toStrictEqual([]);
  });

  it('no open redirect: a next or return parameter changes nothing; the only places sent to are Discord’s authorize page and our own pay link', async () => {
    const shop = await webShop(h);
    const page = await plansPage(h, shop.t.projectId);
    const start = await h.app.inject({
      method: 'POST',
      url: '/auth/discord/start?next=https://evil.example/',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(page.cookies) },
      payload: new URLSearchParams({ _csrf: page.csrf!, project_id: shop.t.projectId, plan_id: shop.planId, next: 'https://evil.example/', redirect_uri: 'https://evil.example/cb' }).toString(),
    });
    expect(start.statusCode, start.body).toBe(303);
    const to = new URL(start.headers.location as string);
    expect(to.searchParams.get('redirect_uri')).toBe(callbackUrl(h));
    const location = new URL(await authorize(to.href));
    location.searchParams.set('next', 'https://evil.example/');
    const back = await callback(h, location.href, { ...page.cookies, tenure_login: to.searchParams.get('state')! });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toMatch(/^\/pay\/[A-Za-z0-9_-]{32}$/);
  });

  it('the Buy form needs its CSRF token; a plan of another project or without a Discord target is not found', async () => {
    const shop = await webShop(h);
    const other = await webShop(h);
    const page = await plansPage(h, shop.t.projectId);
    const post = (fields: Record<string, string>) =>
      h.app.inject({ method: 'POST', url: '/auth/discord/start', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(page.cookies) }, payload: new URLSearchParams(fields).toString() });
    const noToken = await post({ project_id: shop.t.projectId, plan_id: shop.planId });
    expect(noToken.statusCode).toBe(403);
    expect(headingOf(noToken.body)).toBe('Please try again');
    const foreign = await post({ _csrf: page.csrf!, project_id: shop.t.projectId, plan_id: other.planId });
    expect(foreign.statusCode).toBe(404);
    expect(await logins(shop.t.projectId)).toStrictEqual([]);
  });

  it('client_secret on the Discord connection: sealed, never returned, shown as web_login; refused on Telegram or malformed', async () => {
    const shop = await webShop(h);
    const got = await shop.t.request({ method: 'GET', url: discordPath(shop.t) });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().data.web_login).toBe(true);
    expect(got.body).not.toContain(shop.clientSecret);
    const row = rowsOf<{ client_secret_sealed: string }>(await h.database.db.execute(sql`SELECT client_secret_sealed FROM integrations WHERE project_id = ${shop.t.projectId} AND platform = 'discord'`))[0]!;
    expect(row.client_secret_sealed).toMatch(/^v1\./);
    expect(row.client_secret_sealed).not.toContain(shop.clientSecret);
    // Reconnected without a secret: the same application keeps the one it had.
    expect((await shop.t.request({ method: 'PUT', url: discordPath(shop.t), payload: { bot_token: shop.bot.token } })).statusCode).toBe(200);
    expect((await shop.t.request({ method: 'GET', url: discordPath(shop.t) })).json().data.web_login).toBe(true);
    const malformed = await shop.t.request({ method: 'PUT', url: discordPath(shop.t), payload: { bot_token: shop.bot.token, client_secret: 'short' } });
    expect(malformed.statusCode, malformed.body).toBe(422);
    const telegram = await shop.t.request({ method: 'PUT', url: telegramPath(shop.t), payload: { bot_token: '1:x', client_secret: 'a'.repeat(32) } });
    expect(telegram.statusCode, telegram.body).toBe(422);
  });

  it('without a client secret the Buy button is not offered, and a forged start says Login with Discord is not set up', async () => {
    const shop = await webShop(h, { clientSecret: false });
    const started = await startLogin(h, shop).catch((err: unknown) => err);
    // The page has no form (no CSRF token) for a Discord plan then.
    expect(started).toBeInstanceOf(Error);
    const page = await plansPage(h, shop.t.projectId);
    expect(page.res.body).not.toContain('/auth/discord/start');
  });
});

describe('Login with Discord in the logs', () => {
  it('masks the callback’s code and state in the request line, and the client secret as a field', async () => {
    const { redactUrl, REDACT_PATHS } = await import('../../src/logger.js');
    expect(redactUrl('/auth/discord/callback?code=abc123&state=AbCdEfGhIjKlMnOpQrStUvWxYz012345')).toBe('/auth/discord/callback?code=[redacted]&state=[redacted]');
    expect(redactUrl('/auth/discord/callback?error=access_denied&state=xyz')).toBe('/auth/discord/callback?error=access_denied&state=[redacted]');
    expect(REDACT_PATHS).toContain('client_secret');
  });
});
