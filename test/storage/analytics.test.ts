import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { AnalyticsView } from '../../src/domain/analytics/analytics.view.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * Money and growth's definitions (docs/analytics.md) on a small hand-made project with known
 * answers, on both storages: memberships and payments written and changed by plain statements at
 * chosen instants, booked by the triggers of drizzle/functions.sql, read through the service.
 *
 * Plans: M (10.00 USD a month, recurring), Y (120.00 EUR a year, recurring), O (50.00 USD, once).
 * u4: no plan, 2025-12-20 → 2026-01-05 (active when January starts, churns on the 5th).
 * u1: M, Jan 1 10:00 → Feb 1 10:00, renewed an hour late (Feb 1 11:00) to Mar 1: continues, never churns.
 * u5: M, Jan 3 → Feb 3, lapses (its renewal failed), pays again Feb 20 (17 days later): churned, then new.
 * u2: O, Jan 10 → Feb 9. u3: Y, Jan 15 → 2027, refunded Jan 20 12:00 (ended then).
 * u6: no membership, a one-off 20.00 USD on Jan 25, disputed Jan 28.
 */
describe('analytics: the definitions on a known data set', () => {
  const h = useHarness();
  let t: Tenant;

  const run = (q: string) => h.database.db.execute(sql.raw(q));
  const view = (from: string, to: string, interval: 'day' | 'week' | 'month') =>
    h.services.analytics.view(t.projectId, { from: new Date(from), to: new Date(to), interval });

  beforeAll(async () => {
    t = await h.tenant();
    const p = `'${t.projectId}'`;
    const plans = rowsOf<{ id: string; name: string }>(
      await h.database.db.execute(sql`
        INSERT INTO plans (project_id, name, price, currency, duration, price_formatted, recurring, one_time) VALUES
          (${t.projectId}, 'M', 10, 'USD', '1 month', '$10.00', true, false),
          (${t.projectId}, 'Y', 120, 'EUR', '1 year', '€120.00', true, false),
          (${t.projectId}, 'O', 50, 'USD', '30 days', '$50.00', false, true)
        RETURNING id, name`),
    );
    const plan = (name: string) => `'${plans.find((x) => x.name === name)!.id}'`;
    const member = (user: string, planId: string, start: string, end: string) =>
      run(`INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date, created_at, updated_at)
           VALUES (${p}, '${user}', ${planId}, '${start}', '${end}', '${start}', '${start}')`);
    const change = (user: string, end: string, at: string) => run(`UPDATE memberships SET end_date = '${end}', updated_at = '${at}' WHERE project_id = ${p} AND user_id = '${user}'`);
    const pay = (key: string, user: string, planId: string, amount: number, currency: string, status: string, sub: string | null, at: string) =>
      run(`INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
           VALUES (${p}, 'stripe', '${key}', '${user}', ${planId}, ${amount}, '${currency}', '${status}', ${sub ? `'${sub}'` : 'NULL'}, '${at}', '${at}')`);
    const setStatus = (key: string, status: string, at: string) => run(`UPDATE payments SET status = '${status}', updated_at = '${at}' WHERE project_id = ${p} AND payment_key = '${key}'`);

    await member('u4', 'NULL', '2025-12-20T08:00:00Z', '2026-01-05T08:00:00Z');
    await member('u1', plan('M'), '2026-01-01T10:00:00Z', '2026-02-01T10:00:00Z');
    await pay('in_1', 'u1', plan('M'), 1000, 'USD', 'succeeded', 'sub_1', '2026-01-01T10:00:00Z');
    await member('u5', plan('M'), '2026-01-03T10:00:00Z', '2026-02-03T10:00:00Z');
    await pay('in_5', 'u5', plan('M'), 1000, 'USD', 'succeeded', 'sub_5', '2026-01-03T10:00:00Z');
    await member('u2', plan('O'), '2026-01-10T10:00:00Z', '2026-02-09T10:00:00Z');
    await pay('pi_2', 'u2', plan('O'), 5000, 'USD', 'succeeded', null, '2026-01-10T10:00:00Z');
    await member('u3', plan('Y'), '2026-01-15T10:00:00Z', '2027-01-15T10:00:00Z');
    await pay('in_3', 'u3', plan('Y'), 12000, 'EUR', 'succeeded', 'sub_3', '2026-01-15T10:00:00Z');
    await setStatus('in_3', 'refunded', '2026-01-20T12:00:00Z');
    await change('u3', '2026-01-20T12:00:00Z', '2026-01-20T12:00:00Z');
    await pay('pi_6', 'u6', 'NULL', 2000, 'USD', 'succeeded', null, '2026-01-25T10:00:00Z');
    await setStatus('pi_6', 'disputed', '2026-01-28T10:00:00Z');
    await change('u1', '2026-03-01T10:00:00Z', '2026-02-01T11:00:00Z');
    await pay('in_1b', 'u1', plan('M'), 1000, 'USD', 'succeeded', 'sub_1', '2026-02-01T11:00:00Z');
    await pay('in_5b', 'u5', plan('M'), 1000, 'USD', 'failed', 'sub_5', '2026-02-03T11:00:00Z');
    await pay('in_5c', 'u5', plan('M'), 1000, 'USD', 'succeeded', 'sub_5c', '2026-02-20T10:00:00Z');
    await change('u5', '2026-03-20T10:00:00Z', '2026-02-20T10:00:00Z');
    // A change of status only (the sweeper's mark) books nothing.
    await run(`UPDATE memberships SET status = 'expired' WHERE project_id = ${p} AND user_id = 'u2'`);
  });

  const revenue = (v: AnalyticsView, currency: string) => v.totals.revenue.find((r) => r.currency === currency);

  it('January by month: members at start and end, new, churned, churn rate, MRR, revenue by currency and plan', async () => {
    const v = await view('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'month');
    expect(v.series).toHaveLength(1);
    const { totals } = v;
    expect([totals.active_members_at_start, totals.new_members, totals.churned_members, totals.active_members]).toStrictEqual([1, 4, 2, 3]);
    // Stripe's rate: 2 churned of the 1 at the start and the 4 new.
    expect(totals.churn_rate).toBe(0.4);
    // u1 and u5 pay 10.00 a month; u3's yearly 120.00 EUR (10.00 a month) was refunded on the 20th.
    expect(totals.mrr).toStrictEqual([{ currency: 'USD', amount: '20.00', amount_minor: 2000 }]);
    expect(revenue(v, 'USD')).toMatchObject({ payments_count: 4, gross_minor: 9000, disputes_count: 1, disputes_minor: 2000, refunds_count: 0, net: '70.00', net_minor: 7000 });
    expect(revenue(v, 'EUR')).toMatchObject({ payments_count: 1, gross: '120.00', refunds_count: 1, refunds_minor: 12000, net_minor: 0 });
    expect([totals.failed_payments, totals.refunds_count, totals.disputes_count]).toStrictEqual([0, 1, 1]);
    const byPlan = Object.fromEntries(totals.revenue_by_plan.map((r) => [`${r.plan_name ?? 'none'} ${r.currency}`, r.gross_minor]));
    expect(byPlan).toStrictEqual({ 'M USD': 2000, 'O USD': 5000, 'none USD': 2000, 'Y EUR': 12000 });
    expect(totals.mrr_by_plan).toMatchObject([{ plan_name: 'M', currency: 'USD', amount_minor: 2000 }]);
  });

  it('February: a renewal an hour late continues, a lapse of 17 days is churned then new, a failed renewal counted', async () => {
    const v = await view('2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', 'month');
    const { totals } = v;
    expect([totals.active_members_at_start, totals.new_members, totals.churned_members, totals.active_members]).toStrictEqual([3, 1, 2, 2]);
    expect(totals.churn_rate).toBe(0.5);
    expect(totals.mrr).toStrictEqual([{ currency: 'USD', amount: '20.00', amount_minor: 2000 }]);
    expect(revenue(v, 'USD')).toMatchObject({ payments_count: 2, gross_minor: 2000, net_minor: 2000 });
    expect(totals.failed_payments).toBe(1);
  });

  it('by day and by week: points at each interval end add up to the totals; weeks are ISO weeks clipped to the period', async () => {
    const days = await view('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'day');
    expect(days.series).toHaveLength(31);
    const at = (d: number) => days.series[d - 1]!;
    expect([4, 5, 16, 20, 31].map((d) => at(d).active_members)).toStrictEqual([3, 2, 4, 3, 3]);
    expect(at(5)).toMatchObject({ churned_members: 1, active_members_at_start: 3 });
    expect(at(5).churn_rate).toBeCloseTo(1 / 3, 6);
    expect(at(16).mrr).toStrictEqual([
      { currency: 'EUR', amount: '10.00', amount_minor: 1000 },
      { currency: 'USD', amount: '20.00', amount_minor: 2000 },
    ]);
    expect(days.series.reduce((n, p) => n + p.new_members, 0)).toBe(days.totals.new_members);
    const weeks = await view('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'week');
    expect(weeks.series.map((p) => p.start.slice(0, 10))).toStrictEqual(['2026-01-01', '2026-01-05', '2026-01-12', '2026-01-19', '2026-01-26']);
    expect(weeks.series.at(-1)!.end).toBe('2026-02-01T00:00:00.000Z');
    expect(weeks.totals).toStrictEqual(days.totals);
  });

  it('folding changes no figure; rows appended after a fold are counted with the folded ones', async () => {
    const before = await view('2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', 'week');
    const appended = async () =>
      rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM analytics_days WHERE project_id = ${t.projectId} AND NOT folded`))[0]!.n;
    expect(await appended()).toBe(0);
    await run(`INSERT INTO payments (project_id, provider, payment_key, user_id, amount_minor, currency, status, created_at, updated_at)
               VALUES ('${t.projectId}', 'stripe', 'pi_late', 'u9', 300, 'USD', 'succeeded', '2026-02-10T10:00:00Z', '2026-02-10T10:00:00Z')`);
    expect(await appended()).toBe(1);
    const unfolded = await h.container.stores.analytics.sums(t.projectId, '2026-01-01', '2026-03-01', 'month');
    const after = await view('2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', 'week');
    expect(await appended()).toBe(0);
    expect(after.totals.revenue.find((r) => r.currency === 'USD')!.gross_minor).toBe(before.totals.revenue.find((r) => r.currency === 'USD')!.gross_minor + 300);
    const refolded = await h.container.stores.analytics.sums(t.projectId, '2026-01-01', '2026-03-01', 'month');
    const total = (rows: typeof unfolded) => rows.reduce((n, r) => n + r.grossMinor, 0);
    expect(total(refolded)).toBe(total(unfolded));
  });

  it('a deleted project takes its facts with it', async () => {
    const other = await h.tenant();
    await run(`INSERT INTO memberships (project_id, user_id, start_date, end_date) VALUES ('${other.projectId}', 'x', now() - interval '1 day', now() + interval '9 days')`);
    await run(`DELETE FROM projects WHERE id = '${other.projectId}'`);
    const left = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM analytics_days WHERE project_id = ${other.projectId}`));
    expect(left[0]!.n).toBe(0);
  });
});
