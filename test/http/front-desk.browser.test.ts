import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needBrowser } from '../support/browser.js';
import { serveApp } from '../support/browser-pages.js';
import { payLinkStarted } from '../support/front-desk.js';

/**
 * The member pages in a real headless Chromium (test/support/browser.ts), on a phone-sized
 * screen, with the app's own CSP in force: a pay link (a chat's) to Stripe's checkout and back to
 * the done page, and an expired link. The portal is walked in test/http/web-walk.browser.test.ts. The fake Stripe API gives the
 * hosted pages' URLs; the browser is seen asking for them, and never reaches them.
 * Every page passes axe-core's WCAG 2.1 A/AA rules, and is saved as a screenshot under
 * test-artifacts/ (not committed) for a person to look at.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/front-desk/', import.meta.url));
const PHONE = { width: 390, height: 844 };

const served = serveApp(ARTIFACTS);

/** A phone-sized page. */
async function phonePage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  return context.newPage();
}

/**
 * Where `go` sends the browser on Stripe (`host`): the URL it asks for. Stripe's hosted pages are
 * not on this machine, so the navigation there fails once the browser has asked for it (a route
 * cannot answer a redirect's target in Chromium); the request is what proves where it went.
 */
async function sentToStripe(page: Page, host: string, go: () => Promise<unknown>): Promise<string> {
  const request = page.waitForRequest((r) => r.url().startsWith(`https://${host}/`));
  await go().catch(() => undefined);
  const url = (await request).url();
  // The failed navigation ends on Chromium's error page; the next one starts after it.
  await page.waitForURL(/^chrome-error:/, { timeout: 5_000 }).catch(() => undefined);
  return url;
}

/** axe-core's WCAG 2.1 A and AA rules on the page as shown (run through the devtools protocol, so the page's CSP stays on), then a screenshot. */
async function checkPage(page: Page, name: string): Promise<void> {
  await page.evaluate(axe.source);
  const options = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } };
  // A string, run in the page: the tests are compiled without the DOM's types.
  const result = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
  const violations = result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(violations, name).toStrictEqual([]);
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

describe('the member pages in a browser', () => {
  it('a pay link: to Stripe checkout, paid, back to a done page saying the member is in', async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const { link, user, t } = await payLinkStarted(served.h);
    expect(link.url.startsWith(`${served.origin}/pay/`)).toBe(true);
    const page = await phonePage(browser);
    const problems: string[] = [];
    // A CSP refusal or a script error would show here; a 4xx page's own status is logged too, and is not one.
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));

    await page.goto(`${link.url}/done`);
    expect(await page.locator('h1').textContent()).toBe('You have not paid yet');
    await checkPage(page, '1-done-before-paying');

    const checkoutUrl = await sentToStripe(page, 'checkout.stripe.com', () => page.goto(link.url));
    const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)$/.exec(checkoutUrl)?.[1];
    expect(sessionId, checkoutUrl).toBeDefined();
    expect(served.h.stripe.world.session(sessionId!).url).toBe(checkoutUrl);
    const session = served.h.stripe.world.session(sessionId!);
    expect(session.metadata.user_id).toBe(user);
    // The member pays; Stripe's event is late, so the done page reads the session itself.
    served.h.stripe.world.pay(sessionId!);
    await page.goto(session.success_url as string);
    expect(await page.locator('h1').textContent()).toBe('You are in!');
    await expect.poll(async () => (await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` })).json().data[0]?.status).toBe('active');
    await checkPage(page, '2-done-granted');

    await page.goto(link.url);
    expect(await page.locator('h1').textContent()).toBe('This link has been used');
    await checkPage(page, '3-link-used');
    expect(problems).toStrictEqual([]);
    await page.context().close();
  });

  it('an expired link and an unknown one: clear pages, nothing else', async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const { link, t } = await payLinkStarted(served.h);
    await served.h.database.db.execute(sql`UPDATE pay_links SET expires_at = now() - interval '1 minute' WHERE project_id = ${t.projectId}`);
    const page = await phonePage(browser);
    const answer = await page.goto(link.url);
    expect(answer?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('This link has expired');
    await checkPage(page, '4-link-expired');
    const unknown = await page.goto(`${served.origin}/pay/${'A'.repeat(32)}`);
    expect(unknown?.status()).toBe(404);
    await checkPage(page, '5-link-unknown');
    await page.context().close();
  });
});
