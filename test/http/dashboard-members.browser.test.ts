import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { membershipRow } from '../support/api.js';
import { createAdmin } from '../support/admins.js';
import { needBrowser } from '../support/browser.js';
import { checkPage, serveApp, WIDTHS } from '../support/browser-pages.js';
import { seedMembers } from '../support/dashboard-members.js';
import { createTarget } from '../support/catalogue.js';
import type { Tenant } from '../support/harness.js';
import { paidMember } from '../support/portal.js';

/**
 * The dashboard's members pages in a real headless Chromium, the app's CSP in force and no script
 * (docs/dashboard-members.md): signed in by a one-time link, the table filtered, sorted, searched,
 * a saved view, the CSV of a view; a member's page and each action through its form (the
 * destructive ones through their confirmation page); and an admin without memberships:update, who
 * sees no extend form and whose POST with a valid CSRF token is refused. Every page passes
 * axe-core's WCAG 2.1 A/AA rules and is saved at 390 and 1280 px under test-artifacts/dashboard-members/.
 */

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard-members/', import.meta.url));
const served = serveApp(ARTIFACTS);
const check = (page: Page, name: string) => checkPage(page, ARTIFACTS, name);
const heading = (page: Page) => page.locator('h1').first().textContent();
const main = async (page: Page) => ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ');

