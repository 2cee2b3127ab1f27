import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { FIRST_EXPORT_BATCH } from '../../src/domain/dashboard-members/members.service.js';
import { parseMemberQuery, type MemberQuery } from '../../src/domain/dashboard-members/member-query.js';
import type { MemberRow } from '../../src/domain/dashboard-members/member-views.js';
import { actorOf, seedMembers, type SeededName, type SeededProject } from '../support/dashboard-members.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * The dashboard's members table on both storages (docs/dashboard-members.md): each status and
 * saved view as defined there, the search, the sorts, keyset paging both ways over every row once,
 * the rows' access and unreachable flags, the export of a view, and the permission it needs.
 */
describe('dashboard members table', () => {
  const h = useHarness();

  const query = (fields: Record<string, string>): MemberQuery => {
    const q = parseMemberQuery(fields);
    if (!q.ok) throw new Error(q.error.message);
    return q.value;
  };
  const table = async (t: Tenant, fields: Record<string, string>) => {
    const page = await h.services.dashboardMembers.table(actorOf(t, ['memberships:read']), query(fields));
    if (!page.ok) throw new Error(page.error.message);
    return page.value;
  };
  const namesOf = (s: SeededProject, rows: MemberRow[]) => {
    const byUser = new Map(Object.entries(s.m).map(([name, x]) => [x.userId, name]));
    return rows.map((r) => byUser.get(r.userId));
  };
  const names = async (t: Tenant, s: SeededProject, fields: Record<string, string>) => namesOf(s, (await table(t, fields)).rows);

  it('each status is one state; "active" is every kind of active that is not banned; statuses read as defined', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const all = await table(t, {});
    // Newest first by default: created one minute apart in seeding order.
    expect(namesOf(s, all.rows)).toStrictEqual(['unlinked', 'failed', 'banned', 'expired', 'cancelling', 'grace', 'trial', 'bob', 'ada']);
    expect(Object.fromEntries(all.rows.map((r) => [namesOf(s, [r])[0], r.status]))).toStrictEqual({
      ada: 'active', bob: 'active', trial: 'trial', grace: 'in_grace', cancelling: 'cancelling', expired: 'expired', banned: 'banned', failed: 'active', unlinked: 'active',
    });
    expect({ total: all.total, capped: all.capped, next: all.next, previous: all.previous }).toStrictEqual({ total: 9, capped: false, next: null, previous: null });
    expect(await names(t, s, { status: 'active', sort: 'end_date' })).toStrictEqual(['bob', 'ada', 'grace', 'cancelling', 'trial', 'failed', 'unlinked']);
    const only: [string, SeededName[]][] = [
      ['in_grace', ['grace']], ['cancelling', ['cancelling']], ['trial', ['trial']], ['expired', ['expired']], ['banned', ['banned']],
    ];
    for (const [status, want] of only) expect(await names(t, s, { status }), status).toStrictEqual(want);
    expect(await names(t, s, { plan: s.planB, sort: 'end_date' })).toStrictEqual(['expired', 'bob', 'banned']);
    expect(await names(t, s, { plan: s.planB, status: 'active' })).toStrictEqual(['bob']);
  });

  it('saved views: expiring in 7 days, payment failed, access failed, not linked', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    expect(await names(t, s, { view: 'expiring_7d' })).toStrictEqual(['bob', 'ada']);
    expect(await names(t, s, { view: 'payment_failed' })).toStrictEqual(['grace']);
    expect(await names(t, s, { view: 'access_failed' })).toStrictEqual(['failed']);
    expect(await names(t, s, { view: 'not_linked' })).toStrictEqual(['unlinked']);
    expect(await names(t, s, { view: 'expiring_7d', plan: s.planA })).toStrictEqual(['ada']);
  });

  it('search: a prefix of the id, the name or the username, any case; LIKE wildcards match themselves', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    expect(await names(t, s, { q: 'ADA' })).toStrictEqual(['ada']);
    expect(await names(t, s, { q: 'lovel' })).toStrictEqual(['ada']);
    expect(await names(t, s, { q: s.m.grace.userId.slice(0, 17) })).toContain('grace');
    expect(await names(t, s, { q: s.m.grace.userId })).toStrictEqual(['grace']);
    expect(await names(t, s, { q: 'tri' })).toStrictEqual(['trial']);
    expect(await names(t, s, { q: 'builder_50%' })).toStrictEqual(['bob']);
    expect(await names(t, s, { q: 'b%' })).toStrictEqual([]);
    expect(await names(t, s, { q: 'ovelace' })).toStrictEqual([]);
    expect(await names(t, s, { q: 'b', sort: 'name' })).toStrictEqual(['banned', 'bob']);
  });

  it('sorts by end date, creation and name, each way; paging by key visits every row once, forwards and back', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const byEnd = ['expired', 'bob', 'ada', 'grace', 'cancelling', 'trial', 'banned', 'failed', 'unlinked'];
    expect(await names(t, s, { sort: 'end_date' })).toStrictEqual(byEnd);
    expect(await names(t, s, { sort: '-end_date' })).toStrictEqual([...byEnd].reverse());
    expect(await names(t, s, { sort: 'created' })).toStrictEqual(['ada', 'bob', 'trial', 'grace', 'cancelling', 'expired', 'banned', 'failed', 'unlinked']);
    // The displayed name (first name, else username), lower-cased; no name sorts first, by id.
    const byName = ['unlinked', 'ada', 'banned', 'bob', 'cancelling', 'expired', 'failed', 'grace', 'trial'];
    expect(await names(t, s, { sort: 'name' })).toStrictEqual(byName);
    expect(await names(t, s, { sort: '-name' })).toStrictEqual([...byName].reverse());
    for (const sort of ['end_date', '-created', 'name']) {
      const seen = (await table(t, { sort, limit: '25' })).rows;
      // 25 is the smallest page the form offers: walk with the service's cursors at 2 a page instead.
      const q = query({ sort });
      let cursor = null as MemberQuery['cursor'];
      const walked: string[] = [];
      for (;;) {
        const p = await h.services.dashboardMembers.table(actorOf(t), { ...q, limit: 2, cursor });
        if (!p.ok) throw new Error(p.error.message);
        walked.push(...p.value.rows.map((r) => r.userId));
        if (!p.value.next) break;
        cursor = query({ sort, after: p.value.next }).cursor;
      }
      expect(walked, sort).toStrictEqual(seen.map((r) => r.userId));
      // Back from the last page: the previous cursors give the same rows in the same order.
      const back: string[] = [];
      for (;;) {
        const p = await h.services.dashboardMembers.table(actorOf(t), { ...q, limit: 2, cursor });
        if (!p.ok) throw new Error(p.error.message);
        back.unshift(...p.value.rows.map((r) => r.userId));
        if (!p.value.previous) break;
        cursor = query({ sort, before: p.value.previous }).cursor;
      }
      expect(back, `${sort} backwards`).toStrictEqual(walked);
    }
  });

  it("rows carry their access per target and unreachable flags; a cursor of another sort is refused", async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const rows = (await table(t, {})).rows;
    const row = (n: SeededName) => rows.find((r) => r.userId === s.m[n].userId)!;
    expect(row('failed').access).toStrictEqual([{ targetName: 'VIP role', platform: 'discord', desired: 'granted', state: 'failed' }]);
    expect(row('unlinked').unreachable).toStrictEqual([{ platform: 'discord', reason: 'dm_closed' }]);
    expect(row('unlinked').firstName).toBeNull();
    expect(row('ada')).toMatchObject({ firstName: 'Ada', username: 'lovelace', planName: 'Gold', endDate: s.m.ada.endDate });
    expect(row('bob').access).toStrictEqual([]);
    const p = await h.services.dashboardMembers.table(actorOf(t), { ...query({ sort: 'end_date' }), limit: 2 });
    expect(p.ok && p.value.next).toBeTruthy();
    if (!p.ok || !p.value.next) return;
    const wrong = parseMemberQuery({ sort: 'name', after: p.value.next });
    expect(wrong.ok ? null : wrong.error.message).toBe('after is not a page of this table: start from the first page');
  });

  it('the export starts with a small batch and grows: every row once, in order, across the batches', async () => {
    const t = await h.tenant();
    const n = 700;
    await h.database.db.execute(sql`INSERT INTO users (project_id, user_id) SELECT ${t.projectId}, (300000000000 + g)::text FROM generate_series(1, ${n}) g`);
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, end_date, status, created_at)
      SELECT ${t.projectId}, (300000000000 + g)::text, now() + g * interval '1 hour', 'active', now() - interval '1 day'
      FROM generate_series(1, ${n}) g`);
    const sizes: number[] = [];
    const users: string[] = [];
    for await (const batch of h.services.dashboardMembers.exportRows(actorOf(t, ['memberships:read']), { sort: 'end_date' })) {
      sizes.push(batch.length);
      users.push(...batch.map((r) => r.userId));
    }
    expect(sizes).toStrictEqual([FIRST_EXPORT_BATCH, FIRST_EXPORT_BATCH * 4, n - FIRST_EXPORT_BATCH * 5]);
    expect(users).toStrictEqual(Array.from({ length: n }, (_, i) => String(300000000000 + i + 1)));
  });

  it('the export gives every row of the view in its order; reading needs memberships:read', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const rows: MemberRow[] = [];
    for await (const batch of h.services.dashboardMembers.exportRows(actorOf(t, ['memberships:read']), { status: 'active', sort: 'end_date' })) rows.push(...batch);
    expect(namesOf(s, rows)).toStrictEqual(['bob', 'ada', 'grace', 'cancelling', 'trial', 'failed', 'unlinked']);
    const refused = await h.services.dashboardMembers.table(actorOf(t, ['memberships:update']), query({}));
    expect(refused.ok ? null : [refused.error.status, refused.error.message]).toStrictEqual([403, 'This needs the permission memberships:read']);
    const none: MemberRow[] = [];
    for await (const batch of h.services.dashboardMembers.exportRows(actorOf(t, ['ban:add']), { sort: 'end_date' })) none.push(...batch);
    expect(none).toStrictEqual([]);
  });
});
