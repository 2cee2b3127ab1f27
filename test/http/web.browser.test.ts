import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needBrowser } from '../support/browser.js';
import { checkPage, serveApp, WIDTHS } from '../support/browser-pages.js';
import { webShop } from '../support/web.js';

/**
 * Members on the web in a real headless Chromium (test/support/browser.ts) with the app's own CSP
 * in force: the landing page, and a login with Discord the buyer cancels. The whole way of a buyer,
 * from the plan page through Stripe and the guild to the portal, is test/http/web-walk.browser.test.ts.
 * Every page passes axe-core's WCAG 2.1 A/AA rules and is saved at phone (390 px) and desktop
 * (1280 px) widths under test-artifacts/web/ (not committed) for a person to look at.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url));

const served = serveApp(ARTIFACTS);

async function phonePage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
  return context.newPage();
}

describe('members on the web in a browser', () => {
  it('the landing page says what this server is', async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const page = await phonePage(browser);
    await page.goto(`${served.origin}/`);
    expect(await page.locator('h1').textContent()).toBe('tenure');
    expect(await page.getByRole('link', { name: 'the API documentation' }).getAttribute('href')).toBe('/docs');
    await checkPage(page, ARTIFACTS, '1-landing');
    await page.context().close();
  });

  it('consent denied: a page saying what happened and what to do', async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const shop = await webShop(served.h, { planName: 'Silver' });
    served.h.discord.oauth.nextLogin = { deny: true };
    const page = await phonePage(browser);
    await page.goto(`${served.origin}/p/${shop.t.projectId}`);
    await page.getByRole('button', { name: 'Buy Silver with Discord' }).click();
    await page.waitForURL(/\/auth\/discord\/callback/);
    expect(await page.locator('h1').textContent()).toBe('You did not allow the login');
    await checkPage(page, ARTIFACTS, '2-login-denied');
    await page.context().close();
  });
});
