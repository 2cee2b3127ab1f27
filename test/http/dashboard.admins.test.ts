import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness } from '../support/harness.js';
import { seedUser } from '../support/keys.js';

/**
 * The dashboard's admins, sessions and audit pages (docs/dashboard.md): each action through
 * AdminsService or the sessions service, checked against the actor's permissions, confirmed when
 * it removes something, and recorded; refusals change nothing.
 */
describe('dashboard admins, sessions and audit pages', () => {
  const h = useHarness();
  const adminsOf = async (t: { request: (o: object) => Promise<{ json: () => { data: { user_id: string; permissions: string[] }[] } }>; base: string }) =>
    (await t.request({ method: 'GET', url: `${t.base}/admins` })).json().data;

  it('the owner adds an admin with ticked permissions, changes them, removes them after a confirmation; the audit log shows each', async () => {
    const t = await h.tenant();
    const user = await seedUser(t, { first_name: 'Grace' });
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const page = await b.get(`/dashboard/${t.projectId}/admins`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Add an admin');
    const add = await b.post(`/dashboard/${t.projectId}/admins/add`, { user_id: user, permissions: ['memberships:read', 'plans:read'] });
    expect(add.statusCode, add.body).toBe(303);
    expect(add.headers.location).toBe(`/dashboard/${t.projectId}/admins?notice=added`);
    expect((await b.get(add.headers.location as string)).body).toContain('Admin added.');
    expect(await adminsOf(t)).toMatchObject([{ user_id: user, permissions: ['memberships:read', 'plans:read'] }]);

    const edit = await b.get(`/dashboard/${t.projectId}/admins/${user}`);
    expect(edit.body).toMatch(/value="memberships:read" checked/);
    const update = await b.post(`/dashboard/${t.projectId}/admins/${user}/update`, { permissions: 'admins:read' });
    expect(update.statusCode, update.body).toBe(303);
    expect(await adminsOf(t)).toMatchObject([{ user_id: user, permissions: ['admins:read'] }]);

    const confirm = await b.get(`/dashboard/${t.projectId}/admins/${user}/remove`);
    expect(confirm.body).toContain('Remove Grace (');
    expect(await adminsOf(t)).toHaveLength(1);
    const remove = await b.post(`/dashboard/${t.projectId}/admins/${user}/remove`);
    expect(remove.statusCode).toBe(303);
    expect(await adminsOf(t)).toStrictEqual([]);

    const audit = await b.get(`/dashboard/${t.projectId}/audit`);
    const actions = [...audit.body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]);
    expect(actions).toStrictEqual(['admin.remove', 'admin.update', 'admin.add', 'session.sign-in']);
    expect(audit.body).toContain('method: link');
    expect(audit.body).toContain('after: admins:read; before: memberships:read, plans:read');
    expect(audit.body).toContain('permissions: memberships:read, plans:read');
  });

  it('bad input re-shows the form with the reason and changes nothing', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    await b.get(`/dashboard/${t.projectId}/admins`);
    const notDigits = await b.post(`/dashboard/${t.projectId}/admins/add`, { user_id: 'ada', permissions: 'plans:read' });
    expect(notDigits.statusCode).toBe(422);
    expect(notDigits.body).toContain('digits only');
    const unseen = await b.post(`/dashboard/${t.projectId}/admins/add`, { user_id: '123456789012345678', permissions: 'plans:read' });
    expect(unseen.statusCode).toBe(404);
    expect(unseen.body).toContain('has not seen user 123456789012345678');
    expect(unseen.body).toMatch(/value="plans:read" checked/);
    const user = await seedUser(t);
    const unknown = await b.post(`/dashboard/${t.projectId}/admins/add`, { user_id: user, permissions: ['plans:read', 'root:everything'] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain('Unknown permissions: root:everything');
    const noCsrf = await b.post(`/dashboard/${t.projectId}/admins/add`, { _csrf: 'nope', user_id: user, permissions: 'plans:read' });
    expect(noCsrf.statusCode).toBe(403);
    expect(await adminsOf(t)).toStrictEqual([]);
    const missing = await b.get(`/dashboard/${t.projectId}/admins/999/remove`);
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('is not an admin of this project');
  });

  it('an admin without admins:add sees no form, and a direct POST with a valid token is 403 naming the permission; nothing changes', async () => {
    const t = await h.tenant();
    const reader = await createAdmin(t, ['admins:read']);
    const user = await seedUser(t);
    const b = new DashboardBrowser(h);
    await b.signIn(t, reader.user_id);
    const page = await b.get(`/dashboard/${t.projectId}/admins`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Add an admin');
    expect(page.body).not.toContain('>Change<');
    const res = await b.post(`/dashboard/${t.projectId}/admins/add`, { user_id: user, permissions: 'all' });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('This needs the permission admins:add');
    expect((await adminsOf(t)).map((a) => a.user_id)).toStrictEqual([reader.user_id]);
    // Without admins:read the admins and audit pages are refused, the sessions page shows their own.
    await t.request({ method: 'PUT', url: `${t.base}/admins/${reader.user_id}`, payload: { permissions: ['plans:read'] } });
    expect((await b.get(`/dashboard/${t.projectId}/admins`)).statusCode).toBe(403);
    expect((await b.get(`/dashboard/${t.projectId}/audit`)).body).toContain('admins:read');
    const own = await b.get(`/dashboard/${t.projectId}/sessions`);
    expect(own.statusCode).toBe(200);
    expect(own.body).toContain('Your dashboard sessions.');
  });

  it('sessions: the owner revokes an admin session (it stops working); revoking your own signs you out; an admin cannot revoke another', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['plans:read']);
    const owner = new DashboardBrowser(h);
    await owner.signIn(t);
    const other = new DashboardBrowser(h);
    await other.signIn(t, admin.user_id);
    const list = await owner.get(`/dashboard/${t.projectId}/sessions`);
    const ids = [...list.body.matchAll(/\/sessions\/([0-9a-f-]{36})\/revoke/g)].map((m) => m[1]!);
    expect(ids).toHaveLength(2);
    // The admin may not revoke the owner's session: refused, still live.
    await other.get(`/dashboard/${t.projectId}/sessions`);
    const ownerSession = (await h.services.dashboardSessions.resolve(t.projectId, owner.cookies.get('tenure_dashboard')))!.sessionId;
    const refused = await other.post(`/dashboard/${t.projectId}/sessions/${ownerSession}/revoke`);
    expect(refused.statusCode).toBe(404);
    expect((await owner.get(`/dashboard/${t.projectId}`)).statusCode).toBe(200);

    const adminSession = ids.find((id) => id !== ownerSession)!;
    expect((await owner.get(`/dashboard/${t.projectId}/sessions/${adminSession}/revoke`)).body).toContain('Revoke this session?');
    const revoked = await owner.post(`/dashboard/${t.projectId}/sessions/${adminSession}/revoke`);
    expect(revoked.headers.location).toBe(`/dashboard/${t.projectId}/sessions?notice=revoked`);
    const bounced = await other.get(`/dashboard/${t.projectId}`);
    expect(bounced.statusCode).toBe(303);
    expect(bounced.headers.location).toBe(`/dashboard/${t.projectId}/sign-in`);

    const self = await owner.post(`/dashboard/${t.projectId}/sessions/${ownerSession}/revoke`);
    expect(self.headers.location).toBe(`/dashboard/${t.projectId}/sign-in?signed_out=1`);
    expect((await owner.get(`/dashboard/${t.projectId}`)).statusCode).toBe(303);
  });
});
