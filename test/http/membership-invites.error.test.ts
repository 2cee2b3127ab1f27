import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMembership, expectError } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { membershipInvites } from '../support/operations.invites.js';

describe(`${membershipInvites.name}: errors`, () => {
  const h = useHarness();

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}/invites`;

  it.each([
    ['a word', 'membership'],
    ['a user id', '100000000000000001'],
    ['a UUID without dashes', randomUUID().replaceAll('-', '')],
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

  it("answers 404 for another project's membership, showing nothing of it", async () => {
    const owner = await h.tenant();
    const m = await createMembership(owner);
    await h.container.stores.telegramInvites.record({
      projectId: owner.projectId,
      targetId: randomUUID(),
      userId: m.user_id,
      membershipId: m.membership_id,
      chatId: '-1001234567890',
      botId: '7000000001',
      inviteLink: `https://t.me/+${randomUUID().slice(0, 16)}`,
      name: 'm:test',
      createsJoinRequest: false,
      expiresAt: new Date(Date.now() + 3_600_000),
      createdAt: new Date(),
    });
    const t = await h.tenant();
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Membership not found' });
    expect(res.body).not.toContain('t.me');
  });

  it('answers 404 for a deleted membership', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const del = await t.request({ method: 'DELETE', url: `${t.base}/memberships/${m.membership_id}` });
    expect(del.statusCode, del.body).toBe(204);
    const path = pathFor(t, m.membership_id);
    const res = await t.request({ method: 'GET', url: path });
    expectError(res, { status: 404, code: 'NOT_FOUND', method: 'GET', path, message: 'Membership not found' });
  });
});
