import { createServer } from 'node:net';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { closeChromium, launchChromium, type LaunchedChromium } from './browser.js';
import { createHarness, type Harness } from './harness.js';

/** What the member pages' browser tests share (test/support/browser.ts launches the browser). */

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };

/** A port for the app to listen on: the browser needs a real server, and TENURE_PUBLIC_URL its address. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The real app listening at its TENURE_PUBLIC_URL and a launched Chromium, for one browser test file. */
export interface ServedApp {
  readonly h: Harness;
  readonly origin: string;
  readonly launched: LaunchedChromium | undefined;
}

/**
 * One line of set-up per browser test file: the app on a free port (the browser needs a real
 * server, and the links it makes that server's address), Chromium, and `artifacts` made for the
 * screenshots; all closed after the file. Hooks a file adds after this one run before these close.
 */
export function serveApp(artifacts: string): ServedApp {
  const served = {} as { h: Harness; origin: string; launched: LaunchedChromium | undefined };
  beforeAll(async () => {
    const port = await freePort();
    served.origin = `http://127.0.0.1:${port}`;
    served.h = await createHarness({ env: { TENURE_PUBLIC_URL: served.origin } });
    await served.h.app.listen({ port, host: '127.0.0.1' });
    served.launched = await launchChromium(CHROMIUM_ARGS);
    mkdirSync(artifacts, { recursive: true });
  });
  afterAll(async () => {
    await closeChromium(served.launched);
    await served.h?.close();
  });
  return served;
}

/**
 * At a phone's and a desktop's width: axe-core's WCAG 2.1 A and AA rules (no serious or critical
 * violation; run through the devtools protocol, so the page's CSP stays on), nothing wider than the
 * screen, and a screenshot `{dir}{name}-{390|1280}.png` for a person to look at.
 */
export async function checkPage(page: Page, dir: string, name: string): Promise<void> {
  for (const viewport of Object.values(WIDTHS)) {
    await page.setViewportSize(viewport);
    await page.evaluate(axe.source);
    const options = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } };
    // A string, run in the page: the tests are compiled without the DOM's types.
    const result = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
    const violations = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    expect(violations, `${name} at ${viewport.width}`).toStrictEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name} at ${viewport.width}: wider than the screen`).toBe(true);
    await page.screenshot({ path: `${dir}${name}-${viewport.width}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.phone);
}

/**
 * Where `go` sends the browser on Stripe (`host`): the URL it asks for. Stripe's hosted pages are
 * not on this machine, so the navigation there fails once the browser has asked for it (a route
 * cannot answer a redirect's target in Chromium); the request is what proves where it went.
 */
export async function sentToStripe(page: Page, host: string, go: () => Promise<unknown>): Promise<string> {
  const request = page.waitForRequest((r) => r.url().startsWith(`https://${host}/`));
  await go().catch(() => undefined);
  const url = (await request).url();
  // The failed navigation ends on Chromium's error page; the next one starts after it.
  await page.waitForURL(/^chrome-error:/, { timeout: 5_000 }).catch(() => undefined);
  return url;
}
