import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { insertIntegration } from '../support/access-seed.js';
import { headingOf, pathOf } from '../support/front-desk.js';
import { useHarness, type Harness } from '../support/harness.js';
import { membershipOf } from '../support/payments.js';
import { csrfOf, openPortal, paidMember, portalLink, textOf } from '../support/portal.js';

const FORM = { name: 'Ada Lovelace', company: 'Analytical Engines GmbH', vat_id: 'de 123.456.789', line1: 'Hauptstraße 1', line2: '', postal_code: '10115', city: 'Berlin', state: '', country: 'de' };

/** A Telegram group of the member's plan, the member not in it yet, as the access engine leaves it. */
async function telegramChat(h: Harness, m: Awaited<ReturnType<typeof paidMember>>, o: { link: boolean }) {
  const targetId = randomUUID();
  const db = h.database.db;
  const { botId } = await insertIntegration(h, m.t.projectId, { platform: 'telegram' });
  await db.execute(sql`INSERT INTO targets (id, project_id, name, platform, kind, external_id) VALUES (${targetId}, ${m.t.projectId}, 'VIP chat', 'telegram', 'group', '-1001234567890')`);
  await db.execute(sql`INSERT INTO plan_targets (plan_id, target_id) VALUES (${m.plan.plan_id}, ${targetId})`);
  await db.execute(sql`
    INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
    VALUES (${m.t.projectId}, ${targetId}, ${m.user}, 'telegram', 'group', '-1001234567890', 'kick', 'granted', 'waiting_for_member')`);
  const membership = (await membershipOf(m.t, m.user))!;
  if (o.link) {
    await h.container.stores.telegramInvites.record({
      projectId: m.t.projectId,
      targetId,
      userId: m.user,
      membershipId: membership.membership_id,
      chatId: '-1001234567890',
      botId,
      inviteLink: 'https://t.me/+AbCdEfGhIjKlMnOp',
      name: 'tenure',
      createsJoinRequest: false,
      expiresAt: new Date(Date.now() + 86_400_000),
      createdAt: new Date(),
    });
  }
  return targetId;
}

