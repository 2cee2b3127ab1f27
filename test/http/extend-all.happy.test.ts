import { describe, expect, it } from 'vitest';
import {
  createMembership,
  END_DATES_SET,
  eventRows,
  expectSuccess,
  expireMembership,
  membershipRows,
  projectState,
} from '../support/api.js';
import { future, useHarness, type Tenant } from '../support/harness.js';
import { extendAll } from '../support/operations.js';

describe(`${extendAll.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant) => `${t.base}/memberships/extend`;

  async function listAll(t: Tenant) {
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships?limit=100` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { membership_id: string; membership_end_date: string; status: string }[];
  }

  it('sets every membership of the project, expired ones included, and counts them in total', async () => {
    const t = await h.tenant();
    const members = [await createMembership(t), await createMembership(t, { endDate: future(200).iso }), await createMembership(t)];
    await expireMembership(h, members[2]!.membership_id);

    const target = future(60).iso;
    const path = pathFor(t);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target } });
    expectSuccess(res, { method: 'PATCH', path, total: 3, message: END_DATES_SET, data: { new_end_date: target } });

    const rows = await membershipRows(h, t.projectId);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ end_date: target, status: 'active' });
    const listed = await listAll(t);
    expect(listed.map((m) => [m.membership_end_date, m.status])).toStrictEqual(Array(3).fill([target, 'active']));
  });

  it('takes a 13-digit millisecond number and reports it as ISO', async () => {
    const t = await h.tenant();
    await createMembership(t);
    await createMembership(t);
    const target = future(61);
    const path = pathFor(t);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target.ms } });
    expectSuccess(res, { method: 'PATCH', path, total: 2, message: END_DATES_SET, data: { new_end_date: target.iso } });
    expect((await membershipRows(h, t.projectId)).map((r) => r.end_date)).toStrictEqual([target.iso, target.iso]);
  });

  it("does not touch another tenant's memberships", async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    await createMembership(t);
    await createMembership(other);
    const expired = await createMembership(other);
    await expireMembership(h, expired.membership_id);
    const untouched = await projectState(h, other.projectId);

    const res = await t.request({ method: 'PATCH', url: pathFor(t), payload: { extend: future(70).iso } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().total, res.body).toBe(1);
    expect(await projectState(h, other.projectId)).toStrictEqual(untouched);
  });

  it('answers total 0 on a project without memberships', async () => {
    const t = await h.tenant();
    const target = future(5).iso;
    const path = pathFor(t);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target } });
    expectSuccess(res, { method: 'PATCH', path, total: 0, message: END_DATES_SET, data: { new_end_date: target } });
    expect(await membershipRows(h, t.projectId)).toStrictEqual([]);
  });

  it('writes exactly one membership.bulk-extended outbox row per call, with total and new_end_date', async () => {
    const t = await h.tenant();
    await createMembership(t);
    await createMembership(t);
    const before = await eventRows(h, t.projectId);
    const target = future(33).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);

    const after = await eventRows(h, t.projectId);
    expect(after.slice(0, before.length)).toStrictEqual(before);
    // One event for the call, not one per membership.
    expect(after.slice(before.length)).toStrictEqual([
      { type: 'membership.bulk-extended', project_id: t.projectId, data: { total: 2, new_end_date: target } },
    ]);
  });

  it('writes its one event on an empty project too (one event per bulk call: docs/webhooks.md)', async () => {
    const t = await h.tenant();
    const target = future(33).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      { type: 'membership.bulk-extended', project_id: t.projectId, data: { total: 0, new_end_date: target } },
    ]);
  });

  it('sets, not adds: a nearer date shortens every membership', async () => {
    const t = await h.tenant();
    await createMembership(t, { endDate: future(300).iso });
    await createMembership(t, { endDate: future(400).iso });
    const target = future(1).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await membershipRows(h, t.projectId)).map((r) => r.end_date)).toStrictEqual([target, target]);
  });

  it('ignores unknown body fields', async () => {
    const t = await h.tenant();
    await createMembership(t);
    const target = future(20).iso;
    const path = pathFor(t);
    // A query parameter is not a body field: `?user_id=` would look like it scopes the extend to one
    // member, and the route takes none, so it is a 422 and nothing changes (docs/idempotency-and-lists.md).
    const scoped = await t.request({ method: 'PATCH', url: `${path}?user_id=1`, payload: { extend: target } });
    expect(scoped.statusCode, scoped.body).toBe(422);
    expect(scoped.json().error.message).toBe('user_id is not a query parameter of this route');
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target, user_id: '1', only: 'some' } });
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: target } });
  });
});
