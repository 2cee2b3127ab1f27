import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { needBrowser } from '../support/browser.js';
import { checkPage, sentToStripe, serveApp, WIDTHS } from '../support/browser-pages.js';
import { webShop } from '../support/web.js';

/**
 * A member's whole way on the web in a real headless Chromium, with the app's own CSP in force and
 * no script (docs/web.md, docs/portal.md): the plan page → Buy with Discord → Login with Discord
 * (the fake Discord consents at once) → Stripe's checkout (asked for; the fake's session is paid) →
 * the done page → the worker runtime adds the member to the guild and the access worker grants the
 * role (the fake Discord's state) → "Manage your membership" → Login with Discord again → the
 * portal → the invoicing details (a refusal, then saved) → Cancel renewal (confirmed) and Resume →
 * cancelled again → "Cancelling: access until …" → Manage billing (to Stripe's billing portal, with
 * the details) → the member leaves the server → Rejoin the Discord server (Login with Discord, the
 * job adds them, the role follows). The portal's address opened in another browser is refused. Every page passes
 * axe-core's WCAG 2.1 A/AA rules and is saved at 390 and 1280 px under test-artifacts/web-walk/.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/web-walk/', import.meta.url));

const served = serveApp(ARTIFACTS);
let runtime: WorkerRuntime | undefined;
afterAll(async () => {
  await runtime?.stop();
});

const heading = (page: Page) => page.locator('h1').textContent();
const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);

describe('a member’s whole way on the web, in a browser', () => {
  it('plan page → Discord → Stripe → done → in the guild with the role → portal signed in with Discord → cancel → Manage billing', { timeout: 180_000 }, async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const shop = await webShop(served.h, { planName: 'Gold', projectName: 'The Night Owls', recurring: true });
    await shop.t.request({ method: 'PATCH', url: `${shop.t.base}/settings`, payload: { page_accent_color: '#0b6e4f' } });
    const buyer = '623456789012345678';
    served.h.discord.oauth.nextLogin = { userId: buyer };

    const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems: string[] = [];
    // A CSP refusal or a script error would show here; a 4xx page's own status is logged too, and is not one.
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));

    await page.goto(`${served.origin}/p/${shop.t.projectId}`);
    expect(await heading(page)).toBe('The Night Owls');
    await check(page, '01-plans');

    // Buy: the form posts, Discord consents, the callback sends the buyer to their pay link and on to Stripe.
    const checkoutUrl = await sentToStripe(page, 'checkout.stripe.com', () => page.getByRole('button', { name: 'Buy Gold with Discord' }).click());
    const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)$/.exec(checkoutUrl)?.[1];
    expect(sessionId, checkoutUrl).toBeDefined();
    const session = served.h.stripe.world.session(sessionId!);
    expect(session.metadata.user_id).toBe(buyer);
    expect(served.h.discord.oauth.logins).toContain(buyer);

    // Paid on Stripe's page; Stripe sends the member back to the done page, which applies the payment.
    served.h.stripe.world.pay(sessionId!);
    await page.goto(session.success_url as string);
    expect(await heading(page)).toBe('You are in!');
    expect(await page.locator('main').textContent()).toContain('We are adding you to the Discord server now');
    await check(page, '02-done-joining');

    runtime = await startWorkerRuntime(served.h.container, { pollMs: 200 });
    await expect.poll(() => served.h.discord.memberRoles(shop.guildId, buyer), { timeout: 20_000, interval: 200 }).toStrictEqual([shop.roleId]);
    expect(served.h.discord.oauth.joins).toContain(`${shop.guildId}:${buyer}`);
    // The page's Reload button: a link to itself, no script.
    await page.getByRole('link', { name: 'Reload' }).click();
    expect(await heading(page)).toBe('You are in!');
    expect(await page.locator('main').textContent()).toContain('You are in the Discord server now');
    await check(page, '03-done-joined');

    // Later: the plan page's "Manage your membership" → Login with Discord (identify) → the portal.
    served.h.discord.oauth.nextLogin = { userId: buyer };
    await page.goto(`${served.origin}/p/${shop.t.projectId}`);
    await page.getByRole('link', { name: 'Manage your membership' }).click();
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Manage your membership');
    await check(page, '04-sign-in');
    await page.getByRole('button', { name: 'Log in with Discord' }).click();
    await page.waitForURL(/\/portal\/[A-Za-z0-9_-]{32}$/);
    const portalUrl = page.url();
    expect(await heading(page)).toBe('Your memberships');
    const gold = page.getByRole('region', { name: 'Gold' });
    expect(await gold.textContent()).toContain('Renews on');
    await check(page, '05-portal');

    await page.getByRole('link', { name: 'Edit invoicing details' }).click();
    expect(await heading(page)).toBe('Invoicing details');
    await check(page, '06-invoicing-form');
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Company').fill('Analytical Engines GmbH');
    await page.getByLabel(/^VAT ID/).fill('DE 123 456 789');
    await page.getByLabel('Address line 1').fill('Hauptstraße 1');
    await page.getByLabel('Postal code').fill('10115');
    await page.getByLabel('City').fill('Berlin');
    await page.getByLabel(/^Country code/).fill('12');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('address.country must be an ISO 3166-1 alpha-2 country code');
    await check(page, '07-invoicing-refused');
    await page.getByLabel(/^Country code/).fill('DE');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Your invoicing details are saved');
    expect(await page.locator('.address').textContent()).toContain('VAT ID DE123456789');

    const subscriptionId = served.h.stripe.world.session(sessionId!).subscription!;
    await page.getByRole('link', { name: 'Cancel renewal' }).click();
    expect(await heading(page)).toBe('Cancel the renewal of Gold?');
    await check(page, '08-cancel-confirm');
    await page.getByRole('button', { name: 'Yes, cancel the renewal' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Your renewal is cancelled');
    expect(served.h.stripe.world.subscriptions.get(subscriptionId)!.cancel_at_period_end).toBe(true);

    await page.getByRole('link', { name: 'Resume renewal' }).click();
    expect(await heading(page)).toBe('Resume the renewal of Gold?');
    await check(page, '09-resume-confirm');
    await page.getByRole('button', { name: 'Yes, resume the renewal' }).click();
    expect(await gold.textContent()).toContain('Renews on');
    expect(served.h.stripe.world.subscriptions.get(subscriptionId)!.cancel_at_period_end).toBe(false);

    await page.getByRole('link', { name: 'Cancel renewal' }).click();
    await page.getByRole('button', { name: 'Yes, cancel the renewal' }).click();
    expect(await gold.textContent()).toMatch(/Cancelling: access until \d{1,2} \w{3} \d{4}/);
    await check(page, '10-cancelling');

    const billingUrl = await sentToStripe(page, 'billing.stripe.com', () => page.getByRole('button', { name: 'Manage billing' }).click());
    expect(billingUrl).toBe(served.h.stripe.portalSessions.at(-1)!.url);
    const customer = served.h.stripe.world.session(sessionId!).customer!;
    expect(served.h.stripe.customers.get(customer)).toMatchObject({ name: 'Ada Lovelace', business_name: 'Analytical Engines GmbH', address: { country: 'DE', city: 'Berlin' } });
    // Back from Stripe to the page, in the same browser.
    await page.goto(portalUrl);
    expect(await heading(page)).toBe('Your memberships');

    // The member leaves the server; the access engine finds them gone (its row waits for them).
    // The portal offers Rejoin: Login with Discord again, the job adds them, the role follows.
    served.h.discord.removeMember(shop.guildId, buyer);
    await served.h.database.db.execute(sql`
      UPDATE access SET state = 'waiting_for_member' WHERE project_id = ${shop.t.projectId} AND user_id = ${buyer} AND platform = 'discord' AND desired = 'granted'`);
    await page.goto(portalUrl);
    expect(await gold.textContent()).toContain('You are not in this server now.');
    await check(page, '12-rejoin');
    served.h.discord.oauth.nextLogin = { userId: buyer };
    await page.getByRole('button', { name: 'Rejoin the Discord server' }).click();
    await page.waitForURL(/\/portal\/[A-Za-z0-9_-]{32}\?done=joining$/);
    const rejoinedUrl = page.url().replace(/\?done=joining$/, '');
    expect(await page.getByRole('status').textContent()).toContain('we are adding you to the Discord server now');
    await check(page, '13-rejoin-joining');
    await expect.poll(() => served.h.discord.memberRoles(shop.guildId, buyer), { timeout: 20_000, interval: 200 }).toStrictEqual([shop.roleId]);
    // The role lands at Discord before the worker records it on the access row, which the page reads.
    await expect
      .poll(
        async () => {
          await page.goto(rejoinedUrl);
          return page.getByRole('region', { name: 'Gold' }).textContent();
        },
        { timeout: 20_000, interval: 300 },
      )
      .toContain('You are in.');
    await check(page, '14-rejoined');
    expect(problems).toStrictEqual([]);
    await context.close();

    // The portal's address in another browser (forwarded, stolen): refused.
    const stranger = await browser.newContext({ viewport: WIDTHS.phone });
    const other = await stranger.newPage();
    const refused = await other.goto(portalUrl);
    expect(refused?.status()).toBe(410);
    expect(await heading(other)).toBe('This link has been used');
    await check(other, '11-link-used');
    await stranger.close();
  });
});
