import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { redactUrl } from '../../src/logger.js';
import { addTelegramBot } from '../support/bots.js';
import { createMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { headingOf, openPage } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll } from '../support/payments.js';
import { telegramLoginPath, telegramLoginTraces, telegramShop, widgetAnswer, widgetCallback, widgetPageCookies } from '../support/web-telegram.js';
import { webShop } from '../support/web.js';

/**
 * Signing in with the Telegram Login Widget (docs/web.md, "Signing in with Telegram"), through the
 * real app: the widget on the plan page and the portal's sign-in page (and the Content-Security-Policy
 * that lets it in, there only), the callback's check of Telegram's signature (computed here from
 * the fake bot's token as Telegram documents it), its refusals, which change nothing, and the way
 * on: a pay link for the Telegram user → Stripe → a paid membership whose confirmation is queued
 * for the bot to send; or the member's portal.
 */

const STRICT_CSP = (discordOrigin: string) =>
  `default-src 'none';style-src 'self';img-src 'self' https:;form-action 'self' https://billing.stripe.com https://checkout.stripe.com ${discordOrigin};frame-ancestors 'none';base-uri 'none'`;

describe('the Telegram Login Widget on the plan page and the portal sign-in page', () => {
  const h = useHarness();
  const discordOrigin = () => new URL(h.config.access.discordApiUrl).origin;

  it('a Telegram plan shows the widget for the bot, with its own auth URL, write access asked, and the bot’s link as the fallback', async () => {
    const shop = await telegramShop(h, { planName: 'Lounge pass' });
    const res = await openPage(h, `/p/${shop.t.projectId}`);
    expect(res.statusCode, res.body).toBe(200);
    const authUrl = `${h.config.frontDesk.publicUrl}${telegramLoginPath(shop.t.projectId, shop.planId)}`;
    expect(res.body).toContain(
      `<script async src="https://telegram.org/js/telegram-widget.js?22" data-telegram-login="${shop.bot.username}" data-size="large" data-auth-url="${authUrl}" data-request-access="write"></script>`,
    );
    expect(res.body).toContain(`href="https://t.me/${shop.bot.username}"`);
    expect(res.body).toContain('No Telegram button above? <a href="https://t.me/' + shop.bot.username + '">Buy Lounge pass on Telegram</a>');
    // Exactly what the widget needs: its script and its frame; the rest as strict as every page's.
    expect(res.headers['content-security-policy']).toBe(`${STRICT_CSP(discordOrigin())};script-src https://telegram.org;frame-src https://oauth.telegram.org`);
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin-allow-popups');
  });

  it('the portal sign-in page shows the widget leading to the portal, and the bot’s link', async () => {
    const shop = await telegramShop(h);
    const res = await openPage(h, `/p/${shop.t.projectId}/portal`);
    expect(res.statusCode, res.body).toBe(200);
    const authUrl = `${h.config.frontDesk.publicUrl}${telegramLoginPath(shop.t.projectId)}`;
    expect(res.body).toContain(`data-telegram-login="${shop.bot.username}" data-size="large" data-auth-url="${authUrl}" data-request-access="write"`);
    expect(res.body).toContain(`<a href="https://t.me/${shop.bot.username}">our Telegram bot</a>`);
    expect(res.headers['content-security-policy']).toBe(`${STRICT_CSP(discordOrigin())};script-src https://telegram.org;frame-src https://oauth.telegram.org`);
  });

  it('without a Telegram bot no page has the widget, and every page keeps the strict policy', async () => {
    const shop = await webShop(h);
    for (const path of [`/p/${shop.t.projectId}`, `/p/${shop.t.projectId}/portal`, '/', '/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await openPage(h, path);
      expect(res.body, path).not.toContain('telegram-widget.js');
      expect(res.headers['content-security-policy'], path).toBe(STRICT_CSP(discordOrigin()));
      expect(res.headers['cross-origin-opener-policy'], path).toBe('same-origin');
    }
  });
});

describe('GET /p/{project_id}/telegram/login/{plan_id}: buying after the widget', () => {
  const h = useHarness();

  it('a genuine answer makes the Telegram user’s pay link → Stripe; once paid, their confirmation is queued for the bot', async () => {
    const shop = await telegramShop(h);
    const buyer = h.telegram.addUser({ first_name: 'Ada', username: 'ada_l' });
    const answer = widgetAnswer(shop.bot.token, { id: buyer.id, first_name: 'Ada', last_name: 'Lovelace', username: 'ada_l', photo_url: 'https://t.me/i/userpic/320/ada.jpg' });
    const res = await widgetCallback(h, telegramLoginPath(shop.t.projectId, shop.planId), answer);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(/^\/pay\/[A-Za-z0-9_-]{32}$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await telegramLoginTraces(h, shop.t.projectId)).payLinks).toStrictEqual([{ user_id: String(buyer.id), plan_id: shop.planId }]);

    const open = await openPage(h, res.headers.location as string);
    expect(open.statusCode, open.body).toBe(303);
    const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(open.headers.location as string)![1]!;
    expect(h.stripe.world.session(sessionId).metadata.user_id).toBe(String(buyer.id));
    await deliverAll(h, shop.stripe, h.stripe.world.pay(sessionId));

    const [membership] = rowsOf<{ user_id: string; status: string }>(await h.database.db.execute(sql`SELECT user_id, status FROM memberships WHERE project_id = ${shop.t.projectId}`));
    expect(membership).toStrictEqual({ user_id: String(buyer.id), status: 'active' });
    // The bot sends it (with the invite) as for a member who bought in the chat (docs/front-desk.md, "Confirmations").
    const queued = rowsOf(await h.database.db.execute(sql`SELECT user_id, platform, kind, state FROM notifications WHERE project_id = ${shop.t.projectId}`));
    expect(queued).toStrictEqual([{ user_id: String(buyer.id), platform: 'telegram', kind: 'confirmation', state: 'pending' }]);
  });

  it('the same answer opened again is refused (410) and makes no second pay link', async () => {
    const shop = await telegramShop(h);
    const answer = widgetAnswer(shop.bot.token, { id: 5_550_001 });
    const path = telegramLoginPath(shop.t.projectId, shop.planId);
    expect((await widgetCallback(h, path, answer)).statusCode).toBe(303);
    const again = await widgetCallback(h, path, answer);
    expect(again.statusCode, again.body).toBe(410);
    expect(headingOf(again.body)).toBe('This login has already been used');
    expect(again.body).toContain(`href="/p/${shop.t.projectId}"`);
    expect(await telegramLoginTraces(h, shop.t.projectId)).toMatchObject({ payLinks: [{ user_id: '5550001' }], used: 1 });
  });

  it('refuses what Telegram did not sign, or not lately, each with a page saying what to do; nothing is written', async () => {
    const shop = await telegramShop(h);
    const path = telegramLoginPath(shop.t.projectId, shop.planId);
    const other = addTelegramBot(h.telegram);
    const added = widgetAnswer(shop.bot.token, { id: 77 });
    added.set('plan_id', shop.planId);
    const changed = widgetAnswer(shop.bot.token, { id: 77 });
    changed.set('id', '78');
    const noHash = widgetAnswer(shop.bot.token, { id: 77 });
    noHash.delete('hash');
    const cases: [string, URLSearchParams, number, string][] = [
      ['signed with another bot’s token', widgetAnswer(other.token, { id: 77 }), 400, 'We could not check this login'],
      ['a field added', added, 400, 'We could not check this login'],
      ['the id changed', changed, 400, 'We could not check this login'],
      ['no hash', noHash, 400, 'We could not check this login'],
      ['no answer at all', new URLSearchParams(), 400, 'We could not check this login'],
      ['11 minutes old', widgetAnswer(shop.bot.token, { id: 77 }, new Date(Date.now() - 11 * 60_000)), 410, 'This login has expired'],
      ['dated 5 minutes ahead', widgetAnswer(shop.bot.token, { id: 77 }, new Date(Date.now() + 5 * 60_000)), 410, 'This login has expired'],
    ];
    for (const [what, query, status, title] of cases) {
      const res = await widgetCallback(h, path, query);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expect(res.headers['content-type'], what).toMatch(/^text\/html/);
      expect(headingOf(res.body), what).toBe(title);
      expect(res.body, what).toContain('Nothing was charged');
    }
    expect(await telegramLoginTraces(h, shop.t.projectId)).toStrictEqual({ payLinks: [], used: 0 });
  });

  it('a plan that is not the project’s, or not sold on Telegram, a project without a bot, and an unknown project are refused pages', async () => {
    const shop = await telegramShop(h);
    const answer = () => widgetAnswer(shop.bot.token, { id: 4242 });
    const discordOnly = await webShop(h);
    const notTelegram = await createPlan(shop.t, { plan_name: 'Nothing on Telegram' });
    const cases: [string, string, number, string][] = [
      ['another project’s plan', telegramLoginPath(shop.t.projectId, discordOnly.planId), 404, 'Plan not found'],
      ['a plan granting nothing on Telegram', telegramLoginPath(shop.t.projectId, notTelegram.plan_id), 404, 'Plan not found'],
      ['not a plan id', `/p/${shop.t.projectId}/telegram/login/gold`, 404, 'Page not found'],
      ['a project without a Telegram bot', telegramLoginPath(discordOnly.t.projectId, discordOnly.planId), 409, 'Log in with Telegram is not set up'],
      ['an unknown project', telegramLoginPath('0b6e4f00-0000-4000-8000-000000000000', shop.planId), 404, 'Page not found'],
    ];
    for (const [what, path, status, title] of cases) {
      const res = await widgetCallback(h, path, answer());
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expect(headingOf(res.body), what).toBe(title);
    }
    expect(await telegramLoginTraces(h, shop.t.projectId)).toStrictEqual({ payLinks: [], used: 0 });
    expect(await telegramLoginTraces(h, discordOnly.t.projectId)).toStrictEqual({ payLinks: [], used: 0 });
  });

  it('a banned Telegram user gets "This plan cannot be bought right now" (409) and no pay link', async () => {
    const shop = await telegramShop(h);
    const ban = await shop.t.request({ method: 'PUT', url: `${shop.t.base}/ban/3131`, payload: {} });
    expect(ban.statusCode, ban.body).toBeLessThan(300);
    const res = await widgetCallback(h, telegramLoginPath(shop.t.projectId, shop.planId), widgetAnswer(shop.bot.token, { id: 3131 }));
    expect(res.statusCode, res.body).toBe(409);
    expect(headingOf(res.body)).toBe('This plan cannot be bought right now');
    expect((await telegramLoginTraces(h, shop.t.projectId)).payLinks).toStrictEqual([]);
  });

  it('the widget’s pages leave an intent cookie: HTTP-only, Lax, ten minutes, sent only to the project’s callback', async () => {
    const shop = await telegramShop(h);
    const plans = await openPage(h, `/p/${shop.t.projectId}`);
    expect(plans.cookies.find((c) => c.name === 'tenure_tg_plans')).toMatchObject({ path: `/p/${shop.t.projectId}/telegram/login/`, httpOnly: true, sameSite: 'Lax', maxAge: 600 });
    const portal = await openPage(h, `/p/${shop.t.projectId}/portal`);
    expect(portal.cookies.find((c) => c.name === 'tenure_tg_portal')).toMatchObject({ path: `/p/${shop.t.projectId}/telegram/login`, httpOnly: true, sameSite: 'Lax', maxAge: 600 });
    // Behind http (the test's TENURE_PUBLIC_URL) not Secure; behind https it is, as every cookie of the pages.
    expect(plans.cookies.find((c) => c.name === 'tenure_tg_plans')?.secure).toBeUndefined();
    // No widget, no intent.
    const discordOnly = await webShop(h);
    expect((await openPage(h, `/p/${discordOnly.t.projectId}`)).cookies.map((c) => c.name)).not.toContain('tenure_tg_plans');
  });

  it('a genuine answer opened in a browser that never showed the widget (login CSRF) is refused, 400, and nothing is written', async () => {
    const shop = await telegramShop(h);
    const other = await telegramShop(h);
    const path = telegramLoginPath(shop.t.projectId, shop.planId);
    const intent = await widgetPageCookies(h, path);
    expect(intent).toMatch(/^tenure_tg_plans=/);
    const [name, value] = intent.split('=') as [string, string];
    const [id, purpose, expiry, mac] = value.split('.') as [string, string, string, string];
    const cases: [string, string][] = [
      ['no cookie at all', ''],
      ['another project’s intent', await widgetPageCookies(h, telegramLoginPath(other.t.projectId, other.planId))],
      ['the portal’s intent, sent under the plans’ name', `${name}=${(await widgetPageCookies(h, telegramLoginPath(shop.t.projectId))).split('=')[1]}`],
      ['its expiry moved on', `${name}=${id}.${purpose}.${Number(expiry) + 3600}.${mac}`],
      ['its mac changed', `${name}=${id}.${purpose}.${expiry}.${mac.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`],
      ['an intent written by hand', `${name}=${id}.${purpose}.${expiry}`],
    ];
    for (const [what, cookie] of cases) {
      // A fresh answer each time, as an attacker would fetch for themselves.
      const res = await widgetCallback(h, path, widgetAnswer(shop.bot.token, { id: 666 }), { cookie });
      expect(res.statusCode, `${what}: ${res.body}`).toBe(400);
      expect(headingOf(res.body), what).toBe('This login did not start here');
      expect(res.body, what).toContain('Go back to the plans page in this browser');
      expect(res.body, what).toContain(`href="/p/${shop.t.projectId}"`);
    }
    // The portal's sign-in, the same.
    const member = h.telegram.addUser();
    await createMembership(shop.t, { userId: String(member.id), planId: shop.planId });
    const portal = await widgetCallback(h, telegramLoginPath(shop.t.projectId), widgetAnswer(shop.bot.token, { id: member.id }), { cookie: intent.replace('tenure_tg_plans', 'tenure_tg_portal') });
    expect(portal.statusCode, portal.body).toBe(400);
    expect(headingOf(portal.body)).toBe('This login did not start here');
    expect(portal.headers.location).toBeUndefined();
    expect(await telegramLoginTraces(h, shop.t.projectId)).toStrictEqual({ payLinks: [], used: 0 });
    // The same browser, once it opened the plan page, goes on.
    expect((await widgetCallback(h, path, widgetAnswer(shop.bot.token, { id: 666 }), { cookie: intent })).statusCode).toBe(303);
  });

  it('the request log masks the answer’s hash', () => {
    expect(redactUrl('/p/x/telegram/login?id=1&first_name=Ada&auth_date=1&hash=abc')).toBe('/p/x/telegram/login?id=1&first_name=Ada&auth_date=[redacted]&hash=[redacted]');
  });
});

