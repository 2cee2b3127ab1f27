import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectRefusal, projectState } from '../support/api.js';
import { headingOf, openPage, pathOf, payLinkStarted, portalLinksPath } from '../support/front-desk.js';
import { userId, useHarness } from '../support/harness.js';

describe('POST /v2/projects/{project_id}/users/{user_id}/portal-links and the portal page: errors', () => {
  const h = useHarness();

  it('refuses a user id that is not digits with a 422, changing nothing', async () => {
    const t = await h.tenant();
    const before = await projectState(h, t.projectId);
    expectRefusal(await t.request({ method: 'POST', url: portalLinksPath(t, 'bob') }), 'user_id must be a string of digits');
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('an unknown link is a 404 page, an expired one a 410 page', async () => {
    // A token past the router's 100-character limit on a parameter gets the same page, never JSON.
    for (const path of ['A'.repeat(32), 'nope', 'x'.repeat(101), 'x'.repeat(300), 'a/b/c'].map((token) => `/portal/${token}`)) {
      const res = await openPage(h, path);
      expect(res.statusCode, `${path.length}: ${res.body}`).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(headingOf(res.body)).toBe('Link not found');
    }
    const billing = await openPage(h, `/portal/${'x'.repeat(300)}/billing`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '_csrf=x' });
    expect(billing.statusCode, billing.body).toBe(404);
    expect(billing.headers['content-type']).toMatch(/^text\/html/);
    const t = await h.tenant();
    const link = (await t.request({ method: 'POST', url: portalLinksPath(t, userId()) })).json().data as { url: string };
    await h.database.db.execute(sql`UPDATE portal_links SET expires_at = now() - interval '1 minute' WHERE project_id = ${t.projectId}`);
    const res = await openPage(h, pathOf(link.url));
    expect(res.statusCode).toBe(410);
    expect(headingOf(res.body)).toBe('This link has expired');
  });

  it('shows a member with nothing paid that there is nothing to manage, and no form', async () => {
    const t = await h.tenant();
    const link = (await t.request({ method: 'POST', url: portalLinksPath(t, userId()) })).json().data as { url: string };
    const page = await openPage(h, pathOf(link.url));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('You have no memberships yet.');
    expect(page.body).toContain('There is no card or subscription to manage yet.');
    expect(page.body).not.toContain('<form');
  });

  it('the billing button refuses a post without its CSRF token (403) or from another browser (410), and says when there is nothing to manage', async () => {
    const { t, user } = await payLinkStarted(h, { recurring: true });
    // A payment with no Stripe customer recorded (as a one-time checkout may leave it).
    await h.database.db.execute(sql`INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status) VALUES (${t.projectId}, 'stripe', 'pi_test_portal', ${user}, 1000, 'USD', 'succeeded')`);
    await h.database.db.execute(sql`INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, customer_id, merchant_account_id)
      SELECT ${t.projectId}, 'stripe', 'pi_test_portal_2', ${user}, 1000, 'USD', 'succeeded', 'cus_test_portal', id FROM merchant_accounts WHERE project_id = ${t.projectId}`);
    const link = (await t.request({ method: 'POST', url: portalLinksPath(t, user) })).json().data as { url: string };
    const page = await openPage(h, pathOf(link.url));
    expect(page.statusCode).toBe(200);
    const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const noToken = await openPage(h, `${pathOf(link.url)}/billing`, { method: 'POST', headers: { ...form, cookie }, payload: '' });
    expect(noToken.statusCode, noToken.body).toBe(403);
    expect(headingOf(noToken.body)).toBe('Please try again');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const sessionOnly = page.cookies.filter((c) => c.name !== 'tenure_portal').map((c) => `${c.name}=${c.value}`).join('; ');
    const otherBrowser = await openPage(h, `${pathOf(link.url)}/billing`, { method: 'POST', headers: { ...form, cookie: sessionOnly }, payload: `_csrf=${encodeURIComponent(token)}` });
    expect(otherBrowser.statusCode, otherBrowser.body).toBe(410);
    await h.database.db.execute(sql`UPDATE payments SET customer_id = NULL WHERE project_id = ${t.projectId}`);
    const nothing = await openPage(h, `${pathOf(link.url)}/billing`, { method: 'POST', headers: { ...form, cookie }, payload: `_csrf=${encodeURIComponent(token)}` });
    expect(nothing.statusCode, nothing.body).toBe(409);
    expect(headingOf(nothing.body)).toBe('Nothing to manage yet');
  });
});
