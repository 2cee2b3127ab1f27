import { describe, expect, it } from 'vitest';
import {
  createMembership,
  END_DATES_SET,
  eventRows,
  expectError,
  expectSuccess,
  expireMembership,
  membershipRow,
  projectState,
} from '../support/api.js';
import { future, useHarness, type Tenant } from '../support/harness.js';
import { extendOne } from '../support/operations.js';

describe(`${extendOne.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, user: string) => `${t.base}/memberships/${user}/extend`;

  async function getMembership(t: Tenant, membershipId: string) {
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${membershipId}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  it('sets the end date from an ISO string and answers the full envelope', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(60).iso;
    const path = pathFor(t, m.user_id);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target } });
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: target } });
    // The stored date really changed.
    expect(await getMembership(t, m.membership_id)).toStrictEqual({ ...m, membership_end_date: target });
    expect(await membershipRow(h, t.projectId, m.user_id)).toMatchObject({ end_date: target, status: 'active' });
  });

  it('sets the end date from a 13-digit millisecond number and reports it as ISO', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(45);
    const path = pathFor(t, m.user_id);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target.ms } });
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: target.iso } });
    expect((await getMembership(t, m.membership_id)).membership_end_date).toBe(target.iso);
  });

  it.each([
    ['the largest 13-digit number', 9_999_999_999_999, '2286-11-20T17:46:39.999Z'],
    ['the last millisecond of year 9999', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['Feb 29 of a leap year', '2096-02-29T00:00:00.000Z', '2096-02-29T00:00:00.000Z'],
  ])('accepts %s', async (_what, extend, stored) => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.user_id);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend } });
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: stored } });
    expect((await getMembership(t, m.membership_id)).membership_end_date).toBe(stored);
  });

  it('sets, not adds: a nearer future date shortens the membership', async () => {
    const t = await h.tenant();
    const m = await createMembership(t, { endDate: future(300).iso });
    const target = future(2).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await getMembership(t, m.membership_id)).membership_end_date).toBe(target);
  });

  it('makes an expired membership active again', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await expireMembership(h, m.membership_id);
    expect((await getMembership(t, m.membership_id)).status).toBe('expired');

    const target = future(30).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await getMembership(t, m.membership_id)).toMatchObject({ status: 'active', membership_end_date: target });
  });

  it('writes exactly one membership.extended outbox row with the previous end date', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const previous = await expireMembership(h, m.membership_id);
    const before = await eventRows(h, t.projectId);
    expect(before.map((e) => e.type)).toStrictEqual(['membership.created']);

    const target = future(30).iso;
    const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: target } });
    expect(res.statusCode, res.body).toBe(200);
    const after = await eventRows(h, t.projectId);
    expect(after).toHaveLength(2);
    expect(after[1]).toStrictEqual({
      type: 'membership.extended',
      project_id: t.projectId,
      data: { membership: await getMembership(t, m.membership_id), previous_end_date: previous },
    });
    expect((after[1]!.data.membership as { status: string }).status).toBe('active');
  });

  it('writes one event per call when the same date is set twice', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(30).iso;
    for (let i = 0; i < 2; i++) {
      const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: target } });
      expect(res.statusCode, res.body).toBe(200);
    }
    const events = await eventRows(h, t.projectId);
    expect(events.map((e) => e.type)).toStrictEqual(['membership.created', 'membership.extended', 'membership.extended']);
    expect(events[2]!.data.previous_end_date).toBe(target);
  });

  it('touches only the addressed member of the project', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const other = await createMembership(t);
    const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: future(99).iso } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await getMembership(t, other.membership_id)).toStrictEqual(other);
  });

  it('touches only the project in the path when the user is a member elsewhere too', async () => {
    const t = await h.tenant();
    const elsewhere = await h.tenant();
    const m = await createMembership(t);
    await createMembership(elsewhere, { userId: m.user_id });
    const untouched = await projectState(h, elsewhere.projectId);

    const res = await t.request({ method: 'PATCH', url: pathFor(t, m.user_id), payload: { extend: future(99).iso } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await projectState(h, elsewhere.projectId)).toStrictEqual(untouched);
  });

  it('ignores unknown body fields', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(20).iso;
    const path = pathFor(t, m.user_id);
    const res = await t.request({ method: 'PATCH', url: path, payload: { extend: target, total: 99, user_id: '1', note: 'x' } });
    expectSuccess(res, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: target } });
  });

  it('accepts a JSON content type with a charset', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(20).iso;
    const res = await t.request({
      method: 'PATCH',
      url: pathFor(t, m.user_id),
      payload: JSON.stringify({ extend: target }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data, res.body).toStrictEqual({ new_end_date: target });
  });

  it('reports the path without the query string (a parameter the route does not take is a 422 naming it, nothing changed)', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const target = future(20).iso;
    const path = pathFor(t, m.user_id);
    const res = await t.request({ method: 'PATCH', url: `${path}?source=test&x=1`, payload: { extend: target } });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'PATCH', path, message: 'source is not a query parameter of this route' });
    const again = await t.request({ method: 'PATCH', url: path, payload: { extend: target } });
    expectSuccess(again, { method: 'PATCH', path, total: 1, message: END_DATES_SET, data: { new_end_date: target } });
  });
});
