import { describe, expect, it } from 'vitest';
import { eventRows, expectError, projectState } from '../support/api.js';
import { future, useHarness, userId, type Tenant } from '../support/harness.js';
import { listUsers } from '../support/keys.js';

/** Memberships record their users: user_name on create, the users row, the membership view. */
describe('POST /v2/projects/{project_id}/memberships: users', () => {
  const h = useHarness();

  const create = (t: Tenant, payload: object) => t.request({ method: 'POST', url: `${t.base}/memberships`, payload });

  it('records user_name and shows it on the membership, in GET, the list and the event', async () => {
    const t = await h.tenant();
    const id = userId();
    const res = await create(t, { user_id: id, end_date: future().iso, user_name: { first_name: 'Ada', username: 'ada_l' } });
    expect(res.statusCode, res.body).toBe(201);
    const m = res.json().data;
    expect(m.user_name).toStrictEqual({ first_name: 'Ada', username: 'ada_l' });
    const got = await t.request({ method: 'GET', url: `${t.base}/memberships/${m.membership_id}` });
    expect(got.json().data, got.body).toStrictEqual(m);
    const list = await t.request({ method: 'GET', url: `${t.base}/memberships` });
    expect(list.json().data, list.body).toStrictEqual([m]);
    expect(await eventRows(h, t.projectId)).toStrictEqual([{ type: 'membership.created', project_id: t.projectId, data: { membership: m } }]);
    expect((await listUsers(t)).data).toMatchObject([{ user_id: id, user_name: { first_name: 'Ada', username: 'ada_l' } }]);
  });

  it('records a user without names too (user_name null everywhere)', async () => {
    const t = await h.tenant();
    const id = userId();
    const res = await create(t, { user_id: id, end_date: future().iso, user_name: null });
    expect(res.json().data.user_name, res.body).toBeNull();
    expect((await listUsers(t)).data).toMatchObject([{ user_id: id, user_name: null }]);
  });

  it('updates only the names given when a known user gets a new membership, keeping first_seen', async () => {
    const t = await h.tenant();
    const id = userId();
    const first = await create(t, { user_id: id, end_date: future().iso, user_name: { first_name: 'Ada', username: 'old' } });
    const seen = (await listUsers(t)).data[0]!;
    await t.request({ method: 'DELETE', url: `${t.base}/memberships/${first.json().data.membership_id}` });
    const again = await create(t, { user_id: id, end_date: future().iso, user_name: { username: 'new' } });
    expect(again.json().data.user_name, again.body).toStrictEqual({ first_name: 'Ada', username: 'new' });
    const now = (await listUsers(t)).data[0]!;
    expect(now.user_first_seen).toBe(seen.user_first_seen);
    expect(now.user_last_seen >= seen.user_last_seen).toBe(true);
  });

  it('changes no user when the membership is refused (409: already a member)', async () => {
    const t = await h.tenant();
    const id = userId();
    await create(t, { user_id: id, end_date: future().iso, user_name: { first_name: 'Ada' } });
    const before = await projectState(h, t.projectId);
    const res = await create(t, { user_id: id, end_date: future().iso, user_name: { first_name: 'Mallory' } });
    expect(res.statusCode, res.body).toBe(409);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  const NAME = 'user_name must be null or {first_name?, username?} with strings of 1 to 200 characters or null';

  it.each([
    ['a string', 'Ada'],
    ['an array', ['Ada']],
    ['a numeric first_name', { first_name: 7 }],
    ['an empty username', { username: '' }],
    ['a first_name of 201 characters', { first_name: 'x'.repeat(201) }],
  ])('answers 422 for a user_name that is %s; nothing changes', async (_what, user_name) => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const before = await projectState(h, t.projectId);
    const res = await create(t, { user_id: userId(), end_date: future().iso, user_name });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message: NAME });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });
});
