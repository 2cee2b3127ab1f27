import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeChromium, launchChromium, needBrowser, type LaunchedChromium } from '../support/browser.js';
import { createHarness, type Harness } from '../support/harness.js';
import { documentedOperations, type OpenApiDocument } from './openapi-support.js';

/**
 * GET /docs in a real headless Chromium (the machine's or the one packaged in @sparticuz/chromium,
 * driven by playwright-core: test/support/browser.ts): the reference renders from this server alone (every
 * request the page makes goes to it) and lists every documented operation.
 */

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let h: Harness;
let origin: string;
let browser: LaunchedChromium | undefined;
beforeAll(async () => {
  h = await createHarness();
  origin = await h.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium(CHROMIUM_ARGS);
});
afterAll(async () => {
  await closeChromium(browser);
  await h?.close();
});

describe('GET /docs', () => {
  // A browser on two shared cores can be slow to parse Swagger UI's bundle: the timeouts give room.
  it('renders the reference from this server alone and lists every operation', async (ctx) => {
    const chromium = needBrowser(browser, ctx);
    const doc = (await (await fetch(`${origin}/openapi.json`)).json()) as OpenApiDocument;
    const operations = [...documentedOperations(doc).values()];

    const page = await chromium.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    const response = await page.goto(`${origin}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // Swagger UI renders every operation as an .opblock once the document is loaded.
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 90_000 });

    await expect.poll(() => page.locator('.opblock').count(), { timeout: 10_000 }).toBe(operations.length);
    expect(await page.locator('.info .title').innerText()).toContain('tenure API');
    for (const summary of ["Set the end date of one user's membership", 'Create a webhook']) {
      await expect.poll(() => page.getByText(summary, { exact: true }).first().isVisible()).toBe(true);
    }
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(
      expect.arrayContaining(['/v2/projects/{project_id}/memberships/{user_id}/extend', '/v2/projects/{project_id}/integrations/webhooks']),
    );

    // Nothing from a CDN: every request stayed on this server (data: URIs are inline).
    const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
    expect(elsewhere).toStrictEqual([]);
    expect(requested).toEqual(expect.arrayContaining([`${origin}/docs/json`, `${origin}/docs/static/swagger-ui-bundle.js`]));
    expect(problems, problems.join('\n')).toStrictEqual([]);
    await page.close();
  }, 120_000);

  it('is served without a key, under a CSP that allows only this origin', async () => {
    const res = await fetch(`${origin}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    expect(await res.text()).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"' ]*\.(js|css)/);
  });
});
