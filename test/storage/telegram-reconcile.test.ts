import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { Platform } from '../../src/domain/targets/target.view.js';
import { rowsOf } from '../../src/database/db.js';
import { TelegramReconcileStore, type ChatAnswer } from '../../src/store/telegram-reconcile.store.js';
import { accessRows, insertIntegration, targetHealth } from '../support/access-seed.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';

/**
 * Telegram drift repair's SQL on both storages (src/store/telegram-reconcile.store.ts): which
 * members of a chat are asked about, a page of getChatMember answers against their rows in one
 * statement (with the `access.granted` of a missed join in it), the guard against rows newer than
 * the answers, a chat the bot cannot see flagged on its target and cleared, and the bots due. The
 * whole comparison against the fake Bot API is test/access/telegram-reconcile.test.ts.
 */

const h = useHarness();

interface Chat {
  id: string;
  chatId: string;
}

interface Row {
  userId: string;
  desired: 'granted' | 'revoked';
  applied?: 'granted' | 'revoked' | null;
  state: 'pending' | 'synced' | 'waiting_for_member' | 'failed';
  onExpiry?: 'kick' | 'none';
}

let nextUser = 700_000_000 + Math.floor(Math.random() * 1e6) * 100;
/** A Telegram user id (positive, under 2^52). */
const userId = () => String(nextUser++);
const chatIdOf = () => `-100${1_000_000_000 + Math.floor(Math.random() * 1e9)}`;

async function insertChat(projectId: string, o: { onExpiry?: 'kick' | 'none' } = {}): Promise<Chat> {
  const id = randomUUID();
  const chatId = chatIdOf();
  await h.database.db.execute(sql`
    INSERT INTO targets (id, project_id, name, platform, kind, external_id, on_expiry)
    VALUES (${id}, ${projectId}, ${`group ${chatId}`}, 'telegram', 'group', ${chatId}, ${o.onExpiry ?? null})`);
  return { id, chatId };
}

/** Access rows of one chat, as the planner and the worker leave them, a minute old (older than any comparison from now on). */
async function insertRows(projectId: string, chat: Chat, rows: readonly Row[]): Promise<void> {
  const col = <T>(pick: (r: Row) => T) => sql.param(rows.map(pick));
  await h.database.db.execute(sql`
    INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state, attempts, updated_at)
    SELECT ${projectId}, ${chat.id}, r.user_id, 'telegram', 'group', ${chat.chatId}, r.on_expiry, r.desired, r.applied, r.state, 2, now() - interval '1 minute'
    FROM unnest(${col((r) => r.userId)}::text[], ${col((r) => r.desired)}::text[], ${col((r) => r.applied ?? null)}::text[],
                ${col((r) => r.state)}::text[], ${col((r) => r.onExpiry ?? 'kick')}::text[])
         AS r(user_id, desired, applied, state, on_expiry)`);
}

