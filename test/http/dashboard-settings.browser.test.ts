import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeChromium, launchChromium, needBrowser, type LaunchedChromium } from '../support/browser.js';
import { checkPage, CHROMIUM_ARGS, freePort, WIDTHS } from '../support/browser-pages.js';
import type { Tenant } from '../support/harness.js';
import { discord, markUnhealthy, telegram } from '../support/integrations.js';
import { connectStripe } from '../support/payments.js';
import { createWebhookHarness, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/**
 * The dashboard's settings pages in a real headless Chromium with the CSP in force and no script
 * (docs/dashboard-settings.md): plans (create a target and a plan, grant the target), integrations
 * (an unhealthy target and its fix; disconnecting a bot, deleting the Stripe account), coupons (create one), webhooks
 * (add one, send a test event the receiver refuses, see the failed delivery, replay it; rotate a secret), messages (edit a reminder text; a bad placeholder refused).
 * Every page passes axe-core's WCAG 2.1 A/AA rules and is saved at 390 and 1280 px under
 * test-artifacts/dashboard-settings/. The app runs with a webhook delivery worker the test drains.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard-settings/', import.meta.url));
let w: WebhookHarness;
let receiver: Receiver;
let launched: LaunchedChromium | undefined;
let origin = '';

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  w = await createWebhookHarness({ env: { TENURE_PUBLIC_URL: origin } });
  await w.h.app.listen({ port, host: '127.0.0.1' });
  receiver = await startReceiver((r) => (r.path.startsWith('/fail') ? { status: 500, body: 'down for maintenance' } : { status: 200 }));
  launched = await launchChromium(CHROMIUM_ARGS);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await closeChromium(launched);
  await receiver?.close();
  await w?.close();
});

const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);
const heading = (page: Page) => page.locator('h1').first().textContent();
const main = async (page: Page) => ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ');
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();

async function signedIn(ctx: { skip(note?: string): never }, t: Tenant): Promise<{ context: BrowserContext; page: Page }> {
  const browser = needBrowser(launched, ctx);
  const link = await w.h.services.dashboardSessions.createLink(t.projectId, null);
  if (!link.ok) throw link.error;
  const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
  const page = await context.newPage();
  await page.goto(link.value.url);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/dashboard/${t.projectId}`);
  return { context, page };
}

describe('the dashboard settings pages, in a browser', () => {
  it('plans: create a target and a plan, grant the target', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Plans');
    expect(await heading(page)).toBe('Plans and targets');
    await page.getByLabel('Name', { exact: true }).last().fill('VIP role');
    await page.getByLabel('Kind').selectOption('guild');
    await page.getByLabel('Id on the platform').fill('123456789012345678');
    await page.getByRole('button', { name: 'Create target' }).click();
    expect(await main(page)).toContain('Target created.');

    await page.getByLabel('Name', { exact: true }).first().fill('Gold');
    await page.getByLabel('Price').fill('9.99');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByLabel('Free trial days').fill('7');
    await page.getByRole('button', { name: 'Create plan' }).click();
    expect(await heading(page)).toBe('Plan Gold');
    expect(await main(page)).toContain('Plan created.');
    await page.getByLabel('Target', { exact: true }).selectOption({ label: 'VIP role (discord guild)' });
    await page.getByRole('button', { name: 'Add target' }).click();
    expect(await main(page)).toContain('Target added to the plan.');
    expect(await page.getByRole('table').first().textContent()).toContain('VIP role');
    await check(page, '01-plan');

    await page.getByRole('link', { name: 'All plans' }).click();
    expect(await main(page)).toContain('VIP role · discord guild');
    expect(await main(page)).toContain('€9.99');
    await check(page, '02-plans');

    await page.goto(`${origin}/dashboard/${t.projectId}/plans`);
    await page.getByLabel('Price').fill('ten');
    await page.getByLabel('Name', { exact: true }).first().fill('Broken');
    await page.getByRole('button', { name: 'Create plan' }).click();
    expect(await page.getByRole('alert').first().textContent()).toContain('plan_price must be a non-negative decimal string');
    await check(page, '03-plans-refused');
    await context.close();
  });

  it('coupons: create one for a plan', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    await t.request({ method: 'POST', url: `${t.base}/plans`, payload: { plan_name: 'Gold', plan_price: '9.99', plan_duration: '1 month' } });
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Plans');
    await page.getByRole('link', { name: 'Coupons' }).click();
    expect(await heading(page)).toBe('Coupons');
    await page.getByLabel('Amount off').fill('25');
    await page.getByLabel('Code', { exact: true }).fill('SPRING25');
    await page.getByLabel('Gold').check();
    await page.getByLabel('Most uses').fill('100');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    expect(await main(page)).toContain('Coupon created.');
    expect(await main(page)).toContain('25% off');
    await check(page, '09-coupons');
    await context.close();
  });

  it('integrations: an unhealthy target shows its error and the fix', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    await discord.connect(t, discord.addBot(w.h, 'tenure-bot'));
    const role = await discord.addTarget(w.h, t, 'VIP');
    await markUnhealthy(w.h, [role.target_id], { code: '50013', message: 'Missing Permissions' });
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Integrations');
    expect(await heading(page)).toBe('Integrations');
    const text = await main(page);
    expect(text).toContain('needs attention');
    expect(text).toContain('Missing Permissions (50013)');
    expect(text).toContain('Server Settings → Roles, drag the bot\'s role above this role');
    await check(page, '04-integrations');
    await page.getByRole('link', { name: 'VIP' }).click();
    expect(await main(page)).toContain('unhealthy');
    await page.getByRole('button', { name: 'Save target' }).click();
    expect(await main(page)).toContain('Target saved.');
    expect(await main(page)).not.toContain('unhealthy');
    await context.close();
  });

  it('integrations: disconnect the Telegram bot and delete the Stripe account, each after a confirmation page', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    await telegram.connect(t, telegram.addBot(w.h, 'tenure_bot'));
    await connectStripe(w.h, t);
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Integrations');
    await check(page, '10-integrations-connected');
    await page.getByRole('link', { name: 'Disconnect the Telegram bot' }).click();
    expect(await heading(page)).toBe('Disconnect the Telegram bot tenure_bot?');
    await check(page, '11-disconnect-confirm');
    await page.getByRole('button', { name: 'Yes, disconnect the bot' }).click();
    expect(await main(page)).toContain('Telegram bot disconnected');
    expect(await main(page)).toMatch(/Telegram bot\s*not connected/);
    await check(page, '12-bot-disconnected');

    await page.getByRole('link', { name: 'Delete the sandbox Stripe account' }).click();
    expect(await heading(page)).toMatch(/^Delete the sandbox Stripe account /);
    await check(page, '13-stripe-delete-confirm');
    await page.getByRole('button', { name: 'Yes, delete the Stripe account' }).click();
    expect(await main(page)).toContain('Stripe account deleted');
    expect(await main(page)).toContain('No Stripe account yet');
    await check(page, '14-stripe-deleted');
    await context.close();
  });

  it('webhooks: rotate a signing secret after a confirmation page, the new one shown once', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Webhooks');
    await page.getByLabel('Address').fill(`${receiver.url}/ok`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const first = await page.locator('code.secret').textContent();
    await nav(page, 'Webhooks');
    await page.getByRole('link', { name: /^Rotate secret/ }).click();
    expect(await heading(page)).toBe('Rotate the signing secret of this webhook?');
    await check(page, '15-rotate-confirm');
    await page.getByRole('button', { name: 'Yes, make a new secret' }).click();
    expect(await main(page)).toContain('Signing secret rotated');
    expect(await main(page)).toContain('The old secret stops working in 24 hours');
    const second = await page.locator('code.secret').textContent();
    expect(second).toMatch(/^[0-9a-f]{64}$/);
    expect(second).not.toBe(first);
    expect(page.url()).not.toContain(second!);
    await check(page, '16-secret-rotated');
    await context.close();
  });

  it('webhooks: add one, see a failed delivery with its error, replay it', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Webhooks');
    await page.getByLabel('Address').fill(`${receiver.url}/fail`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    expect(await main(page)).toContain('Its signing secret, shown this once');
    await check(page, '05-webhook-added');
    await page.getByRole('link', { name: /^Deliveries/ }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    expect(await main(page)).toContain('Test event queued.');
    await w.worker.drain();
    await page.reload();
    expect(await main(page)).toContain('HTTP 500');
    await check(page, '06-deliveries');
    await page.getByRole('button', { name: /^Replay/ }).first().click();
    expect(await main(page)).toContain('Delivery queued again');
    await context.close();
  });

  it('messages: edit a text, and a bad placeholder is refused on the page', { timeout: 240_000 }, async (ctx) => {
    const t = await w.tenant();
    const { context, page } = await signedIn(ctx, t);
    await nav(page, 'Messages');
    expect(await heading(page)).toBe('Messages and reminders');
    await page.getByLabel('Your text').nth(3).fill('Hi {name}! {plan} ends on {end_date}.');
    await page.getByRole('button', { name: 'Save Reminder before the end' }).click();
    expect(await main(page)).toContain('Message saved.');
    expect(await page.locator('#text-reminder').inputValue()).toBe('Hi {name}! {plan} ends on {end_date}.');
    await check(page, '07-messages');
    await page.locator('#text-expired').fill('Bye {nmae}');
    await page.getByRole('button', { name: 'Save Membership ended' }).click();
    expect(await page.getByRole('alert').first().textContent()).toContain('unknown placeholder {nmae}');
    await check(page, '08-messages-refused');
    await context.close();
  });
});
