import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { closeChromium, launchChromium, needBrowser, type LaunchedChromium } from '../support/browser.js';
import { createHarness, type Harness } from '../support/harness.js';
import { webShop } from '../support/web.js';

/**
 * Members on the web in a real headless Chromium (test/support/browser.ts) with the app's own CSP
 * in force: the landing page, a project's plan page, Buy → Login with Discord on the fake Discord
 * (which consents at once) → the buyer's pay link → Stripe's checkout page (asked for, never
 * reached) → paid → the done page; then the worker runtime adds the member to the guild and the
 * access worker grants the plan's role, both seen in the fake Discord's state. Every page passes
 * axe-core's WCAG 2.1 A/AA rules and is saved at phone (390 px) and desktop (1280 px) widths under
 * test-artifacts/web/ (not committed) for a person to look at.
 */

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url));
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

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
let runtime: WorkerRuntime | undefined;
beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  h = await createHarness({ env: { TENURE_PUBLIC_URL: origin } });
  await h.app.listen({ port, host: '127.0.0.1' });
  launched = await launchChromium(CHROMIUM_ARGS);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await runtime?.stop();
  await closeChromium(launched);
  await h?.close();
});

async function phonePage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2 });
  return context.newPage();
}

/** axe-core's WCAG 2.1 A and AA rules (no serious or critical violation), then the page at both widths. */
async function checkPage(page: Page, name: string): Promise<void> {
  await page.evaluate(axe.source);
  const options = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } };
  const result = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
  const violations = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(violations, name).toStrictEqual([]);
  await page.screenshot({ path: `${ARTIFACTS}${name}-390.png`, fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: `${ARTIFACTS}${name}-1280.png`, fullPage: true });
  await page.setViewportSize(PHONE);
}

describe('members on the web in a browser', () => {
  it('the landing page says what this server is', async (ctx) => {
    const browser = needBrowser(launched, ctx);
    const page = await phonePage(browser);
    await page.goto(`${origin}/`);
    expect(await page.locator('h1').textContent()).toBe('tenure');
    expect(await page.getByRole('link', { name: 'the API documentation' }).getAttribute('href')).toBe('/docs');
    await checkPage(page, '1-landing');
    await page.context().close();
  });

  it('plan page → Buy with Discord → Discord → Stripe → paid → done; the member joins the guild and gets the role', async (ctx) => {
    const browser = needBrowser(launched, ctx);
    const shop = await webShop(h, { planName: 'Gold', projectName: 'The Night Owls' });
    await shop.t.request({ method: 'PATCH', url: `${shop.t.base}/settings`, payload: { page_accent_color: '#0b6e4f' } });
    const buyer = '623456789012345678';
    h.discord.oauth.nextLogin = { userId: buyer };
    runtime = await startWorkerRuntime(h.container, { pollMs: 200 });

    const page = await phonePage(browser);
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));
    await page.goto(`${origin}/p/${shop.t.projectId}`);
    expect(await page.locator('h1').textContent()).toBe('The Night Owls');
    await checkPage(page, '2-plans');

    // Buy: the form posts, Discord (the fake) consents at once, the callback sends the buyer to their pay link and on to Stripe.
    const toStripe = page.waitForRequest((r) => r.url().startsWith('https://checkout.stripe.com/'));
    await page.getByRole('button', { name: 'Buy Gold with Discord' }).click().catch(() => undefined);
    const checkoutUrl = (await toStripe).url();
    await page.waitForURL(/^chrome-error:/, { timeout: 5_000 }).catch(() => undefined);
    const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)$/.exec(checkoutUrl)?.[1];
    expect(sessionId, checkoutUrl).toBeDefined();
    const session = h.stripe.world.session(sessionId!);
    expect(session.metadata.user_id).toBe(buyer);
    expect(h.discord.oauth.logins).toContain(buyer);

    h.stripe.world.pay(sessionId!);
    await page.goto(session.success_url as string);
    expect(await page.locator('h1').textContent()).toBe('You are in!');
    await checkPage(page, '3-done');

    await expect.poll(() => h.discord.memberRoles(shop.guildId, buyer), { timeout: 20_000, interval: 200 }).toStrictEqual([shop.roleId]);
    expect(problems).toStrictEqual([]);
    await page.context().close();
  });

  it('consent denied: a page saying what happened and what to do', async (ctx) => {
    const browser = needBrowser(launched, ctx);
    const shop = await webShop(h, { planName: 'Silver' });
    h.discord.oauth.nextLogin = { deny: true };
    const page = await phonePage(browser);
    await page.goto(`${origin}/p/${shop.t.projectId}`);
    await page.getByRole('button', { name: 'Buy Silver with Discord' }).click();
    await page.waitForURL(/\/auth\/discord\/callback/);
    expect(await page.locator('h1').textContent()).toBe('You did not allow the login');
    await checkPage(page, '4-login-denied');
    await page.context().close();
  });
});
