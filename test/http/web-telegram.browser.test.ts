import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { needBrowser } from '../support/browser.js';
import { checkPage, sentToStripe, serveApp, WIDTHS } from '../support/browser-pages.js';
import { telegramLoginPath, telegramShop, widgetAnswer } from '../support/web-telegram.js';

/**
 * Signing in with the Telegram Login Widget in a real headless Chromium, with the app's own CSP in
 * force (docs/web.md, "Signing in with Telegram"). The browser cannot reach telegram.org: the
 * widget's script is asked for (so the page's policy lets it in) and fails, and the page must still
 * read right, with the bot's link to fall back on. Telegram's redirect back is then followed
 * directly, with an answer signed here with the fake bot's token as Telegram documents it: the plan
 * page → the callback → the pay link → Stripe (paid) → the done page, the confirmation queued for the
 * bot; the portal's sign-in page → the callback → the portal; the same answer again refused. Every
 * page passes axe-core's WCAG 2.1 A/AA rules and is saved at 390 and 1280 px under
 * test-artifacts/web-telegram/.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/web-telegram/', import.meta.url));
const WIDGET_SCRIPT = 'https://telegram.org/js/telegram-widget.js?22';

const served = serveApp(ARTIFACTS);

const heading = (page: Page) => page.locator('h1').textContent();
const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);

describe('signing in with Telegram, in a browser', () => {
  it('plan page (widget) → callback → Stripe → done, the confirmation queued; portal sign-in (widget) → callback → portal; a used answer refused', { timeout: 120_000 }, async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const shop = await telegramShop(served.h, { planName: 'Lounge pass', projectName: 'The Night Owls', recurring: true });
    const buyer = served.h.telegram.addUser({ first_name: 'Ada', username: 'ada_l' });

    const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
    const widgetRequests: string[] = [];
    // telegram.org is not reachable from here: the script's request fails at once, as it would offline.
    await context.route('https://telegram.org/**', async (route) => {
      widgetRequests.push(route.request().url());
      await route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    const problems: string[] = [];
    // A CSP refusal or a script error would show here; a failed load (the widget's, a 4xx page's status) is not one.
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));

    await page.goto(`${served.origin}/p/${shop.t.projectId}`);
    expect(await heading(page)).toBe('The Night Owls');
    const widget = page.locator('script[data-telegram-login]');
    expect(await widget.getAttribute('data-telegram-login')).toBe(shop.bot.username);
    expect(await widget.getAttribute('data-request-access')).toBe('write');
    const buyUrl = await widget.getAttribute('data-auth-url');
    expect(buyUrl).toBe(`${served.origin}${telegramLoginPath(shop.t.projectId, shop.planId)}`);
    // The policy let the browser ask for Telegram's script.
    expect(widgetRequests).toStrictEqual([WIDGET_SCRIPT]);
    expect(await page.getByRole('link', { name: 'Buy Lounge pass on Telegram' }).getAttribute('href')).toBe(`https://t.me/${shop.bot.username}`);
    await check(page, '01-plans');

    // Telegram's redirect back after the member confirmed: their pay link, then Stripe's checkout.
    // Telegram dates a confirmation in whole seconds: the later login's date is set from this one's,
    // so the two never share a second (the same second would be the same answer, refused as used).
    const firstDate = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
    const answer = widgetAnswer(shop.bot.token, { id: buyer.id, first_name: 'Ada', username: 'ada_l' }, firstDate);
    const checkoutUrl = await sentToStripe(page, 'checkout.stripe.com', () => page.goto(`${buyUrl}?${answer.toString()}`));
    const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)$/.exec(checkoutUrl)?.[1];
    expect(sessionId, checkoutUrl).toBeDefined();
    const session = served.h.stripe.world.session(sessionId!);
    expect(session.metadata.user_id).toBe(String(buyer.id));

    // Paid; Stripe sends the member back to the done page, which applies the payment.
    served.h.stripe.world.pay(sessionId!);
    await page.goto(session.success_url as string);
    expect(await heading(page)).toBe('You are in!');
    await check(page, '02-done');
    // The bot sends the confirmation (and the invite) by private message, as for a chat buyer.
    const queued = rowsOf(await served.h.database.db.execute(sql`SELECT user_id, platform, kind FROM notifications WHERE project_id = ${shop.t.projectId}`));
    expect(queued).toStrictEqual([{ user_id: String(buyer.id), platform: 'telegram', kind: 'confirmation' }]);

    // Later: "Manage your membership" → the widget again, for the portal.
    await page.goto(`${served.origin}/p/${shop.t.projectId}`);
    await page.getByRole('link', { name: 'Manage your membership' }).click();
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Manage your membership');
    const signInUrl = await page.locator('script[data-telegram-login]').getAttribute('data-auth-url');
    expect(signInUrl).toBe(`${served.origin}${telegramLoginPath(shop.t.projectId)}`);
    expect(await page.getByRole('link', { name: 'our Telegram bot' }).getAttribute('href')).toBe(`https://t.me/${shop.bot.username}`);
    await check(page, '03-sign-in');

    // A new login, a second later than the first (Telegram signs each confirmation with its own date).
    const signIn = widgetAnswer(shop.bot.token, { id: buyer.id, first_name: 'Ada', username: 'ada_l' }, new Date(firstDate.getTime() + 1000));
    await page.goto(`${signInUrl}?${signIn.toString()}`);
    await page.waitForURL(/\/portal\/[A-Za-z0-9_-]{32}$/);
    expect(await heading(page)).toBe('Your memberships');
    expect(await page.getByRole('region', { name: 'Lounge pass' }).textContent()).toContain('Renews on');
    await check(page, '04-portal');

    // The same answer again (a reload of the callback, a copied address): refused.
    const again = await page.goto(`${signInUrl}?${signIn.toString()}`);
    expect(again?.status()).toBe(410);
    expect(await heading(page)).toBe('This login has already been used');
    await check(page, '05-login-used');
    expect(problems).toStrictEqual([]);
    await context.close();
  });
});