describe('GET /p/{project_id}/telegram/login: signing in to the portal with Telegram', () => {
  const h = useHarness();

  it('a member is sent to a portal link of their own, which this browser opens; the page is theirs', async () => {
    const shop = await telegramShop(h);
    const member = h.telegram.addUser();
    await createMembership(shop.t, { userId: String(member.id), planId: shop.planId });
    const res = await widgetCallback(h, telegramLoginPath(shop.t.projectId), widgetAnswer(shop.bot.token, { id: member.id }));
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(/^\/portal\/[A-Za-z0-9_-]{32}$/);
    const portal = await openPage(h, res.headers.location as string);
    expect(portal.statusCode, portal.body).toBe(200);
    expect(headingOf(portal.body)).toBe('Your memberships');
    expect(portal.body).toContain('Lounge pass');
  });

  it('a Telegram account without a membership gets "No membership found" (404) with the plans, escaping the project’s name', async () => {
    const shop = await telegramShop(h, { projectName: '<script>alert(1)</script> Owls' });
    const res = await widgetCallback(h, telegramLoginPath(shop.t.projectId), widgetAnswer(shop.bot.token, { id: 9_090_909 }));
    expect(res.statusCode, res.body).toBe(404);
    expect(headingOf(res.body)).toBe('No membership found');
    expect(res.body).toContain('We found no membership for this Telegram account in &lt;script&gt;alert(1)&lt;/script&gt; Owls.');
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).toContain(`href="/p/${shop.t.projectId}"`);
  });
});
