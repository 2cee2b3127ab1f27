import { describe, expect, it } from 'vitest';
import { createMembership, eventRows, expireMembership, membershipRows, UUID } from '../support/api.js';
import { future, useHarness, type Tenant } from '../support/harness.js';
import { membershipDelete } from '../support/operations.js';

describe(`${membershipDelete.name}: happy`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}`;

  async function remove(t: Tenant, id: string) {
    const res = await t.request({ method: 'DELETE', url: pathFor(t, id) });
    expect(res.statusCode, res.body).toBe(204);
    return res;
  }

  it('answers 204 with no body (and still a request id)', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const res = await remove(t, m.membership_id);
    expect(res.body).toBe('');
    expect(res.rawPayload).toHaveLength(0);
    expect(res.headers['content-type'], res.body).toBeUndefined();
    expect(res.headers['x-request-id'], res.body).toMatch(UUID);
  });

  it('removes the membership: GET answers 404 and the list no longer has it', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const kept = await createMembership(t);
    await remove(t, m.membership_id);

    const get = await t.request({ method: 'GET', url: pathFor(t, m.membership_id) });
    expect(get.statusCode, get.body).toBe(404);
    const list = await t.request({ method: 'GET', url: `${t.base}/memberships` });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toMatchObject({ total: 1, data: [kept] });
    expect((await membershipRows(h, t.projectId)).map((r) => r.id)).toStrictEqual([kept.membership_id]);
  });

  it('writes exactly one membership.deleted outbox row carrying the membership', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await remove(t, m.membership_id);
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      { type: 'membership.created', project_id: t.projectId, data: { membership: m } },
      { type: 'membership.deleted', project_id: t.projectId, data: { membership: m } },
    ]);
  });

  it('deletes an expired membership too', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await expireMembership(h, m.membership_id);
    await remove(t, m.membership_id);
    expect(await membershipRows(h, t.projectId)).toStrictEqual([]);
  });

  it('answers 404 on a second delete, which writes no event', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await remove(t, m.membership_id);
    const events = await eventRows(h, t.projectId);
    const again = await t.request({ method: 'DELETE', url: pathFor(t, m.membership_id) });
    expect(again.statusCode, again.body).toBe(404);
    expect(await eventRows(h, t.projectId)).toStrictEqual(events);
  });

  it('lets the user get a new membership afterwards', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    await remove(t, m.membership_id);
    const again = await createMembership(t, { userId: m.user_id, endDate: future(5).iso });
    expect(again.membership_id).not.toBe(m.membership_id);
  });
});