/** A browser signed in to the project's dashboard through a one-time link (owner, or the admin `userId`). */
async function signedIn(ctx: { skip(note?: string): never }, t: Tenant, userId: string | null = null): Promise<{ context: BrowserContext; page: Page }> {
  const browser = needBrowser(served.launched, ctx);
  const link = await served.h.services.dashboardSessions.createLink(t.projectId, userId);
  if (!link.ok) throw link.error;
  const context = await browser.newContext({ viewport: WIDTHS.phone, deviceScaleFactor: 2, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(link.value.url);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${served.origin}/dashboard/${t.projectId}`);
  return { context, page };
}

describe('the members pages, in a browser', () => {
  it('the table: all, a filter, a sort, a search, a saved view and the CSV of the view', { timeout: 240_000 }, async (ctx) => {
    const t = await served.h.tenant();
    const s = await seedMembers(served.h, t);
    const { context, page } = await signedIn(ctx, t);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Members' }).click();
    expect(await heading(page)).toBe('Members');
    expect(await main(page)).toContain('9 members match');
    await check(page, '01-members');

    await page.getByLabel('Status').selectOption('in_grace');
    await page.getByRole('button', { name: 'Show members' }).click();
    await page.waitForURL(/[?&]status=in_grace(&|$)/);
    expect(await main(page)).toContain('1 member matches');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody').textContent()).toContain('Grace');
    await check(page, '02-members-in-grace');

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByLabel('Sort').selectOption('end_date');
    await page.getByLabel('Per page').selectOption('25');
    await page.getByRole('button', { name: 'Show members' }).click();
    const firstCells = await page.locator('tbody tr td:first-child').allTextContents();
    expect(firstCells[0]).toContain('Ezra');
    expect(firstCells[1]).toContain('bob');
    // The column header flips the order (on a desktop: a phone shows the rows as cards, sorted by the form).
    await page.setViewportSize(WIDTHS.desktop);
    await page.getByRole('link', { name: 'Ends' }).click();
    await page.setViewportSize(WIDTHS.phone);
    expect((await page.locator('tbody tr td:first-child').first().textContent()) ?? '').toContain(s.m.unlinked.userId);

    await page.getByLabel('Search').fill('LOVE');
    await page.getByRole('button', { name: 'Show members' }).click();
    await page.waitForURL(/[?&]q=LOVE(&|$)/);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody').textContent()).toContain('Ada');
    await check(page, '03-members-search');

    await page.getByRole('link', { name: 'Access failed' }).click();
    await page.waitForURL(/[?&]view=access_failed$/);
    expect(await page.locator('tbody').textContent()).toContain('VIP role: failed');
    await page.getByRole('link', { name: 'Not linked' }).click();
    await page.waitForURL(/[?&]view=not_linked$/);
    expect(await page.locator('tbody').textContent()).toContain('Discord: DMs closed');
    await page.getByRole('link', { name: 'Expiring in 7 days' }).click();
    await page.waitForURL(/[?&]view=expiring_7d$/);
    expect(await main(page)).toContain('2 members match');
    await check(page, '04-members-expiring');

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export this view (CSV)' }).click();
    const file = await (await download).path();
    const records = parse(readFileSync(file!, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(records.map((r) => r.user_id)).toStrictEqual([s.m.bob.userId, s.m.ada.userId]);
    await context.close();
  });

  it("a member's page and each action, the destructive ones confirmed first", { timeout: 240_000 }, async (ctx) => {
    const t = await served.h.tenant();
    const s = await seedMembers(served.h, t);
    const chat = await createTarget(t, { target_name: 'Members chat', platform: 'telegram', kind: 'group', external_id: '-1001234567890' });
    await served.h.database.db.execute(sql`INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${t.projectId}, ${chat.target_id}, ${s.m.bob.userId}, 'telegram', 'group', '-1001234567890', 'kick', 'granted', 'waiting_for_member')`);
    await served.h.database.db.execute(sql`INSERT INTO telegram_invites (project_id, target_id, user_id, membership_id, chat_id, bot_id, invite_link, name, expires_at)
      VALUES (${t.projectId}, ${chat.target_id}, ${s.m.bob.userId}, ${s.m.bob.membershipId}, '-1001234567890', '42', 'https://t.me/+bobsOwnLink', 'm', now() + interval '1 day')`);
    const { context, page } = await signedIn(ctx, t);
    const memberUrl = `${served.origin}/dashboard/${t.projectId}/members/${s.m.bob.userId}`;
    await page.goto(`${served.origin}/dashboard/${t.projectId}/members`);
    await page.getByRole('link', { name: 'bob', exact: true }).click();
    expect(page.url()).toBe(memberUrl);
    expect(await main(page)).toContain('@builder_50%');
    await check(page, '05-member');

    await page.getByLabel('Days to add').fill('10');
    await page.getByRole('button', { name: 'Save the end date' }).click();
    expect(await page.getByRole('status').first().textContent()).toContain('The end date is set.');
    expect(Date.parse((await membershipRow(served.h, t.projectId, s.m.bob.userId))!.end_date)).toBe(Date.parse(s.m.bob.endDate) + 10 * 86_400_000);
    await check(page, '06-member-extended');
    await page.getByLabel('Or a new end date (UTC)').fill('2031-03-04');
    await page.getByRole('button', { name: 'Save the end date' }).click();
    expect((await membershipRow(served.h, t.projectId, s.m.bob.userId))!.end_date).toBe('2031-03-04T00:00:00.000Z');
    await page.getByLabel('Or a new end date (UTC)').fill('2020-01-01');
    await page.getByRole('button', { name: 'Save the end date' }).click();
    expect(await heading(page)).toBe('That did not work');
    expect(await main(page)).toContain('The end date must be in the future');
    await check(page, '07-member-bad-date');
    await page.getByRole('link', { name: 'Back to the member' }).click();

    await page.getByRole('button', { name: 'Re-sync access' }).click();
    expect(await main(page)).toContain('Access is being applied again.');
    await page.getByRole('button', { name: 'Resend invite to Members chat' }).click();
    expect(await page.getByLabel('The link').inputValue()).toBe('https://t.me/+bobsOwnLink');
    await check(page, '08-member-invite');
    await page.getByRole('link', { name: 'Back to the member' }).click();
    await page.getByRole('button', { name: 'Make a portal link' }).click();
    expect(await page.getByLabel('The link').inputValue()).toMatch(new RegExp(`^${served.origin}/portal/[A-Za-z0-9_-]+$`));
    await page.getByRole('link', { name: 'Back to the member' }).click();

    await page.getByRole('link', { name: 'Ban…' }).click();
    expect(await heading(page)).toBe('Ban this member?');
    await check(page, '09-member-ban-confirm');
    await page.getByLabel('Reason (optional, kept with the ban)').fill('spam links');
    await page.getByRole('button', { name: 'Ban the member' }).click();
    expect(await main(page)).toMatch(/Banned\s*since .*: spam links/);
    await check(page, '10-member-banned');
    await page.getByRole('button', { name: 'Lift the ban' }).click();
    expect(await main(page)).toContain('The ban is lifted.');

    await page.getByRole('link', { name: 'End now…' }).click();
    expect(await heading(page)).toBe('End this membership now?');
    await page.getByRole('link', { name: 'No, go back' }).click();
    expect(page.url()).toBe(memberUrl);
    await page.getByRole('link', { name: 'End now…' }).click();
    await page.getByRole('button', { name: 'End the membership now' }).click();
    expect(await main(page)).toContain('The membership has ended.');
    expect(Date.parse((await membershipRow(served.h, t.projectId, s.m.bob.userId))!.end_date)).toBeLessThanOrEqual(Date.now());

    // Cancel renewal: a member paying by a Stripe subscription.
    const paid = await paidMember(served.h);
    await context.close();
    const other = await signedIn(ctx, paid.t);
    await other.page.goto(`${served.origin}/dashboard/${paid.t.projectId}/members/${paid.user}`);
    await other.page.getByRole('button', { name: 'Cancel renewal' }).click();
    expect(await main(other.page)).toContain('The renewal is cancelled.');
    expect(await other.page.locator('h1 .tag').textContent()).toBe('Cancelling');
    expect(served.h.stripe.world.subscriptions.get(paid.subscriptionId!)?.cancel_at_period_end).toBe(true);
    await check(other.page, '11-member-cancelling');
    await other.context.close();
  });

  it('an admin without memberships:update: no extend form, and a direct POST with a valid CSRF token is refused', { timeout: 120_000 }, async (ctx) => {
    const t = await served.h.tenant();
    const s = await seedMembers(served.h, t);
    const admin = await createAdmin(t, ['memberships:read']);
    const { context, page } = await signedIn(ctx, t, admin.user_id);
    const memberUrl = `${served.origin}/dashboard/${t.projectId}/members/${s.m.ada.userId}`;
    await page.goto(memberUrl);
    expect(await page.getByLabel('Days to add').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save the end date' }).count()).toBe(0);
    expect(await main(page)).toContain('Your admin account may only look at members.');
    await check(page, '12-member-read-only');
    // The page's own CSRF token (the sign-out form's), posted by hand as a forged form would be.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const post = await page.request.post(`${memberUrl}/extend`, { form: { _csrf: csrf, days: '30' }, maxRedirects: 0 });
    expect(post.status()).toBe(403);
    expect(await post.text()).toContain('This needs the permission memberships:update');
    const end = await page.request.post(`${memberUrl}/end`, { form: { _csrf: csrf, confirm: 'yes' }, maxRedirects: 0 });
    expect(end.status()).toBe(403);
    await page.goto(`${memberUrl}/end`);
    expect(await heading(page)).toBe('Not allowed');
    await check(page, '13-not-allowed');
    expect((await membershipRow(served.h, t.projectId, s.m.ada.userId))!.end_date).toBe(s.m.ada.endDate);
    await context.close();
  });
});
