import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess, insertPlan, ISO_MS, membershipRows, UUID } from '../support/api.js';
import { future, useHarness, userId, type Tenant } from '../support/harness.js';
import { membershipCreate } from '../support/operations.js';

describe(`${membershipCreate.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant) => `${t.base}/memberships`;

  /** Posts `payload`, checks the 201 envelope against `expected` (+ generated fields), returns data. */
  async function create(t: Tenant, payload: object, expected: Record<string, unknown>) {
    const path = pathFor(t);
    const res = await t.request({ method: 'POST', url: path, payload });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data.membership_id).toMatch(UUID);
    expect(data.membership_start_date).toMatch(ISO_MS);
    expect(data.membership_start_date < data.membership_end_date).toBe(true);
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path,
      message: 'Membership created successfully',
      data: {
        membership_id: data.membership_id,
        plan_id: null,
        membership_start_date: data.membership_start_date,
        user_name: null,
        plan_name: null,
        plan_duration: null,
        subscription_id: null,
        subscription_status: null,
        status: 'active',
        ...expected,
      },
    });
    return data;
  }

  it('creates a membership from an ISO end date and answers 201 with the membership, no total', async () => {
    const t = await h.tenant();
    const user = userId();
    const end = future(30).iso;
    const m = await create(t, { user_id: user, end_date: end }, { user_id: user, membership_end_date: end });
    expect(await membershipRows(h, t.projectId)).toStrictEqual([{ id: m.membership_id, user_id: user, end_date: end, status: 'active' }]);
  });

  it('takes a 13-digit millisecond end date and reports it as ISO', async () => {
    const t = await h.tenant();
    const user = userId();
    const end = future(31);
    await create(t, { user_id: user, end_date: end.ms }, { user_id: user, membership_end_date: end.iso });
  });

  it('writes exactly one membership.created outbox row carrying the membership as answered', async () => {
    const t = await h.tenant();
    const user = userId();
    const end = future(32).iso;
    const m = await create(t, { user_id: user, end_date: end }, { user_id: user, membership_end_date: end });
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      { type: 'membership.created', project_id: t.projectId, data: { membership: m } },
    ]);
  });

  it('copies the plan name and duration from a plan of the project', async () => {
    const t = await h.tenant();
    const planId = await insertPlan(h, t.projectId, 'Gold', '3 months');
    const user = userId();
    const end = future(90).iso;
    await create(
      t,
      { user_id: user, end_date: end, plan_id: planId },
      { user_id: user, membership_end_date: end, plan_id: planId, plan_name: 'Gold', plan_duration: '3 months' },
    );
  });

  it('accepts plan_id null', async () => {
    const t = await h.tenant();
    const user = userId();
    const end = future(7).iso;
    await create(t, { user_id: user, end_date: end, plan_id: null }, { user_id: user, membership_end_date: end });
  });

  it('lets the same user be a member of two projects', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const user = userId();
    const end = future(7).iso;
    const ma = await create(a, { user_id: user, end_date: end }, { user_id: user, membership_end_date: end });
    const mb = await create(b, { user_id: user, end_date: end }, { user_id: user, membership_end_date: end });
    expect(ma.membership_id).not.toBe(mb.membership_id);
  });

  it('accepts short user ids and keeps leading zeros', async () => {
    const t = await h.tenant();
    const end = future(7).iso;
    await create(t, { user_id: '7', end_date: end }, { user_id: '7', membership_end_date: end });
    await create(t, { user_id: '007', end_date: end }, { user_id: '007', membership_end_date: end });
    expect((await membershipRows(h, t.projectId)).map((r) => r.user_id)).toStrictEqual(['007', '7']);
  });

  it('ignores unknown body fields, including ones that name server-set fields', async () => {
    const t = await h.tenant();
    const user = userId();
    const end = future(8).iso;
    await create(
      t,
      { user_id: user, end_date: end, status: 'expired', membership_id: '00000000-0000-0000-0000-000000000000', note: 'x' },
      { user_id: user, membership_end_date: end },
    );
  });
});
