import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import type { NewInvite } from '../../src/store/telegram-invites.store.js';
import { createMembership, expectSuccess } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { membershipInvites } from '../support/operations.invites.js';

/**
 * The member's current links as the API shows them. Links are seeded as the Telegram connector
 * records them (TelegramInvitesStore.record); how they come to be is test/access/telegram-*.test.ts.
 */
describe(`${membershipInvites.name}: happy`, () => {
  const h = useHarness();
  const HOUR = 3_600_000;

  const pathFor = (t: Tenant, id: string) => `${t.base}/memberships/${id}/invites`;
  const record = (t: Tenant, o: Partial<NewInvite> & Pick<NewInvite, 'userId'>) =>
    h.container.stores.telegramInvites.record({
      projectId: t.projectId,
      targetId: randomUUID(),
      membershipId: null,
      chatId: '-1001234567890',
      botId: '7000000001',
      inviteLink: `https://t.me/+${randomBytes(12).toString('base64url').slice(0, 16)}`,
      name: 'm:test',
      createsJoinRequest: false,
      expiresAt: new Date(Date.now() + 24 * HOUR),
      createdAt: new Date(),
      ...o,
    });

  it('answers 200 with total 0 and no links for a member who has none', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const path = pathFor(t, m.membership_id);
    expectSuccess(await t.request({ method: 'GET', url: path }), { method: 'GET', path, total: 0, message: 'Invites retrieved successfully', data: [] });
  });

  it('answers the current links {target_id, chat_id, invite_link, kind, expires_at, created_at}, newest first; not revoked, used, expired or another member’s', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const other = await createMembership(t);
    const now = Date.now();
    const older = await record(t, { userId: m.user_id, membershipId: m.membership_id, createdAt: new Date(now - 2 * HOUR) });
    const newer = await record(t, { userId: m.user_id, membershipId: m.membership_id, createdAt: new Date(now - HOUR), createsJoinRequest: true, chatId: '-1009' });
    const revoked = await record(t, { userId: m.user_id, createdAt: new Date(now - HOUR) });
    await h.container.stores.telegramInvites.markRevoked([revoked.id], new Date());
    const used = await record(t, { userId: m.user_id, createdAt: new Date(now - HOUR) });
    await h.container.stores.telegramInvites.markUsed(used.id, m.user_id, new Date());
    await record(t, { userId: m.user_id, createdAt: new Date(now - 3 * HOUR), expiresAt: new Date(now - 1) });
    await record(t, { userId: other.user_id });

    const path = pathFor(t, m.membership_id);
    const view = (i: typeof older, kind: string) => ({
      target_id: i.targetId,
      chat_id: i.chatId,
      invite_link: i.inviteLink,
      kind,
      expires_at: i.expiresAt.toISOString(),
      created_at: i.createdAt.toISOString(),
    });
    expectSuccess(await t.request({ method: 'GET', url: path }), {
      method: 'GET',
      path,
      total: 2,
      message: 'Invites retrieved successfully',
      data: [view(newer, 'join_request'), view(older, 'single_use')],
    });
  });
});
