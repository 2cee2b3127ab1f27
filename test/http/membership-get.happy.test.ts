import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, expectSuccess, expireMembership, insertPlan } from '../support/api.js';
import { future, useHarness, type Harness, type Tenant } from '../support/harness.js';
import { membershipGet } from '../support/operations.js';

const RETRIEVED = 'Membership retrieved successfully';

/**
 * Moves the end date a second into the past and leaves the stored status `active`, as a
 * membership is between its end date and the sweeper's pass. Returns the end date as the API shows it.
 */
async function endWithoutSweep(h: Harness, membershipId: string): Promise<string> {
  const [row] = rowsOf<{ end_date: string }>(
    await h.database.db.execute(sql`
      UPDATE memberships SET end_date = date_trunc('milliseconds', now() - interval '1 second')
      WHERE id = ${membershipId} AND status = 'active'
      RETURNING to_char(end_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS end_date`),
  );
  return row!.end_date;
}

describe(`${membershipGet.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}`;

  it('answers the membership as created, without total', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: m });
  });

  it('shows the plan copies of a membership with a plan', async () => {
    const t = await h.tenant();
    const planId = await insertPlan(h, t.projectId, 'Silver', '1 year');
    const m = await createMembership(t, { planId });
    expect(m).toMatchObject({ plan_id: planId, plan_name: 'Silver', plan_duration: '1 year' });
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: m });
  });

  it('reflects an extension', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(77).iso;
    const ext = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${m.user_id}/extend`, payload: { extend: target } });
    expect(ext.statusCode, ext.body).toBe(200);
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: { ...m, membership_end_date: target } });
  });

  it('shows an expired membership as expired', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const end = await expireMembership(h, m.membership_id);
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: { ...m, status: 'expired', membership_end_date: end } });
  });

  it('shows a membership past its end date as expired before the sweeper has marked it', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const end = await endWithoutSweep(h, m.membership_id);
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: { ...m, status: 'expired', membership_end_date: end } });
  });

  it('accepts the id in upper case', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.membership_id.toUpperCase());
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, message: RETRIEVED, data: m });
  });
});
