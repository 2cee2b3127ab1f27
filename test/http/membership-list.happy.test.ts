import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { MembershipView } from '../../src/domain/memberships/membership.view.js';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, expectSuccess, expireMembership } from '../support/api.js';
import { future, useHarness, type Tenant } from '../support/harness.js';
import { membershipList } from '../support/operations.js';

const LISTED = 'All memberships retrieved successfully';

describe(`${membershipList.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant) => `${t.base}/memberships`;

  /**
   * Creates `n` memberships and pins their creation times one minute apart (the first oldest), so
   * the newest-first order does not hinge on two requests landing in different milliseconds.
   * Returns them newest first, as the list should.
   */
  async function seed(t: Tenant, n: number): Promise<MembershipView[]> {
    const created: MembershipView[] = [];
    for (let i = 0; i < n; i++) created.push(await createMembership(t));
    for (const [i, m] of created.entries()) {
      await h.database.db.execute(
        sql`UPDATE memberships SET created_at = now() - make_interval(mins => ${n - i}) WHERE id = ${m.membership_id}`,
      );
    }
    return created.reverse();
  }

  async function list(t: Tenant, query = '') {
    const path = pathFor(t);
    return { res: await t.request({ method: 'GET', url: `${path}${query}` }), path };
  }

  it('answers total 0 and an empty list for a project without memberships', async () => {
    const t = await h.tenant();
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 0, message: LISTED, data: [] });
  });

  it('lists every membership, newest first, with total', async () => {
    const t = await h.tenant();
    const members = await seed(t, 3);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 3, message: LISTED, data: members });
  });

  it('pages with limit and offset; total stays the number of matches', async () => {
    const t = await h.tenant();
    const members = await seed(t, 5);
    const pages = [
      ['?limit=2', members.slice(0, 2)],
      ['?limit=2&offset=2', members.slice(2, 4)],
      ['?limit=2&offset=4', members.slice(4)],
      ['?offset=5', []],
      ['?limit=1&offset=100', []],
    ] as const;
    for (const [query, data] of pages) {
      const { res, path } = await list(t, query);
      expectSuccess(res, { method: 'GET', path, total: 5, message: LISTED, data });
    }
  });

  it('returns 20 by default and at most 100', async () => {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, end_date)
      SELECT ${t.projectId}, (1000 + g)::text, now() + interval '1 day' FROM generate_series(1, 105) g`);
    const byDefault = await list(t);
    expect(byDefault.res.statusCode, byDefault.res.body).toBe(200);
    expect(byDefault.res.json().total).toBe(105);
    expect(byDefault.res.json().data).toHaveLength(20);

    const max = await list(t, '?limit=100');
    expect(max.res.statusCode, max.res.body).toBe(200);
    expect(max.res.json().data).toHaveLength(100);

    // The pages cover every membership exactly once.
    const rest = await list(t, '?limit=100&offset=100');
    const ids = [...max.res.json().data, ...rest.res.json().data].map((m: MembershipView) => m.user_id);
    expect(new Set(ids).size).toBe(105);
  });

  it('filters by user_id', async () => {
    const t = await h.tenant();
    const [, target] = await seed(t, 3);
    const { res, path } = await list(t, `?user_id=${target!.user_id}`);
    expectSuccess(res, { method: 'GET', path, total: 1, message: LISTED, data: [target] });
  });

  it('answers total 0 for a user_id without a membership', async () => {
    const t = await h.tenant();
    await seed(t, 2);
    const { res, path } = await list(t, '?user_id=42');
    expectSuccess(res, { method: 'GET', path, total: 0, message: LISTED, data: [] });
  });

  it('lists expired memberships next to active ones', async () => {
    const t = await h.tenant();
    const [newest, oldest] = await seed(t, 2);
    const end = await expireMembership(h, oldest!.membership_id);
    const { res, path } = await list(t);
    expectSuccess(res, {
      method: 'GET',
      path,
      total: 2,
      message: LISTED,
      data: [newest, { ...oldest, status: 'expired', membership_end_date: end }],
    });
  });

  it('shows a membership past its end date as expired before the sweeper has marked it', async () => {
    const t = await h.tenant();
    const [newest, oldest] = await seed(t, 2);
    // The end date a second ago, the stored status left `active`: between the end date and the sweep.
    const [row] = rowsOf<{ end_date: string; status: string }>(
      await h.database.db.execute(sql`
        UPDATE memberships SET end_date = date_trunc('milliseconds', now() - interval '1 second')
        WHERE id = ${oldest!.membership_id}
        RETURNING to_char(end_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS end_date, status`),
    );
    expect(row!.status).toBe('active');
    const { res, path } = await list(t);
    expectSuccess(res, {
      method: 'GET',
      path,
      total: 2,
      message: LISTED,
      data: [newest, { ...oldest, status: 'expired', membership_end_date: row!.end_date }],
    });
  });

  it("never shows another project's memberships, even for the same user", async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const [mine] = await seed(t, 1);
    await createMembership(other, { userId: mine!.user_id, endDate: future(3).iso });
    await createMembership(other);
    const { res, path } = await list(t);
    expectSuccess(res, { method: 'GET', path, total: 1, message: LISTED, data: [mine] });
    const filtered = await list(t, `?user_id=${mine!.user_id}`);
    expectSuccess(filtered.res, { method: 'GET', path, total: 1, message: LISTED, data: [mine] });
  });

  it('no longer ignores what it does not take: ?status=expired filters, an unknown value or parameter is a 422 (memberships-queries.test.ts)', async () => {
    const t = await h.tenant();
    await seed(t, 1);
    const { res, path } = await list(t, '?status=expired');
    expectSuccess(res, { method: 'GET', path, total: 0, message: LISTED, data: [] });
    expect((await list(t, '?sort=asc')).res.statusCode).toBe(422);
    expect((await list(t, '?colour=blue')).res.statusCode).toBe(422);
  });
});
