import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeChromium, launchChromium, needBrowser, type LaunchedChromium } from '../support/browser.js';
import { payLinkStarted, portalLinksPath } from '../support/front-desk.js';
import { createHarness, type Harness } from '../support/harness.js';
import { deliverAll } from '../support/payments.js';

/**
 * The member portal in a real headless Chromium (docs/portal.md), with the app's own CSP in force
 * and no script: a portal link, the renewal cancelled through its confirmation and resumed, the
 * invoicing details edited (a refusal, then saved), and Manage billing to Stripe with them. Every
 * page passes axe-core's WCAG 2.1 A/AA rules and is saved at a phone's width (390 px) and a
 * desktop's (1280 px) under test-artifacts/portal/ (not committed) for a person to look at.
 */

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/portal/', import.meta.url));
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let h: Harness;
let origin: string;
let launched: LaunchedChromium | undefined;
beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  h = await createHarness({ env: { TENURE_PUBLIC_URL: origin } });
  await h.app.listen({ port, host: '127.0.0.1' });
  launched = await launchChromium(CHROMIUM_ARGS);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await closeChromium(launched);
  await h?.close();
});

/** axe-core's WCAG 2.1 A and AA rules at each width (run through the devtools protocol, so the CSP stays on), and a screenshot of each. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    await page.setViewportSize(viewport);
    await page.evaluate(axe.source);
    const options = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } };
    const result = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
    const violations = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    expect(violations, `${name} at ${width}`).toStrictEqual([]);
    // Nothing wider than the screen: a phone never scrolls sideways.
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name} at ${width}`).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}${name}-${width}.png`, fullPage: true });
  }
}

describe('the member portal in a browser', () => {
  it('cancel and resume the renewal, edit the invoicing details, Manage billing', { timeout: 180_000 }, async (ctx) => {
    const browser = needBrowser(launched, ctx);
    const { link, user, t, stripe } = await payLinkStarted(h, { recurring: true });
    const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems: string[] = [];
    // A CSP refusal or a script error would show here; a 4xx page's own status is logged too, and is not one.
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));

    // The member pays (Stripe's pages are not on this machine: the fake's session is paid directly).
    const opened = await h.app.inject({ method: 'GET', url: new URL(link.url).pathname });
    const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(String(opened.headers.location))![1]!;
    await deliverAll(h, stripe, h.stripe.world.pay(sessionId));
    const subscriptionId = h.stripe.world.session(sessionId).subscription!;
    const portal = (await t.request({ method: 'POST', url: portalLinksPath(t, user) })).json().data as { url: string };

    await page.goto(portal.url);
    expect(await page.locator('h1').textContent()).toBe('Your memberships');
    const gold = page.getByRole('region', { name: 'Gold' });
    expect(await gold.textContent()).toContain('Renews on');
    await checkPage(page, '1-portal');

    await page.getByRole('link', { name: 'Cancel renewal' }).click();
    expect(await page.locator('h1').textContent()).toBe('Cancel the renewal of Gold?');
    await checkPage(page, '2-cancel-confirm');
    await page.getByRole('button', { name: 'Yes, cancel the renewal' }).click();
    expect(await page.locator('h1').textContent()).toBe('Your memberships');
    expect(await page.getByRole('status').textContent()).toContain('Your renewal is cancelled');
    expect(await gold.textContent()).toMatch(/Cancelling: access until/);
    expect(h.stripe.world.subscriptions.get(subscriptionId)!.cancel_at_period_end).toBe(true);
    await checkPage(page, '3-cancelling');

    await page.getByRole('link', { name: 'Resume renewal' }).click();
    expect(await page.locator('h1').textContent()).toBe('Resume the renewal of Gold?');
    await checkPage(page, '4-resume-confirm');
    await page.getByRole('button', { name: 'Yes, resume the renewal' }).click();
    expect(await gold.textContent()).toContain('Renews on');
    expect(h.stripe.world.subscriptions.get(subscriptionId)!.cancel_at_period_end).toBe(false);

    await page.getByRole('link', { name: 'Edit invoicing details' }).click();
    expect(await page.locator('h1').textContent()).toBe('Invoicing details');
    await checkPage(page, '5-invoicing-form');
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Company').fill('Analytical Engines GmbH');
    await page.getByLabel(/^VAT ID/).fill('DE 123 456 789');
    await page.getByLabel('Address line 1').fill('Hauptstraße 1');
    await page.getByLabel('Postal code').fill('10115');
    await page.getByLabel('City').fill('Berlin');
    await page.getByLabel(/^Country code/).fill('12');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('address.country must be an ISO 3166-1 alpha-2 country code');
    await checkPage(page, '6-invoicing-refused');
    await page.getByLabel(/^Country code/).fill('DE');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Your invoicing details are saved');
    expect(await page.locator('.address').textContent()).toContain('VAT ID DE123456789');
    await checkPage(page, '7-portal-invoicing-saved');

    const request = page.waitForRequest((r) => r.url().startsWith('https://billing.stripe.com/'));
    await page.getByRole('button', { name: 'Manage billing' }).click().catch(() => undefined);
    expect((await request).url()).toBe(h.stripe.portalSessions.at(-1)!.url);
    const customer = h.stripe.world.session(sessionId).customer!;
    expect(h.stripe.customers.get(customer)).toMatchObject({ name: 'Ada Lovelace', business_name: 'Analytical Engines GmbH', address: { country: 'DE', city: 'Berlin' } });
    expect(problems).toStrictEqual([]);
    await context.close();

    // The link again, in another browser: a clear refusal.
    const stranger = await browser.newContext({ viewport: WIDTHS.phone });
    const other = await stranger.newPage();
    const refused = await other.goto(portal.url);
    expect(refused?.status()).toBe(410);
    expect(await other.locator('h1').textContent()).toBe('This link has been used');
    await checkPage(other, '8-link-used');
    await stranger.close();
  });
});
