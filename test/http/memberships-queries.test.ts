import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { MembershipView } from '../../src/domain/memberships/membership.view.js';
import { createMembership, expectError, expireMembership } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { future, useHarness, type Harness, type Tenant } from '../support/harness.js';

/**
 * GET /memberships' filters and sorts (docs/memberships.md, "Listing and filtering"): each status
 * as the portal derives it, the plan, the end-date bounds, the four orders, combined with paging;
 * and the 422s, which name the parameter. A request using none of them answers as before.
 */

interface Seeded {
  t: Tenant;
  planA: string;
  planB: string;
  /** Named memberships, each in one state. */
  m: Record<'plain' | 'trial' | 'grace' | 'cancelling' | 'canceledSub' | 'renewing' | 'expired' | 'planB', MembershipView>;
}

async function seed(h: Harness): Promise<Seeded> {
  const t = await h.tenant();
  const planA = (await createPlan(t, { plan_name: 'A' })).plan_id;
  const planB = (await createPlan(t, { plan_name: 'B' })).plan_id;
  const make = (days: number, planId?: string) => createMembership(t, { endDate: future(days).iso, ...(planId ? { planId } : {}) });
  const m = {
    plain: await make(5),
    trial: await make(7, planA),
    grace: await make(9, planA),
    cancelling: await make(11, planA),
    canceledSub: await make(13),
    renewing: await make(15, planA),
    expired: await make(17, planA),
    planB: await make(19, planB),
  };
  const set = (id: string, q: ReturnType<typeof sql>) => h.database.db.execute(sql`UPDATE memberships SET ${q} WHERE id = ${id}`);
  await set(m.trial.membership_id, sql`subscription_id = 'sub_t', subscription_status = 'trialing', trial_ends_at = end_date`);
  await set(m.grace.membership_id, sql`subscription_id = 'sub_g', subscription_status = 'past_due'`);
  await set(m.cancelling.membership_id, sql`subscription_id = 'sub_c', subscription_status = 'active', subscription_cancel_at_period_end = true`);
  await set(m.canceledSub.membership_id, sql`subscription_id = 'sub_x', subscription_status = 'canceled'`);
  await set(m.renewing.membership_id, sql`subscription_id = 'sub_r', subscription_status = 'active'`);
  await expireMembership(h, m.expired.membership_id);
  // Creation times one minute apart in the order made, so created_at orders them as seeded.
  const order = Object.values(m);
  for (const [i, x] of order.entries()) {
    await h.database.db.execute(sql`UPDATE memberships SET created_at = now() - make_interval(mins => ${order.length - i}) WHERE id = ${x.membership_id}`);
  }
  return { t, planA, planB, m };
}

async function ids(s: Seeded, query: string): Promise<{ ids: string[]; total: number }> {
  const res = await s.t.request({ method: 'GET', url: `${s.t.base}/memberships?${query}` });
  expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
  const body = res.json() as { total: number; data: MembershipView[] };
  return { ids: body.data.map((x) => x.membership_id), total: body.total };
}

const idsOf = (...ms: MembershipView[]) => ms.map((x) => x.membership_id);

