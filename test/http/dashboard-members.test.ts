import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { membershipRow } from '../support/api.js';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { seedMembers } from '../support/dashboard-members.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { textOf } from '../support/portal.js';

/**
 * The members pages over HTTP (docs/dashboard-members.md): the table's form, views, paging and
 * export; a member's page; each action's POST, its confirmation step, its notice; bad input a clear
 * page with nothing changed; a missing permission hides the form and refuses the POST.
 */
describe('dashboard members pages', () => {
  const h = useHarness();
  const members = (t: Tenant, q = '') => `/dashboard/${t.projectId}/members${q}`;
  const auditCount = async (t: Tenant) =>
    rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM dashboard_audit WHERE project_id = ${t.projectId} AND action NOT LIKE 'session.%'`))[0]!.n;

  it('the table: every member, a filter, a search, a saved view and the CSV of the view', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const all = await b.get(members(t));
    expect(all.statusCode, all.body).toBe(200);
    expect(textOf(all.body)).toContain('9 members match');
    expect(all.body).toContain(`href="/dashboard/${t.projectId}/members/${s.m.ada.userId}"`);
    const banned = textOf((await b.get(members(t, '?status=banned&q=&plan=&sort=-created&limit=50'))).body);
    expect(banned).toContain('1 member matches');
    expect(banned).toContain('Ben');
    expect(textOf((await b.get(members(t, '?q=LOVE'))).body)).toContain('Ada');
    const view = await b.get(members(t, '?view=expiring_7d'));
    expect(textOf(view.body)).toMatch(/2 members match .*Members: Expiring in 7 days/);
    const first = await b.get(members(t, '?sort=end_date&limit=25'));
    expect(first.body).not.toContain('rel="next"');
    const csv = await b.get(members(t, '/export?status=active&sort=end_date'));
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="members-\d{4}-\d{2}-\d{2}\.csv"$/);
    const records = parse(csv.body, { columns: true }) as Record<string, string>[];
    expect(records.map((r) => r.user_id)).toStrictEqual(['bob', 'ada', 'grace', 'cancelling', 'trial', 'failed', 'unlinked'].map((n) => s.m[n as 'ada'].userId));
    expect(records.find((r) => r.user_id === s.m.failed.userId)).toMatchObject({ first_name: 'Faye', plan_name: 'Gold', status: 'active', access: 'VIP role: failed' });
    expect(records.find((r) => r.user_id === s.m.unlinked.userId)?.unreachable).toBe('Discord: DMs closed');
  });

  it('pages: next and previous links walk 60 members 25 at a time, each once, in order', async () => {
    const t = await h.tenant();
    await h.database.db.execute(sql`INSERT INTO users (project_id, user_id, first_name)
      SELECT ${t.projectId}, (200000000000000000 + g)::text, 'Member ' || lpad(g::text, 2, '0') FROM generate_series(1, 60) g`);
    await h.database.db.execute(sql`INSERT INTO memberships (project_id, user_id, end_date, created_at)
      SELECT ${t.projectId}, (200000000000000000 + g)::text, now() + make_interval(days => g), now() - make_interval(mins => g) FROM generate_series(1, 60) g`);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const idsOf = (html: string) => [...html.matchAll(/<td data-label="Member"><a href="[^"]+\/members\/(\d+)"/g)].map((m) => m[1]!);
    const linkOf = (html: string, rel: 'next' | 'prev') => [...html.matchAll(/href="([^"]+)" rel="(next|prev)"/g)].find((m) => m[2] === rel)?.[1]?.replaceAll('&amp;', '&');
    const seen: string[][] = [];
    let page = await b.get(members(t, '?sort=name&limit=25'));
    seen.push(idsOf(page.body));
    for (let next = linkOf(page.body, 'next'); next; next = linkOf(page.body, 'next')) {
      page = await b.get(next);
      expect(page.statusCode, page.body).toBe(200);
      seen.push(idsOf(page.body));
    }
    expect(seen.map((p) => p.length)).toStrictEqual([25, 25, 10]);
    const want = Array.from({ length: 60 }, (_, i) => String(200000000000000000n + BigInt(i + 1)));
    expect(seen.flat()).toStrictEqual(want);
    const back = await b.get(linkOf(page.body, 'prev')!);
    expect(idsOf(back.body)).toStrictEqual(want.slice(25, 50));
    expect(textOf(back.body)).toContain('60 members match');
  });

  it('bad filters are a clear 422 page that lists nothing; an unknown member is a 404 page', async () => {
    const t = await h.tenant();
    await seedMembers(h, t);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const cases: [string, string][] = [
      ['?status=gold', 'status must be one of: active, in_grace, cancelling, trial, expired, banned'],
      ['?plan=gold', 'plan must be a plan id (a UUID)'],
      ['?sort=price', 'sort must be one of:'],
      ['?colour=red', 'colour is not a filter of the members table'],
      ['?after=garbage', 'after is not a page of this table'],
    ];
    for (const [q, message] of cases) {
      const res = await b.get(members(t, q));
      expect(res.statusCode, q).toBe(422);
      expect(textOf(res.body), q).toContain(message);
      expect(res.body, q).not.toContain('<tbody>');
    }
    expect((await b.get(members(t, '/export?status=gold'))).statusCode).toBe(422);
    const unknown = await b.get(members(t, '/123456789012345678'));
    expect(unknown.statusCode).toBe(404);
    expect(textOf(unknown.body)).toContain('There is no member with this id in this project.');
    expect((await b.get(members(t, '/abc'))).statusCode).toBe(404);
  });

  it("a member's page and each action: post, redirect with a notice, the change made and recorded", async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const page = members(t, `/${s.m.ada.userId}`);
    const shown = textOf((await b.get(page)).body);
    for (const part of ['Membership', 'Gold', 'Access', 'VIP role', 'Payments', 'Messages sent', 'Add days or set the end date']) expect(shown).toContain(part);
    const extended = await b.post(`${page}/extend`, { days: '7', end_date: '' });
    expect(extended.statusCode, extended.body).toBe(303);
    expect(extended.headers.location).toBe(`${page}?notice=extended`);
    expect(textOf((await b.get(String(extended.headers.location))).body)).toContain('The end date is set.');
    expect(Date.parse((await membershipRow(h, t.projectId, s.m.ada.userId))!.end_date)).toBe(Date.parse(s.m.ada.endDate) + 7 * 86_400_000);
    const bad = await b.post(`${page}/extend`, { days: '', end_date: '2031-02-30' });
    expect(bad.statusCode).toBe(422);
    expect(textOf(bad.body)).toContain('2031-02-30 is not a real date. Nothing was changed.');
    // End now: the first POST (or the GET) is the confirmation page; only its button acts.
    const ask = await b.post(`${page}/end`);
    expect(ask.statusCode).toBe(200);
    expect(textOf(ask.body)).toContain('End this membership now?');
    expect((await membershipRow(h, t.projectId, s.m.ada.userId))!.status).toBe('active');
    const ended = await b.post(`${page}/end`, { confirm: 'yes' });
    expect(ended.headers.location).toBe(`${page}?notice=ended`);
    expect(Date.parse((await membershipRow(h, t.projectId, s.m.ada.userId))!.end_date)).toBeLessThanOrEqual(Date.now());
    await b.get(page);
    expect((await b.post(`${page}/ban`, { confirm: 'yes', reason: 'fraud' })).headers.location).toBe(`${page}?notice=banned`);
    expect(textOf((await b.get(page)).body)).toMatch(/Banned since .*: fraud/);
    expect((await b.post(`${page}/unban`)).headers.location).toBe(`${page}?notice=unbanned`);
    expect((await b.post(`${page}/resync`)).headers.location).toBe(`${page}?notice=resynced`);
    const link = await b.post(`${page}/portal-link`);
    expect(link.statusCode).toBe(200);
    expect(link.body).toMatch(/value="http[^"]+\/portal\/[A-Za-z0-9_-]+"/);
    const refused = await b.post(`${page}/cancel-renewal`);
    expect([refused.statusCode, textOf(refused.body)]).toStrictEqual([409, expect.stringContaining('This membership has no renewal to cancel. Nothing was changed.')]);
    expect((await b.post(`${page}/frobnicate`)).statusCode).toBe(404);
    expect(await auditCount(t)).toBe(6);
    const forged = await b.post(`${page}/extend`, { _csrf: 'forged', days: '1' });
    expect(forged.statusCode).toBe(403);
    expect(await auditCount(t)).toBe(6);
  });

  it('an admin without memberships:update sees no action forms, and each POST is a 403 that changes nothing', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const admin = await createAdmin(t, ['memberships:read']);
    const b = new DashboardBrowser(h);
    await b.signIn(t, admin.user_id);
    const page = members(t, `/${s.m.ada.userId}`);
    const res = await b.get(page);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('/extend"');
    expect(res.body).not.toContain('/end"');
    expect(res.body).not.toContain('/ban"');
    expect(textOf(res.body)).toContain('Your admin account may only look at members.');
    for (const [action, fields, permission] of [
      ['extend', { days: '30' }, 'memberships:update'],
      ['end', { confirm: 'yes' }, 'memberships:update'],
      ['ban', { confirm: 'yes' }, 'ban:add'],
      ['portal-link', {}, 'memberships:update'],
    ] as const) {
      const post = await b.post(`${page}/${action}`, fields);
      expect(post.statusCode, action).toBe(403);
      expect(textOf(post.body), action).toContain(`This needs the permission ${permission}`);
    }
    expect((await b.get(`${page}/end`)).statusCode).toBe(403);
    expect((await membershipRow(h, t.projectId, s.m.ada.userId))!.end_date).toBe(s.m.ada.endDate);
    expect(await auditCount(t)).toBe(0);
    const none = await createAdmin(t, ['plans:read']);
    const c = new DashboardBrowser(h);
    await c.signIn(t, none.user_id);
    expect((await c.get(members(t))).statusCode).toBe(403);
    expect((await c.get(members(t, '/export'))).statusCode).toBe(403);
  });
});
