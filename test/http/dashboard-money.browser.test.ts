import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { needBrowser } from '../support/browser.js';
import { checkPage, serveApp, WIDTHS } from '../support/browser-pages.js';
import { seedMoney } from '../support/dashboard-money.js';

/**
 * The dashboard's money page in a real headless Chromium with the app's CSP in force (docs/analytics.md):
 * reached from the navigation, its four charts drawn by Chart.js from their tables (no script error,
 * no CSP violation), a period by week through the form; every state passes axe-core's WCAG 2.1 A/AA
 * rules, fits a phone's width and is saved at 390 and 1280 px under test-artifacts/dashboard-money/.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard-money/', import.meta.url));
const served = serveApp(ARTIFACTS);
const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);

describe('the money page, in a browser', () => {
  it('figures, four charts drawn from their tables, a period by week', { timeout: 180_000 }, async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const t = await served.h.tenant();
    await seedMoney(served.h, t);
    const link = await served.h.services.dashboardSessions.createLink(t.projectId, null);
    if (!link.ok) throw link.error;
    const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(link.value.url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${served.origin}/dashboard/${t.projectId}`);

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Money' }).click();
    expect(await page.locator('h1').first().textContent()).toBe('Money and growth');
    const figure = (label: string) => page.locator('dl.figures div', { hasText: label }).locator('dd').textContent();
    expect(await figure('Active members at the end')).toBe('10');
    expect(await figure('MRR at the end')).toBe('108.00 USD');
    // Each chart is visible and is a Chart.js chart with its table's numbers.
    const charts = page.locator('.chart canvas');
    expect(await charts.count()).toBe(4);
    for (let i = 0; i < 4; i++) await expect.poll(() => charts.nth(i).isVisible()).toBe(true);
    const drawn = (await page.evaluate(`Array.from(document.querySelectorAll('.chart canvas')).map(function (c) {
      var chart = window.Chart.getChart(c);
      return chart ? chart.data.datasets.map(function (d) { return d.label + ':' + d.data.reduce(function (a, b) { return a + b; }, 0); }).join(',') : null;
    })`)) as (string | null)[];
    expect(drawn[1]).toBe(`Active members:${await page.evaluate(`Array.from(document.querySelectorAll('#chart-members td')).reduce(function (a, td) { return a + Number(td.getAttribute('data-value')); }, 0)`)}`);
    expect(drawn[2]).toBe('New members:15,Churned members:5');
    expect(drawn.every((d) => d !== null)).toBe(true);
    await check(page, '01-money-30-days');

    await page.getByLabel('Interval', { exact: true }).selectOption('week');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/interval=week/);
    expect(await page.locator('#chart-flow tbody tr').count()).toBeGreaterThanOrEqual(5);
    await expect.poll(() => page.locator('.chart canvas').first().isVisible()).toBe(true);
    await check(page, '02-money-by-week');

    expect(problems).toStrictEqual([]);
    await page.getByLabel('From', { exact: true }).fill('2026-02-01');
    await page.getByLabel('To (the last day shown)', { exact: true }).fill('2026-01-01');
    await page.getByRole('button', { name: 'Show' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('From must be on or before To.');
    await check(page, '03-money-bad-period');
    // The one console line: the browser saying the page came with its 422.
    expect(problems).toStrictEqual(['Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)']);
    await context.close();
  });
});