/** A link made for `user` in `chat`: current unless used, revoked or expired. */
async function insertInvite(projectId: string, chat: Chat, user: string, o: { expiresInMs?: number; used?: boolean; revoked?: boolean } = {}): Promise<void> {
  const expires = new Date(Date.now() + (o.expiresInMs ?? 3_600_000)).toISOString();
  await h.database.db.execute(sql`
    INSERT INTO telegram_invites (project_id, target_id, user_id, chat_id, bot_id, invite_link, name, expires_at, used_at, used_by, revoked_at)
    VALUES (${projectId}, ${chat.id}, ${user}, ${chat.chatId}, '123456', ${`https://t.me/+${randomUUID().slice(0, 16)}`}, 'm:test',
            ${expires}::timestamptz, ${o.used ? sql`now()` : null}, ${o.used ? user : null}, ${o.revoked ? sql`now()` : null})`);
}

const stateOf = async (t: Tenant, chat: Chat, user: string) => {
  const row = (await accessRows(h, t.projectId)).find((r) => r.target_id === chat.id && r.user_id === user);
  return row && { desired: row.desired, applied: row.applied, state: row.state };
};

const grantedEvents = async (t: Tenant) =>
  rowsOf<{ data: unknown }>(await h.database.db.execute(sql`SELECT data FROM events WHERE project_id = ${t.projectId} AND type = 'access.granted' ORDER BY seq`)).map(
    (r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data),
  );

const store = () => new TelegramReconcileStore(h.database.db);

describe(`Telegram drift repair store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('repairs each kind of drift of a page of answers in one statement, with the missed join announced, and leaves the rest', async () => {
    const t = await h.tenant();
    const chat = await insertChat(t.projectId);
    const u = Object.fromEntries(
      [
        'stillInside', 'ownerStillInside', 'restrictedInside', 'joined', 'joinedAsAdmin', 'left', 'banned', 'linkExpired', 'noLink', 'linkUsed', 'linkRevoked',
        'waitingWithLink', 'fine', 'gone', 'keptInside', 'pending', 'failed', 'stranger',
      ].map((k) => [k, userId()]),
    ) as Record<string, string>;
    await insertRows(t.projectId, chat, [
      { userId: u.stillInside!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      { userId: u.ownerStillInside!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      { userId: u.restrictedInside!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      { userId: u.joined!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.joinedAsAdmin!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.left!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: u.banned!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: u.linkExpired!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.noLink!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.linkUsed!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.linkRevoked!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.waitingWithLink!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: u.fine!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: u.gone!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      // A revoke that leaves members in: nothing to repair whoever is inside.
      { userId: u.keptInside!, desired: 'revoked', applied: 'revoked', state: 'synced', onExpiry: 'none' },
      // A call is coming for it anyway, or it waits for its target: not compared.
      { userId: u.pending!, desired: 'granted', applied: null, state: 'pending' },
      { userId: u.failed!, desired: 'granted', applied: null, state: 'failed' },
    ]);
    await insertInvite(t.projectId, chat, u.linkExpired!, { expiresInMs: -60_000 });
    await insertInvite(t.projectId, chat, u.linkUsed!, { used: true });
    await insertInvite(t.projectId, chat, u.linkRevoked!, { revoked: true });
    await insertInvite(t.projectId, chat, u.waitingWithLink!);
    // The current link of another chat is not this chat's.
    const other = await insertChat(t.projectId);
    await insertInvite(t.projectId, other, u.noLink!);
    const answers: ChatAnswer[] = [
      { userId: u.stillInside!, presence: 'member' },
      { userId: u.ownerStillInside!, presence: 'admin' },
      { userId: u.restrictedInside!, presence: 'member' },
      { userId: u.joined!, presence: 'member' },
      { userId: u.joinedAsAdmin!, presence: 'admin' },
      { userId: u.left!, presence: 'absent' },
      { userId: u.banned!, presence: 'absent' },
      { userId: u.linkExpired!, presence: 'absent' },
      { userId: u.noLink!, presence: 'absent' },
      { userId: u.linkUsed!, presence: 'absent' },
      { userId: u.linkRevoked!, presence: 'absent' },
      { userId: u.waitingWithLink!, presence: 'absent' },
      { userId: u.fine!, presence: 'member' },
      { userId: u.gone!, presence: 'absent' },
      { userId: u.keptInside!, presence: 'member' },
      { userId: u.pending!, presence: 'absent' },
      { userId: u.failed!, presence: 'absent' },
      { userId: u.stranger!, presence: 'member' },
    ];
    const s = store();
    const seenAt = await s.now();

    expect(await s.repairPage(t.projectId, chat.id, answers, seenAt, new Date())).toStrictEqual({ remove: 2, joined: 2, left: 2, relink: 4 });

    const removed = { desired: 'revoked', applied: 'granted', state: 'pending' };
    const synced = { desired: 'granted', applied: 'granted', state: 'synced' };
    const relinked = { desired: 'granted', applied: 'revoked', state: 'pending' };
    expect(await stateOf(t, chat, u.stillInside!)).toStrictEqual(removed);
    expect(await stateOf(t, chat, u.restrictedInside!)).toStrictEqual(removed);
    expect(await stateOf(t, chat, u.ownerStillInside!)).toStrictEqual({ desired: 'revoked', applied: 'revoked', state: 'synced' });
    expect(await stateOf(t, chat, u.joined!)).toStrictEqual(synced);
    expect(await stateOf(t, chat, u.joinedAsAdmin!)).toStrictEqual(synced);
    for (const k of ['left', 'banned', 'linkExpired', 'noLink', 'linkUsed', 'linkRevoked']) expect(await stateOf(t, chat, u[k]!), k).toStrictEqual(relinked);
    expect(await stateOf(t, chat, u.waitingWithLink!)).toStrictEqual({ desired: 'granted', applied: 'revoked', state: 'waiting_for_member' });
    expect(await stateOf(t, chat, u.fine!)).toStrictEqual(synced);
    expect(await stateOf(t, chat, u.gone!)).toStrictEqual({ desired: 'revoked', applied: 'revoked', state: 'synced' });
    expect(await stateOf(t, chat, u.keptInside!)).toStrictEqual({ desired: 'revoked', applied: 'revoked', state: 'synced' });
    expect(await stateOf(t, chat, u.pending!)).toStrictEqual({ desired: 'granted', applied: null, state: 'pending' });
    expect(await stateOf(t, chat, u.failed!)).toStrictEqual({ desired: 'granted', applied: null, state: 'failed' });
    expect(await stateOf(t, chat, u.stranger!)).toBeUndefined();

    // The repaired rows are due now, their attempts counted afresh; the missed joins are synced now.
    const rows = await accessRows(h, t.projectId);
    const repaired = rows.filter((r) => r.state === 'pending' && r.user_id !== u.pending);
    expect(repaired).toHaveLength(8);
    for (const r of repaired) expect(r.attempts, r.user_id).toBe(0);
    for (const k of ['joined', 'joinedAsAdmin']) expect(rows.find((r) => r.user_id === u[k])!.synced_at, k).not.toBeNull();
    // Only the missed joins are announced here; the worker announces what it does for the others.
    expect(await grantedEvents(t)).toStrictEqual(
      [u.joined!, u.joinedAsAdmin!].sort().map((user) => ({ user_id: user, target_id: chat.id, platform: 'telegram' })),
    );
  });

  it('asks about managed members at rest in pages, never about others, and leaves rows newer than the answers', async () => {
    const t = await h.tenant();
    const chat = await insertChat(t.projectId);
    const other = await insertChat(t.projectId);
    const asked = Array.from({ length: 5 }, () => userId()).sort();
    const [revokedNone, pending, failed, fresh, elsewhere] = [userId(), userId(), userId(), userId(), userId()];
    await insertRows(t.projectId, chat, [
      { userId: asked[0]!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: asked[1]!, desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
      { userId: asked[2]!, desired: 'revoked', applied: 'revoked', state: 'synced' },
      { userId: asked[3]!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: asked[4]!, desired: 'granted', applied: 'granted', state: 'synced' },
      { userId: revokedNone, desired: 'revoked', applied: 'revoked', state: 'synced', onExpiry: 'none' },
      { userId: pending, desired: 'granted', state: 'pending' },
      { userId: failed, desired: 'granted', state: 'failed' },
      { userId: fresh, desired: 'granted', applied: 'granted', state: 'synced' },
    ]);
    await insertRows(t.projectId, other, [{ userId: elsewhere, desired: 'granted', applied: 'granted', state: 'synced' }]);
    const s = store();
    const seenAt = await s.now();
    // The worker applies a row after the comparison began: the answers would be older than the row.
    await h.database.db.execute(sql`UPDATE access SET updated_at = now() + interval '1 second' WHERE user_id = ${fresh}`);

    const first = await s.membersToAsk(t.projectId, chat.id, seenAt, null, 3);
    const second = await s.membersToAsk(t.projectId, chat.id, seenAt, first.at(-1)!, 3);
    expect([first, second]).toStrictEqual([asked.slice(0, 3), asked.slice(3)]);
    expect(await s.membersToAsk(t.projectId, chat.id, seenAt, second.at(-1)!, 3)).toStrictEqual([]);

    // Answered anyway (a row written between the question and the answer): left as it is.
    expect(await s.repairPage(t.projectId, chat.id, [{ userId: fresh, presence: 'absent' }], seenAt, new Date())).toStrictEqual({ remove: 0, joined: 0, left: 0, relink: 0 });
    expect(await stateOf(t, chat, fresh)).toMatchObject({ state: 'synced' });
    // An answer is about this chat's rows only.
    expect(await s.repairPage(t.projectId, chat.id, [{ userId: elsewhere, presence: 'absent' }], seenAt, new Date())).toMatchObject({ left: 0 });
    expect(await stateOf(t, other, elsewhere)).toMatchObject({ state: 'synced' });
  });

  it('names the chats of the targets (not a deleted one), flags a chat the bot cannot see and clears it, retrying its failed rows', async () => {
    const t = await h.tenant();
    const a = await insertChat(t.projectId);
    const b = await insertChat(t.projectId);
    const deleted = await insertChat(t.projectId);
    await h.database.db.execute(sql`DELETE FROM targets WHERE id = ${deleted.id}`);
    const s = store();
    expect(await s.chats(t.projectId)).toStrictEqual(
      [a, b].sort((x, y) => x.chatId.localeCompare(y.chatId)).map((c) => ({ targetId: c.id, chatId: c.chatId })),
    );

    const kicked = { code: '403', message: 'Forbidden: bot was kicked from the supergroup chat' };
    await s.markChatUnhealthy(t.projectId, a.id, kicked);
    expect(await targetHealth(h, a.id)).toStrictEqual({ health: 'unhealthy', health_error: kicked });
    expect(await targetHealth(h, b.id)).toMatchObject({ health: 'ok' });
    const member = userId();
    await insertRows(t.projectId, a, [{ userId: member, desired: 'granted', state: 'failed' }]);

    await s.clearChatRefusal(t.projectId, a.id);
    expect(await targetHealth(h, a.id)).toStrictEqual({ health: 'ok', health_error: null });
    expect(await stateOf(t, a, member)).toMatchObject({ state: 'pending' });

    await s.markChatUnhealthy(t.projectId, b.id, { code: '400', message: 'Bad Request: chat not found' });
    await s.clearChatRefusal(t.projectId, b.id);
    expect(await targetHealth(h, b.id)).toStrictEqual({ health: 'ok', health_error: null });

    // The worker's "not enough rights": seeing the chat does not give the bot its rights back.
    const rights = { code: '400', message: 'Bad Request: not enough rights to manage chat invite link' };
    await h.database.db.execute(sql`UPDATE targets SET health = 'unhealthy', health_error = ${JSON.stringify(rights)}::jsonb WHERE id = ${a.id}`);
    await s.clearChatRefusal(t.projectId, a.id);
    expect(await targetHealth(h, a.id)).toStrictEqual({ health: 'unhealthy', health_error: rights });
  });

  it('finds Telegram bots due: held by this owner, healthy, never compared or long enough ago', async () => {
    const s = store();
    const now = new Date();
    const seed = async (o: { owner: string | null; reconciledMinutesAgo: number | null; health?: 'ok' | 'unhealthy'; platform?: Platform }) => {
      const t = await h.tenant();
      await insertIntegration(h, t.projectId, { health: o.health, platform: o.platform ?? 'telegram' });
      await h.database.db.execute(sql`
        UPDATE integrations SET lease_owner = ${o.owner}, lease_expires_at = now() + interval '1 minute',
          reconciled_at = CASE WHEN ${o.reconciledMinutesAgo}::int IS NULL THEN NULL ELSE now() - make_interval(mins => ${o.reconciledMinutesAgo}::int) END
        WHERE project_id = ${t.projectId}`);
      return t.projectId;
    };
    const owner = `me-${randomUUID()}`;
    const never = await seed({ owner, reconciledMinutesAgo: null });
    const old = await seed({ owner, reconciledMinutesAgo: 20 });
    await seed({ owner, reconciledMinutesAgo: 1 });
    await seed({ owner: 'someone else', reconciledMinutesAgo: null });
    await seed({ owner, reconciledMinutesAgo: null, health: 'unhealthy' });
    // The same owner's Discord bot is Discord's drift repair's.
    await seed({ owner, reconciledMinutesAgo: null, platform: 'discord' });

    expect((await s.due(owner, now, 10 * 60_000)).map((d) => d.projectId)).toStrictEqual([never, old]);
    await s.markReconciled(never, now);
    expect((await s.due(owner, now, 10 * 60_000)).map((d) => d.projectId)).toStrictEqual([old]);
  });
});
