import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { TelegramInvitesStore, type NewInvite } from '../../src/store/telegram-invites.store.js';
import { createMembership, eventRows, failEventInserts } from '../support/api.js';
import { onPostgres, useHarness, userId, type Tenant } from '../support/harness.js';

/**
 * The Telegram invite links' SQL (src/store/telegram-invites.store.ts) on both storages: a link
 * and its access.invite-created event stored together or not at all; which links are current
 * (not revoked, not used, not expired) and live (not revoked, not expired); marks written once.
 */

const MINUTE = 60_000;
const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * MINUTE);
const link = () => `https://t.me/+${randomBytes(12).toString('base64url').slice(0, 16)}`;

describe(`telegram invites store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const store = () => new TelegramInvitesStore(h.database.db);

  function invite(t: Tenant, o: Partial<NewInvite> = {}): NewInvite {
    return {
      projectId: t.projectId,
      targetId: randomUUID(),
      userId: userId(),
      membershipId: randomUUID(),
      chatId: '-1001234567890',
      botId: '7000000001',
      inviteLink: link(),
      name: 'm:12345678',
      createsJoinRequest: false,
      expiresAt: at(60),
      createdAt: at(0),
      ...o,
    };
  }

  const storedCount = async (projectId: string) =>
    rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM telegram_invites WHERE project_id = ${projectId}`))[0]!.n;

  it('records a link with its access.invite-created event, showing what the API shows', async () => {
    const t = await h.tenant();
    const input = invite(t, { createsJoinRequest: true });
    const stored = await store().record(input);
    expect(stored).toMatchObject({ ...input, usedAt: null, usedBy: null, revokedAt: null });
    expect(stored.id).toMatch(/^[0-9a-f-]{36}$/);

    const view = {
      target_id: input.targetId,
      chat_id: input.chatId,
      invite_link: input.inviteLink,
      kind: 'join_request',
      expires_at: input.expiresAt.toISOString(),
      created_at: input.createdAt.toISOString(),
    };
    expect(await eventRows(h, t.projectId)).toStrictEqual([
      {
        type: 'access.invite-created',
        project_id: t.projectId,
        data: { user_id: input.userId, target_id: input.targetId, platform: 'telegram', membership_id: input.membershipId, invite: view },
      },
    ]);
  });

  it('stores neither the link nor its event when the event cannot be written', async () => {
    const t = await h.tenant();
    const restore = await failEventInserts(h, t.projectId);
    try {
      await expect(store().record(invite(t))).rejects.toThrow();
    } finally {
      await restore();
    }
    expect(await storedCount(t.projectId)).toBe(0);
    expect(await eventRows(h, t.projectId)).toStrictEqual([]);
  });

  it('refuses a link recorded twice (the URL is unique), writing no second event', async () => {
    const t = await h.tenant();
    const input = invite(t);
    await store().record(input);
    await expect(store().record({ ...input, userId: userId() })).rejects.toThrow();
    expect(await storedCount(t.projectId)).toBe(1);
    expect(await eventRows(h, t.projectId)).toHaveLength(1);
  });

  it('current: the member’s links to that target that are not revoked, used or expired, newest first; live keeps the used ones', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const base = invite(t);
    const mine = (o: Partial<NewInvite>) => store().record({ ...base, inviteLink: link(), ...o });
    const older = await mine({ createdAt: at(0) });
    const newer = await mine({ createdAt: at(5) });
    const revoked = await mine({ createdAt: at(1) });
    const used = await mine({ createdAt: at(2) });
    const expiring = await mine({ createdAt: at(3), expiresAt: at(10) });
    // Not this member's, target's or project's.
    await mine({ userId: userId() });
    await mine({ targetId: randomUUID() });
    await store().record({ ...invite(other), targetId: base.targetId, userId: base.userId });

    expect(await store().markRevoked([revoked.id], at(6))).toBe(1);
    expect(await store().markUsed(used.id, base.userId, at(6))).toBe(true);

    const ids = async (list: Promise<{ id: string }[]>) => (await list).map((i) => i.id);
    expect(await ids(store().current(t.projectId, base.targetId, base.userId, at(9)))).toStrictEqual([newer.id, expiring.id, older.id]);
    // Expired at exactly its expiry instant.
    expect(await ids(store().current(t.projectId, base.targetId, base.userId, at(10)))).toStrictEqual([newer.id, older.id]);
    expect(await ids(store().live(t.projectId, base.targetId, base.userId, at(9)))).toStrictEqual([newer.id, expiring.id, used.id, older.id]);
    expect(await ids(store().current(t.projectId, base.targetId, base.userId, at(60)))).toStrictEqual([]);
  });

  it('markRevoked and markUsed write once: the first time and the first user are kept', async () => {
    const t = await h.tenant();
    const [a, b] = [await store().record(invite(t)), await store().record(invite(t))];
    expect(await store().markRevoked([a.id], at(1))).toBe(1);
    expect(await store().markRevoked([a.id, b.id], at(2))).toBe(1);
    expect(await store().markRevoked([], at(3))).toBe(0);
    const intruder = userId();
    expect(await store().markUsed(b.id, intruder, at(4))).toBe(true);
    expect(await store().markUsed(b.id, userId(), at(5))).toBe(false);

    expect(await store().byLink(t.projectId, a.inviteLink)).toMatchObject({ id: a.id, revokedAt: at(1), usedAt: null });
    expect(await store().byLink(t.projectId, b.inviteLink)).toMatchObject({ id: b.id, revokedAt: at(2), usedAt: at(4), usedBy: intruder });
  });

  it('byLink finds a link of the project only', async () => {
    const [t, other] = [await h.tenant(), await h.tenant()];
    const stored = await store().record(invite(t));
    expect(await store().byLink(t.projectId, stored.inviteLink)).toStrictEqual(stored);
    expect(await store().byLink(other.projectId, stored.inviteLink)).toBeNull();
    expect(await store().byLink(t.projectId, link())).toBeNull();
  });

  it('currentForMembership: the member’s current links on every target, newest first; null for a membership not in the project', async () => {
    const [t, other] = [await h.tenant(), await h.tenant()];
    const m = await createMembership(t);
    expect(await store().currentForMembership(t.projectId, m.membership_id, at(0))).toStrictEqual([]);

    const ofMember = (o: Partial<NewInvite>) => store().record(invite(t, { userId: m.user_id, membershipId: m.membership_id, ...o }));
    const first = await ofMember({ createdAt: at(0), expiresAt: at(60) });
    // A link named after an earlier membership of the same member is theirs too.
    const second = await ofMember({ createdAt: at(1), membershipId: randomUUID(), createsJoinRequest: true });
    const gone = await ofMember({ createdAt: at(2) });
    await store().markRevoked([gone.id], at(3));
    await store().record(invite(t, { createdAt: at(4) }));

    const views = await store().currentForMembership(t.projectId, m.membership_id, at(5));
    expect(views?.map((v) => v.invite_link)).toStrictEqual([second.inviteLink, first.inviteLink]);
    // The very object the event carried.
    const events = (await eventRows(h, t.projectId))
      .filter((e) => e.type === 'access.invite-created')
      .map((e) => (e.data as { invite: { invite_link: string } }).invite);
    expect(views).toStrictEqual([second, first].map((i) => events.find((e) => e.invite_link === i.inviteLink)));

    expect(await store().currentForMembership(t.projectId, m.membership_id, at(60))).toStrictEqual([]);
    expect(await store().currentForMembership(other.projectId, m.membership_id, at(5))).toBeNull();
    expect(await store().currentForMembership(t.projectId, randomUUID(), at(5))).toBeNull();
  });
});
