import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createAdmin } from '../support/admins.js';
import { needBrowser } from '../support/browser.js';
import { checkPage, serveApp, WIDTHS } from '../support/browser-pages.js';
import { cliOn } from '../support/cli.js';
import { dashboardDiscord } from '../support/dashboard.js';
import type { Tenant } from '../support/harness.js';
import { seedUser } from '../support/keys.js';

/**
 * The dashboard's core in a real headless Chromium with its CSP in force and no script
 * (docs/dashboard.md): signed in by a link the CLI printed, the overview, the admins page (add one,
 * change their permissions), the sessions page (revoke another session), the audit log showing
 * each action, Log in with Discord against the fake Discord, and an admin without admins:add, who
 * sees no form and whose POST with a valid CSRF token is refused. Every page passes axe-core's
 * WCAG 2.1 A/AA rules and is saved at 390 and 1280 px under test-artifacts/dashboard/.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard/', import.meta.url));
const served = serveApp(ARTIFACTS);
const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);
const heading = (page: Page) => page.locator('h1').first().textContent();
const main = async (page: Page) => ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ');
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();

/** A new browser context at a phone's width, signed in through a link `npx tenure admin link` printed. */
async function signedIn(ctx: { skip(note?: string): never }, t: Tenant, userId: string | null = null, shoot = false): Promise<{ context: BrowserContext; page: Page }> {
  const browser = needBrowser(served.launched, ctx);
  const res = await cliOn(served.h)('admin', 'link', '--project', t.projectId, ...(userId ? ['--user', userId] : []));
  expect(res.code, res.stderr).toBe(0);
  const { url } = JSON.parse(res.stdout) as { url: string };
  expect(url.startsWith(`${served.origin}/dashboard/sign-in/`)).toBe(true);
  const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
  const page = await context.newPage();
  await page.goto(url);
  if (shoot) await check(page, '01-sign-in-link');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${served.origin}/dashboard/${t.projectId}`);
  return { context, page };
}

describe('the dashboard core, in a browser', () => {
  it('owner: overview, admins (add, change), sessions (revoke), audit', { timeout: 240_000 }, async (ctx) => {
    const t = await served.h.tenant();
    await served.h.database.db.execute(sql`UPDATE projects SET name = 'Night Owls' WHERE id = ${t.projectId}`);
    const grace = await seedUser(t, { first_name: 'Grace' });
    const helper = await createAdmin(t, ['memberships:read'], { first_name: 'Hal' });
    const { context, page } = await signedIn(ctx, t, null, true);
    expect(await heading(page)).toBe('Night Owls');
    expect(await main(page)).toContain('Active members');
    await check(page, '02-overview');

    await nav(page, 'Admins');
    expect(await heading(page)).toBe('Admins');
    await page.getByLabel('User id').fill(grace);
    await page.getByLabel('memberships:read').check();
    await page.getByLabel('plans:read').check();
    await check(page, '03-admins-add-form');
    await page.getByRole('button', { name: 'Add admin' }).click();
    expect(await main(page)).toContain('Admin added.');
    expect(await main(page)).toContain('Grace');
    await check(page, '04-admins');

    await page.getByRole('link', { name: 'Change permissions of Grace' }).click();
    expect(await heading(page)).toBe('Permissions of Grace');
    await page.getByLabel('plans:read').uncheck();
    await page.getByLabel('admins:read').check();
    await check(page, '05-admin-edit');
    await page.getByRole('button', { name: 'Save permissions' }).click();
    expect(await main(page)).toContain('Permissions changed.');
    const held = await served.h.services.admins.get(t.projectId, grace);
    expect(held?.permissions).toStrictEqual(['admins:read', 'memberships:read']);

    // Another session (Hal's): the owner sees it and revokes it; Hal is sent to the sign-in page.
    const hal = await signedIn(ctx, t, helper.user_id);
    await nav(page, 'Sessions');
    expect(await main(page)).toContain(`Hal (${helper.user_id})`);
    await check(page, '06-sessions');
    await page.getByRole('link', { name: new RegExp(`^Revoke the session of Hal`) }).click();
    expect(await heading(page)).toBe('Revoke this session?');
    await check(page, '07-session-revoke-confirm');
    await page.getByRole('button', { name: 'Yes, revoke it' }).click();
    expect(await main(page)).toContain('Session revoked');
    await hal.page.reload();
    expect(hal.page.url()).toBe(`${served.origin}/dashboard/${t.projectId}/sign-in`);
    await check(hal.page, '08-sign-in');
    await hal.context.close();

    await nav(page, 'Audit');
    expect(await heading(page)).toBe('Audit log');
    const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(actions).toStrictEqual(['session.revoke', 'session.sign-in', 'admin.update', 'admin.add', 'session.sign-in']);
    await check(page, '09-audit');

    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await main(page)).toContain('You are signed out.');
    await context.close();
  });

  it('an admin without admins:add sees no form; a POST with a valid CSRF token is refused naming the permission; nothing changes', { timeout: 120_000 }, async (ctx) => {
    const t = await served.h.tenant();
    const reader = await createAdmin(t, ['admins:read'], { first_name: 'Rae' });
    const victim = await seedUser(t);
    const { context, page } = await signedIn(ctx, t, reader.user_id);
    await nav(page, 'Admins');
    expect(await page.getByRole('button', { name: 'Add admin' }).count()).toBe(0);
    expect(await page.getByLabel('User id').count()).toBe(0);
    await check(page, '10-admins-read-only');
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const res = await context.request.post(`${served.origin}/dashboard/${t.projectId}/admins/add`, { form: { _csrf: csrf, user_id: victim, permissions: 'all' }, maxRedirects: 0 });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('This needs the permission admins:add');
    expect(await served.h.services.admins.get(t.projectId, victim)).toBeNull();
    await page.goto(`${served.origin}/dashboard/${t.projectId}/admins/${reader.user_id}`);
    expect(await heading(page)).toBe('Not allowed');
    await check(page, '11-not-allowed');
    await context.close();
  });

  it('an admin signs in with Discord (the fake Discord)', { timeout: 120_000 }, async (ctx) => {
    const browser = needBrowser(served.launched, ctx);
    const t = await served.h.tenant();
    await served.h.database.db.execute(sql`UPDATE projects SET name = 'Night Owls' WHERE id = ${t.projectId}`);
    await dashboardDiscord(served.h, t);
    const admin = await createAdmin(t, ['plans:read'], { first_name: 'Dee' });
    served.h.discord.oauth.nextLogin = { userId: admin.user_id };
    const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await page.goto(`${served.origin}/dashboard/${t.projectId}/sign-in`);
    await check(page, '12-sign-in-discord');
    await page.getByRole('button', { name: 'Log in with Discord' }).click();
    await page.waitForURL(`${served.origin}/dashboard/${t.projectId}`);
    expect(await main(page)).toContain('Active members');
    expect(await page.locator('.who').textContent()).toContain(`Dee (${admin.user_id})`);
    const sessions = rowsOf<{ method: string }>(await served.h.database.db.execute(sql`SELECT method FROM dashboard_sessions WHERE project_id = ${t.projectId}`));
    expect(sessions).toStrictEqual([{ method: 'discord' }]);
    // An admin without admins:read sees their own sessions only, and the audit page refuses them.
    await nav(page, 'Sessions');
    expect(await main(page)).toContain('Your dashboard sessions.');
    await check(page, '13-sessions-own');
    await context.close();
  });
});