describe('GET /memberships: filters and sorts', () => {
  const h = useHarness();

  it('status: active, expired, and the kinds of active (in_trial, in_grace, cancelling), each as the portal reads it', async () => {
    const s = await seed(h);
    const { m } = s;
    // Default order: newest first.
    expect(await ids(s, 'status=active')).toStrictEqual({ ids: idsOf(m.planB, m.renewing, m.canceledSub, m.cancelling, m.grace, m.trial, m.plain), total: 7 });
    expect(await ids(s, 'status=expired')).toStrictEqual({ ids: idsOf(m.expired), total: 1 });
    expect(await ids(s, 'status=in_trial')).toStrictEqual({ ids: idsOf(m.trial), total: 1 });
    expect(await ids(s, 'status=in_grace')).toStrictEqual({ ids: idsOf(m.grace), total: 1 });
    // Renewal turned off, or a subscription no longer billing while the paid period runs.
    expect(await ids(s, 'status=cancelling')).toStrictEqual({ ids: idsOf(m.canceledSub, m.cancelling), total: 2 });
    // An expired membership is in none of the kinds of active, whatever its subscription said.
    await h.database.db.execute(sql`UPDATE memberships SET subscription_id = 'sub_e', subscription_status = 'past_due' WHERE id = ${m.expired.membership_id}`);
    expect((await ids(s, 'status=in_grace')).ids).toStrictEqual(idsOf(m.grace));
  });

  it('plan_id, ends_before and ends_after (strict bounds, both instant forms), combined with status', async () => {
    const s = await seed(h);
    const { m } = s;
    expect(await ids(s, `plan_id=${s.planB}`)).toStrictEqual({ ids: idsOf(m.planB), total: 1 });
    expect((await ids(s, `plan_id=${s.planA.toUpperCase()}&status=active`)).total).toBe(4);
    const endOf = (x: MembershipView) => x.membership_end_date;
    const msOf = (x: MembershipView) => String(Date.parse(endOf(x)));
    expect(await ids(s, `ends_before=${endOf(m.grace)}&sort=end_date`)).toStrictEqual({ ids: idsOf(m.expired, m.plain, m.trial), total: 3 });
    expect(await ids(s, `ends_after=${msOf(m.renewing)}&sort=end_date`)).toStrictEqual({ ids: idsOf(m.planB), total: 1 });
    expect(await ids(s, `ends_after=${endOf(m.plain)}&ends_before=${msOf(m.cancelling)}&sort=-end_date`)).toStrictEqual({ ids: idsOf(m.grace, m.trial), total: 2 });
    // "Who expires this week": active, ending within 10 days, soonest first.
    expect(await ids(s, `status=active&ends_before=${future(10).iso}&sort=end_date`)).toStrictEqual({ ids: idsOf(m.plain, m.trial, m.grace), total: 3 });
  });

  it('sort: end_date, -end_date, created_at, -created_at (the default), with limit and offset paging the sorted list', async () => {
    const s = await seed(h);
    const { m } = s;
    const byEnd = idsOf(m.expired, m.plain, m.trial, m.grace, m.cancelling, m.canceledSub, m.renewing, m.planB);
    const byCreated = idsOf(m.plain, m.trial, m.grace, m.cancelling, m.canceledSub, m.renewing, m.expired, m.planB);
    expect((await ids(s, 'sort=end_date')).ids).toStrictEqual(byEnd);
    expect((await ids(s, 'sort=-end_date')).ids).toStrictEqual([...byEnd].reverse());
    expect((await ids(s, 'sort=created_at')).ids).toStrictEqual(byCreated);
    expect((await ids(s, 'sort=-created_at')).ids).toStrictEqual([...byCreated].reverse());
    expect((await ids(s, '')).ids).toStrictEqual([...byCreated].reverse());
    const pages = [];
    for (let offset = 0; offset < 8; offset += 3) pages.push(...(await ids(s, `sort=end_date&limit=3&offset=${offset}`)).ids);
    expect(pages).toStrictEqual(byEnd);
    expect(await ids(s, 'status=active&sort=end_date&limit=2&offset=2')).toStrictEqual({ ids: idsOf(m.grace, m.cancelling), total: 7 });
  });

  it('a query without the new parameters answers as before: every membership, newest first, total of all', async () => {
    const s = await seed(h);
    const res = await s.t.request({ method: 'GET', url: `${s.t.base}/memberships?limit=2&user_id=${s.m.plain.user_id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, total: 1, message: 'All memberships retrieved successfully', data: [{ membership_id: s.m.plain.membership_id, status: 'active' }] });
  });
});

describe('GET /memberships: unknown or malformed parameters are 422s naming them', () => {
  const h = useHarness();

  it.each([
    ['status=in_limbo', 'status must be one of: active, expired, in_trial, in_grace, cancelling'],
    ['status=active&status=expired', 'status must be one of: active, expired, in_trial, in_grace, cancelling'],
    ['plan_id=gold', 'plan_id must be a UUID'],
    ['ends_before=tomorrow', 'ends_before must be 13-digit Unix milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ'],
    ['ends_after=2026-01-01', 'ends_after must be 13-digit Unix milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ'],
    ['ends_after=2026-02-30T00:00:00.000Z', 'ends_after is not a real calendar instant'],
    ['sort=name', 'sort must be one of: -created_at, created_at, end_date, -end_date'],
    ['sort=end_date&order=desc', 'order is not a query parameter of this route'],
    ['statuses=active', 'statuses is not a query parameter of this route'],
  ])('?%s', async (query, message) => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const res = await t.request({ method: 'GET', url: `${path}?${query}` });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message });
  });

  it('every API route refuses a parameter it does not take, with or without a query schema of its own; the pages keep theirs', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    for (const path of [`${t.base}/memberships/${m.membership_id}`, `${t.base}/plans`, `${t.base}/payments`, `${t.base}/users`, `${t.base}/settings`]) {
      const res = await t.request({ method: 'GET', url: `${path}?colour=blue` });
      expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'colour is not a query parameter of this route' });
    }
    const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/extend?dry_run=1`, payload: { extend: future(40).iso } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path: `${t.base}/memberships/extend`, message: 'dry_run is not a query parameter of this route' });
    const probe = await h.app.inject({ method: 'GET', url: '/healthz?verbose=1' });
    expect(probe.statusCode).toBe(200);
  });
});
