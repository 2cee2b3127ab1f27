import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMembership, expectError, failEventInserts, INTERNALS, projectState } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { membershipDelete } from '../support/operations.js';

describe(`${membershipDelete.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}`;

  it.each([
    ['a word', 'everyone'],
    ['a user id', '100000000000000001'],
    ['a UUID without dashes', randomUUID().replaceAll('-', '')],
  ])('answers 422 for a membership_id that is %s; nothing changes', async (_what, id) => {
    const t = await h.tenant();
    await createMembership(t);
    const before = await projectState(h, t.projectId);
    const path = pathFor(t, id);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'DELETE', path, message: 'membership_id must be a UUID' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('answers 404 for an id no membership has; nothing changes', async () => {
    const t = await h.tenant();
    await createMembership(t);
    const before = await projectState(h, t.projectId);
    const path = pathFor(t, randomUUID());
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Membership not found' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it("answers 404 for another project's membership, which survives", async () => {
    const owner = await h.tenant();
    const m = await createMembership(owner);
    const before = await projectState(h, owner.projectId);
    const t = await h.tenant();
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'DELETE', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'DELETE', path, message: 'Membership not found' });
    expect(await projectState(h, owner.projectId)).toStrictEqual(before);
  });

  it('answers 500 without internals and keeps the membership when its event cannot be written', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const before = await projectState(h, t.projectId);
    const path = pathFor(t, m.membership_id);
    const restore = await failEventInserts(h, t.projectId);
    try {
      const res = await t.request({ method: 'DELETE', url: path });
      expectError(res, { status: 500, code: 'INTERNAL_ERROR', method: 'DELETE', path, message: 'An unexpected error occurred' });
      expect(res.body, res.body).not.toMatch(INTERNALS);
      expect(await projectState(h, t.projectId)).toStrictEqual(before);
    } finally {
      await restore();
    }
  });
});
