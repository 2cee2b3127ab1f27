import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMembership, expectError } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { membershipGet } from '../support/operations.js';

describe(`${membershipGet.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}`;

  it.each([
    ['a word', 'membership'],
    ['a user id', '100000000000000001'],
    ['a UUID without dashes', randomUUID().replaceAll('-', '')],
    ['a UUID with an extra character', `${randomUUID()}a`],
  ])('answers 422 for a membership_id that is %s', async (_what, id) => {
    const t = await h.tenant();
    const path = pathFor(t, id);
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'GET', path, message: 'membership_id must be a UUID' });
  });

  it('answers 404 for an id no membership has', async () => {
    const t = await h.tenant();
    await createMembership(t);
    const path = pathFor(t, randomUUID());
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Membership not found' });
  });

  it("answers 404 for another project's membership", async () => {
    const owner = await h.tenant();
    const m = await createMembership(owner);
    const t = await h.tenant();
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Membership not found' });
    expect(res.body).not.toContain(m.user_id);
  });

  it('answers 404 for a deleted membership', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.membership_id);
    const del = await t.request({ method: 'DELETE', url: path });
    expect(del.statusCode, del.body).toBe(204);
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Membership not found' });
  });
});
