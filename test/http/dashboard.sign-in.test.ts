import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser, linkPath } from '../support/dashboard.js';
import { useHarness } from '../support/harness.js';

/**
 * Signing in to the dashboard with a one-time link and out again (docs/dashboard.md, "Signing in"):
 * the link's page spends nothing, its POST starts a session whose cookie is scoped to the project's
 * dashboard, every page needs the session, and signing out revokes it.
 */
describe('dashboard sign-in with a link', () => {
  const h = useHarness();

  it('GET /dashboard says what it is and how to get in', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/dashboard' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('npx tenure admin link --project PROJECT_ID');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('the link page spends nothing; its POST starts the session, scoped cookie, overview shown; sign-out revokes it', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    const path = await linkPath(h, t);
    // A link preview (a GET, twice) does not spend it.
    expect((await b.get(path)).statusCode).toBe(200);
    const page = await b.get(path);
    expect(page.body).toContain('Sign in');
    const signIn = await b.post(path);
    expect(signIn.statusCode, signIn.body).toBe(303);
    const cookie = (signIn.cookies as { name: string; path?: string; httpOnly?: boolean; sameSite?: string; maxAge?: number }[]).find((c) => c.name === 'tenure_dashboard');
    expect(cookie).toMatchObject({ path: `/dashboard/${t.projectId}`, httpOnly: true, sameSite: 'Lax', maxAge: 7 * 24 * 3600 });
    const overview = await b.get(`/dashboard/${t.projectId}`);
    expect(overview.statusCode, overview.body).toBe(200);
    expect(overview.body).toContain('Signed in as <strong>Owner</strong>');
    expect(overview.body).toContain('Active members');
    for (const label of ['Overview', 'Members', 'Plans', 'Integrations', 'Money', 'Admins', 'Sessions', 'Audit']) expect(overview.body).toContain(`>${label}</a>`);

    // Used: the same link again is refused, nothing started.
    const again = await new DashboardBrowser(h).get(path);
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This sign-in link was already used');

    const out = await b.post(`/dashboard/${t.projectId}/sign-out`);
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe(`/dashboard/${t.projectId}/sign-in?signed_out=1`);
    expect(b.cookies.has('tenure_dashboard')).toBe(false);
    const signedOut = await b.get(`/dashboard/${t.projectId}/sign-in?signed_out=1`);
    expect(signedOut.body).toContain('You are signed out.');
  });

  it('no session, a revoked one, or another project\'s: 303 to the sign-in page; an unknown project: 404 page', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const b = new DashboardBrowser(h);
    expect((await b.get(`/dashboard/${t.projectId}`)).headers.location).toBe(`/dashboard/${t.projectId}/sign-in`);
    await b.signIn(t);
    const cross = await b.get(`/dashboard/${other.projectId}`);
    expect(cross.statusCode).toBe(303);
    expect(cross.headers.location).toBe(`/dashboard/${other.projectId}/sign-in`);
    const unknown = await b.get('/dashboard/00000000-0000-4000-8000-000000000000/sign-in');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('No such dashboard');
    const garbage = await b.get('/dashboard/not-a-project');
    expect(garbage.statusCode).toBe(404);
  });

  it('a POST without the CSRF token is refused with a clear page and spends nothing', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    const path = await linkPath(h, t);
    await b.get(path);
    const res = await b.post(path, { _csrf: 'forged' });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Please try again');
    expect((await b.get(path)).statusCode).toBe(200);
  });

  it('an expired link, a garbled one, and a link of an admin removed since: a clear page, no session', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    const expired = await linkPath(h, t);
    await h.database.db.execute(sql`UPDATE dashboard_links SET expires_at = now() - interval '1 second' WHERE project_id = ${t.projectId}`);
    const page = await b.get(expired);
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This sign-in link has expired');
    expect(page.body).toContain('Nothing was changed.');
    const garbled = await b.get(`${expired.slice(0, -3)}xyz`);
    expect(garbled.statusCode).toBe(404);
    expect(garbled.body).toContain('This sign-in link is not valid');
    const admin = await createAdmin(t, ['admins:read']);
    const removedLater = await linkPath(h, t, admin.user_id);
    await b.get(removedLater);
    await t.request({ method: 'DELETE', url: `${t.base}/admins/${admin.user_id}` });
    const refused = await b.post(removedLater);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('This account is no longer an admin');
    const sessions = rowsOf(await h.database.db.execute(sql`SELECT 1 FROM dashboard_sessions WHERE project_id = ${t.projectId}`));
    expect(sessions).toStrictEqual([]);
  });

  it('an admin removed while signed in is sent to the sign-in page at their next request', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['admins:read']);
    const b = new DashboardBrowser(h);
    await b.signIn(t, admin.user_id);
    expect((await b.get(`/dashboard/${t.projectId}/admins`)).statusCode).toBe(200);
    await t.request({ method: 'DELETE', url: `${t.base}/admins/${admin.user_id}` });
    const after = await b.get(`/dashboard/${t.projectId}/admins`);
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe(`/dashboard/${t.projectId}/sign-in`);
  });

  it("an admin's link signs them in under their name", async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['admins:read'], { first_name: 'Ada' });
    const b = new DashboardBrowser(h);
    await b.signIn(t, admin.user_id);
    const overview = await b.get(`/dashboard/${t.projectId}`);
    expect(overview.body).toContain(`Signed in as <strong>Ada (${admin.user_id})</strong>`);
  });
});

describe('dashboard addresses that are no page', () => {
  const h = useHarness();
  it('answer the dashboard 404 page', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const res = await b.get(`/dashboard/${t.projectId}/nothing-here`);
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('Page not found');
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('dashboard sign-in links in the logs', () => {
  it('the token in a sign-in link is redacted from logged addresses', async () => {
    const { redactUrl } = await import('../../src/logger.js');
    expect(redactUrl('/dashboard/sign-in/abcDEF123_-abcDEF123_-abcDEF123_-abcDEF123_-abc')).toBe('/dashboard/sign-in/[redacted]');
    expect(redactUrl('/dashboard/discord/callback?code=c&state=s')).toBe('/dashboard/discord/callback?code=[redacted]&state=[redacted]');
  });
});
