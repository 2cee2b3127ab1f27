import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { needBrowser } from '../support/browser.js';
import { checkPage, sentToStripe, serveApp, WIDTHS } from '../support/browser-pages.js';
import { payLinkStarted } from '../support/front-desk.js';

/**
 * The policies page before payment (docs/front-desk.md, "Policies before payment") in a real
 * headless Chromium with the app's CSP in force: axe-core's WCAG 2.1 A/AA rules at a phone's and a
 * desktop's width, the browser itself refusing to send the form unticked (`required`), and the
 * ticked form, with its CSRF cookie, taking the member on to Stripe's checkout page.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/pay-policies/', import.meta.url));
const served = serveApp(ARTIFACTS);

describe('policies before payment, in a browser', () => {
  it('shows the links and the checkbox accessibly; unticked it stays; ticked it goes on to Stripe, the confirmation recorded', async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const { t, link, user } = await payLinkStarted(served.h);
    const set = await t.request({
      method: 'PATCH',
      url: `${t.base}/settings`,
      payload: { policies: { terms: { type: 'url', value: 'https://club.example.com/terms' }, privacy: { type: 'url', value: 'https://club.example.com/privacy' }, minimum_age: 18 } },
    });
    expect(set.statusCode, set.body).toBe(204);
    const context = await browser.newContext({ viewport: WIDTHS.phone });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));

    await page.goto(link.url);
    expect(await page.locator('h1').textContent()).toBe('Before you pay');
    await checkPage(page, ARTIFACTS, '1-policies');
    // Unticked, the browser keeps the form (the box is required): still this page, no session made.
    await page.getByRole('button', { name: 'Continue to payment' }).click();
    expect(await page.locator('h1').textContent()).toBe('Before you pay');
    expect(served.h.stripe.calls.filter((c) => c.path === '/v1/checkout/sessions')).toHaveLength(0);

    await page.getByLabel('I am at least 18 years old and I accept the terms of service and the privacy policy.').check();
    const checkoutUrl = await sentToStripe(page, 'checkout.stripe.com', () => page.getByRole('button', { name: 'Continue to payment' }).click());
    expect(checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const rows = rowsOf<{ user_id: string; minimum_age: number }>(
      await served.h.database.db.execute(sql`SELECT user_id, minimum_age FROM policy_confirmations WHERE project_id = ${t.projectId}`),
    );
    expect(rows).toStrictEqual([{ user_id: user, minimum_age: 18 }]);
    expect(problems).toStrictEqual([]);
    await context.close();
  });
});