describe('the portal: invoicing details, Manage billing, Telegram invites, sessions', () => {
  const h = useHarness();

  it('saves the invoicing form (normalised by the API rules) and hands the details to the Stripe customer on Manage billing', async () => {
    const m = await paidMember(h);
    const { browser } = await openPortal(h, m.portalPath);
    const form = await browser.get(`${m.portalPath}/invoicing`);
    expect(form.statusCode, form.body).toBe(200);
    expect(headingOf(form.body)).toBe('Invoicing details');
    const saved = await browser.post(`${m.portalPath}/invoicing`, { _csrf: csrfOf(form.body)!, ...FORM });
    expect(saved.statusCode, saved.body).toBe(303);
    expect(saved.headers.location).toBe(`${m.portalPath}?done=invoicing`);
    const api = await m.t.request({ method: 'GET', url: `${m.t.base}/users/${m.user}/invoicing` });
    expect(api.json().data).toMatchObject({
      name: 'Ada Lovelace',
      company: 'Analytical Engines GmbH',
      vat_id: 'DE123456789',
      address: { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', state: null, country: 'DE' },
    });
    const page = await browser.get(String(saved.headers.location));
    expect(textOf(page.body)).toContain('VAT ID DE123456789');

    const billing = await browser.post(`${m.portalPath}/billing`, { _csrf: csrfOf(page.body)! });
    expect(billing.statusCode, billing.body).toBe(303);
    const customerId = h.stripe.world.session(m.sessionId).customer!;
    expect(h.stripe.customers.get(customerId)).toMatchObject({
      name: 'Ada Lovelace',
      business_name: 'Analytical Engines GmbH',
      address: { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', state: null, country: 'DE' },
      invoice_settings: { custom_fields: [{ name: 'VAT ID', value: 'DE123456789' }] },
    });
  });

  it('shows a refused form again with the reason and what was typed, saving nothing; without its CSRF token it is refused', async () => {
    const m = await paidMember(h);
    const { browser } = await openPortal(h, m.portalPath);
    const form = await browser.get(`${m.portalPath}/invoicing`);
    const refused = await browser.post(`${m.portalPath}/invoicing`, { _csrf: csrfOf(form.body)!, ...FORM, city: '' });
    expect(refused.statusCode).toBe(422);
    expect(textOf(refused.body)).toContain('address.city must be 1 to 100 characters');
    expect(refused.body).toContain('value="Ada Lovelace"');
    const noToken = await browser.post(`${m.portalPath}/invoicing`, FORM);
    expect(noToken.statusCode).toBe(403);
    const api = await m.t.request({ method: 'GET', url: `${m.t.base}/users/${m.user}/invoicing` });
    expect(api.json().data.updated_at).toBeNull();
  });

  it("escapes what members type: a name with markup is shown as text", async () => {
    const m = await paidMember(h);
    await m.t.request({ method: 'PATCH', url: `${m.t.base}/users/${m.user}/invoicing`, payload: { name: '<script>alert(1)</script>' } });
    const { page } = await openPortal(h, m.portalPath);
    expect(page.body).not.toContain('<script>');
    expect(page.body).toContain('&lt;script&gt;');
  });

  it('gives the member their current Telegram invite link for a chat they are not in', async () => {
    const m = await paidMember(h);
    await telegramChat(h, m, { link: true });
    const { browser, page } = await openPortal(h, m.portalPath);
    expect(textOf(page.body)).toMatch(/VIP chat \(Telegram\) ?: You are not in this chat yet\./);
    const action = /action="([^"]+\/telegram-invite\/[0-9a-f-]{36})"/.exec(page.body)![1]!;
    const res = await browser.post(action, { _csrf: csrfOf(page.body)! });
    expect(res.statusCode, res.body).toBe(200);
    expect(headingOf(res.body)).toBe('Your invite link');
    expect(res.body).toContain('href="https://t.me/+AbCdEfGhIjKlMnOp"');
  });

  it('asks the access engine for a fresh link when none is current (the row goes back to pending)', async () => {
    const m = await paidMember(h);
    const targetId = await telegramChat(h, m, { link: false });
    const { browser, page } = await openPortal(h, m.portalPath);
    const res = await browser.post(`${m.portalPath}/telegram-invite/${targetId}`, { _csrf: csrfOf(page.body)! });
    expect(res.statusCode, res.body).toBe(202);
    expect(headingOf(res.body)).toBe('Your invite link is on its way');
    const rows = rowsOf<{ state: string; desired: string }>(await h.database.db.execute(sql`SELECT state, desired FROM access WHERE target_id = ${targetId} AND user_id = ${m.user}`));
    expect(rows).toStrictEqual([{ state: 'pending', desired: 'granted' }]);
    // A chat that is not theirs, or a made-up one: nothing to hand out.
    const none = await browser.post(`${m.portalPath}/telegram-invite/${randomUUID()}`, { _csrf: csrfOf(page.body)! });
    expect(none.statusCode).toBe(404);
  });

  it('a link opened once is refused in any other browser, its forms too; the session ends after 30 minutes', async () => {
    const m = await paidMember(h);
    const { browser, page } = await openPortal(h, m.portalPath);
    const stolen = await openPortal(h, pathOf(await portalLink(m.t, m.user)));
    const reused = await stolen.browser.get(m.portalPath);
    expect(reused.statusCode).toBe(410);
    expect(headingOf(reused.body)).toBe('This link has been used');
    expect((await stolen.browser.get(`${m.portalPath}/invoicing`)).statusCode).toBe(410);
    expect((await stolen.browser.post(`${m.portalPath}/billing`, { _csrf: stolen.csrf })).statusCode).toBe(410);
    // The cookie: HTTP-only, same-site, scoped to the link.
    const cookie = page.cookies.find((c) => c.name === 'tenure_portal')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: m.portalPath, maxAge: 1800 });
    // The session's end passes (as 30 minutes would): the page is refused in its own browser too.
    await h.database.db.execute(sql`UPDATE portal_links SET session_expires_at = now() - interval '1 second' WHERE project_id = ${m.t.projectId}`);
    const late = await browser.get(m.portalPath);
    expect(late.statusCode).toBe(410);
  });
});
