import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BotLeasesStore } from '../../src/store/bot-leases.store.js';
import { TelegramUpdateHandling, type UpdateEffects } from '../../src/domain/access/telegram-update-effects.js';
import { TelegramUpdatesStore, type TelegramBotKey } from '../../src/store/telegram-updates.store.js';
import { eventRows } from '../support/api.js';
import { accessRows, integrationRow, targetHealth } from '../support/access-seed.js';
import { createHarness, onPostgres, type Harness } from '../support/harness.js';
import {
  chatMemberUpdate,
  insertChat,
  insertChatAccess,
  insertInvite,
  insertTelegramBot,
  inviteRow,
  storedOffset,
  updateRows,
  type SeededChat,
} from '../support/telegram-updates.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * The Telegram updates' store on both storages: a polled batch and its offset written only by the
 * bot's lease holder, a repeat stored once, the unhandled read in update_id order, and each
 * update's effects written with its handled mark in one statement, once. Driven by a manual clock
 * ahead of the database's.
 */

const LEASE = 30_000;
const OWNER = 'worker-a';
const error = (code: string) => ({ code, message: `${code} happened` });

describe(`telegram updates store (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let h: Harness;
  let clock: ManualClock;
  let store: TelegramUpdatesStore;
  let leases: BotLeasesStore;
  beforeAll(async () => {
    clock = new ManualClock(new Date(Date.now() + 10 * 60_000));
    h = await createHarness({ clock });
    store = new TelegramUpdatesStore(h.database.db);
    leases = new BotLeasesStore(h.database.db);
  });
  afterAll(() => h.close());
  beforeEach(() => h.reset());

  let nextBot = 7_100_000_000;
  /** A project with a connected Telegram bot held by OWNER, a chat target and its access rows. */
  async function project(o: { held?: boolean } = {}) {
    const t = await h.tenant();
    const botId = ++nextBot;
    await insertTelegramBot(h, t.projectId, { id: botId, token: `${botId}:${'x'.repeat(35)}` });
    const chat = await insertChat(h, t.projectId, -1_002_000_000_000 - botId);
    if (o.held !== false) {
      const taken = await leases.acquire({ owner: OWNER, platform: 'telegram', now: clock.now(), until: new Date(clock.now().getTime() + LEASE), limit: 1, reconcileEveryMs: null, all: true });
      expect(taken.map((l) => l.projectId)).toContain(t.projectId);
    }
    const bot: TelegramBotKey = { projectId: t.projectId, botId: String(botId) };
    return { projectId: t.projectId, bot, chat };
  }
  const batch = (ids: number[]) => ids.map((id) => ({ updateId: id, payload: { update_id: id, ...chatMemberUpdate(-1, 5, 'left', 'member') } }));
  const handle = (bot: TelegramBotKey, updateId: number, effects: UpdateEffects = {}, owner = OWNER) =>
    new TelegramUpdateHandling(h.container.transactor).handled({ owner, bot, now: clock.now(), updateId, effects });
  const row = async (projectId: string, chat: SeededChat, userId: string) =>
    (await accessRows(h, projectId)).find((r) => r.target_id === chat.id && r.user_id === userId);

  describe('receiving', () => {
    it('stores a polled batch with its next offset while held; a repeat is stored once; another worker stores nothing', async () => {
      const { projectId, bot } = await project();
      expect(await store.offset(bot)).toBeNull();
      expect(await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([101, 102]), nextOffset: 103 })).toStrictEqual({ held: true, stored: 2 });
      expect(await store.offset(bot)).toBe(103);
      expect(await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([102, 103]), nextOffset: 104 })).toStrictEqual({ held: true, stored: 1 });
      expect(await store.receivePolled({ owner: 'worker-b', bot, now: clock.now(), updates: batch([104]), nextOffset: 105 })).toStrictEqual({ held: false, stored: 0 });
      expect((await updateRows(h, projectId)).map((u) => [u.update_id, u.handled])).toStrictEqual([[101, false], [102, false], [103, false]]);
      expect(await storedOffset(h, projectId)).toBe(104);
      // The payload is the Update as Telegram sent it.
      expect((await updateRows(h, projectId))[0]!.payload).toMatchObject({ update_id: 101, chat_member: { new_chat_member: { status: 'member' } } });
    });

    it('writes nothing once the lease ran out on the app clock', async () => {
      const { projectId, bot } = await project();
      clock.advance(LEASE + 1);
      expect(await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1]), nextOffset: 2 })).toStrictEqual({ held: false, stored: 0 });
      expect(await updateRows(h, projectId)).toStrictEqual([]);
      expect(await storedOffset(h, projectId)).toBeNull();
    });

    it('trusts no offset of another bot: after a reconnection to a new bot, polling starts afresh', async () => {
      const { projectId, bot } = await project();
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([500]), nextOffset: 501 });
      await h.database.db.execute(sql`UPDATE integrations SET bot_id = '42' WHERE project_id = ${projectId}`);
      expect(await store.offset({ projectId, botId: '42' })).toBeNull();
      // The old bot's lease no longer covers the new bot: nothing is stored for the old one.
      expect((await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([501]), nextOffset: 502 })).held).toBe(false);
    });

    it('stores a name holding a NUL (jsonb cannot) with the character replaced, rather than failing the batch for good', async () => {
      const { projectId, bot } = await project();
      const payload = { update_id: 7, chat_member: { from: { id: 5, first_name: 'a\u0000b\uD800' } } };
      expect((await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: [{ updateId: 7, payload }], nextOffset: 8 })).stored).toBe(1);
      expect((await updateRows(h, projectId))[0]!.payload).toStrictEqual({ update_id: 7, chat_member: { from: { id: 5, first_name: 'a\uFFFDb\uFFFD' } } });
    });

    it('stores a webhook delivery once, only for the bot connected now, held or not', async () => {
      const { projectId, bot } = await project({ held: false });
      expect(await store.webhookBot(projectId)).toBe(bot.botId);
      const update = batch([9])[0]!;
      expect(await store.receiveWebhook(bot, clock.now(), update)).toBe(true);
      expect(await store.receiveWebhook(bot, clock.now(), update)).toBe(false);
      expect(await store.receiveWebhook({ projectId, botId: '42' }, clock.now(), batch([10])[0]!)).toBe(false);
      expect((await updateRows(h, projectId)).map((u) => [u.bot_id, u.update_id])).toStrictEqual([[bot.botId, 9]]);
      expect(await store.webhookBot((await h.tenant()).projectId)).toBeNull();
    });
  });

  describe('handling', () => {
    it('hands the holder its unhandled updates in update_id order, and nobody else any', async () => {
      const { projectId, bot } = await project();
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([30, 10, 20, 40]), nextOffset: 41 });
      expect((await handle(bot, 20)).handled).toBe(true);
      expect((await store.unhandled(OWNER, bot, clock.now(), 2)).map((u) => u.updateId)).toStrictEqual([10, 30]);
      expect((await store.unhandled(OWNER, bot, clock.now(), 10)).map((u) => u.updateId)).toStrictEqual([10, 30, 40]);
      expect(await store.unhandled('worker-b', bot, clock.now(), 10)).toStrictEqual([]);
      expect(await store.withUnhandled([projectId, (await h.tenant()).projectId])).toStrictEqual(new Set([projectId]));
    });

    it('a member joining through their link: the link used, the row synced with access.granted, once however often it is handled', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [{ userId: '5', desired: 'granted', applied: 'revoked', state: 'waiting_for_member' }]);
      const invite = await insertInvite(h, projectId, chat, { userId: '5', botId: bot.botId });
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1]), nextOffset: 2 });
      const effects: UpdateEffects = { link: { inviteLink: invite.inviteLink, usedBy: '5', revoked: false }, joined: { targetId: chat.id, userId: '5' } };

      expect(await handle(bot, 1, effects)).toStrictEqual({ held: true, handled: true, granted: 1 });
      expect(await handle(bot, 1, effects)).toStrictEqual({ held: true, handled: false, granted: 0 });
      expect(await row(projectId, chat, '5')).toMatchObject({ desired: 'granted', applied: 'granted', state: 'synced', last_error: null, synced_at: clock.now().toISOString() });
      expect(await inviteRow(h, invite.inviteLink)).toMatchObject({ used_by: '5', used_at: clock.now().toISOString(), revoked_at: null });
      expect((await eventRows(h, projectId)).filter((e) => e.type.startsWith('access.'))).toStrictEqual([
        { type: 'access.granted', project_id: projectId, data: { user_id: '5', target_id: chat.id, platform: 'telegram' } },
      ]);
      expect((await updateRows(h, projectId))[0]!.handled).toBe(true);
    });

    it('a join of a row synced already writes no second event; a revoked member in the chat is made pending for the worker', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [
        { userId: '5', desired: 'granted', applied: 'granted', state: 'synced' },
        { userId: '6', desired: 'revoked', applied: 'revoked', state: 'synced' },
      ]);
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1, 2]), nextOffset: 3 });
      expect((await handle(bot, 1, { joined: { targetId: chat.id, userId: '5' } })).granted).toBe(0);
      expect((await handle(bot, 2, { joined: { targetId: chat.id, userId: '6' } })).granted).toBe(0);
      expect(await row(projectId, chat, '6')).toMatchObject({ desired: 'revoked', applied: 'granted', state: 'pending', attempts: 0 });
      expect(new Date((await row(projectId, chat, '6'))!.next_attempt_at).getTime()).toBeLessThanOrEqual(clock.now().getTime());
      expect((await eventRows(h, projectId)).filter((e) => e.type.startsWith('access.'))).toStrictEqual([]);
    });

    it('someone else joining through a link: the link used by them and revoked, the member waiting for it pending again', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [
        { userId: '5', desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
        // Pending already (the worker will make a link anyway), and synced (in the chat): left as they are.
        { userId: '7', desired: 'granted', state: 'pending', nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
        { userId: '8', desired: 'granted', applied: 'granted', state: 'synced' },
      ]);
      const invite = await insertInvite(h, projectId, chat, { userId: '5', botId: bot.botId });
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1, 2, 3]), nextOffset: 4 });
      const misused = error('invite_misused');
      await handle(bot, 1, { link: { inviteLink: invite.inviteLink, usedBy: '666', revoked: true }, relink: { targetId: chat.id, userId: '5', error: misused } });
      await handle(bot, 2, { relink: { targetId: chat.id, userId: '7', error: misused } });
      await handle(bot, 3, { relink: { targetId: chat.id, userId: '8', error: misused } });

      expect(await inviteRow(h, invite.inviteLink)).toMatchObject({ used_by: '666', revoked_at: clock.now().toISOString() });
      expect(await row(projectId, chat, '5')).toMatchObject({ state: 'pending', attempts: 0, last_error: misused, next_attempt_at: clock.now().toISOString() });
      expect(await row(projectId, chat, '7')).toMatchObject({ state: 'pending', last_error: null, next_attempt_at: new Date(clock.now().getTime() + 60_000).toISOString() });
      expect(await row(projectId, chat, '8')).toMatchObject({ state: 'synced', applied: 'granted', last_error: null });
      // A later use keeps the first: who used it, when.
      clock.advance(1000);
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([5]), nextOffset: 6 });
      await handle(bot, 5, { link: { inviteLink: invite.inviteLink, usedBy: '5', revoked: false } });
      expect(await inviteRow(h, invite.inviteLink)).toMatchObject({ used_by: '666', revoked_at: new Date(clock.now().getTime() - 1000).toISOString() });
    });

    it('a member who left waits for the member again; only a granted synced row', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [
        { userId: '5', desired: 'granted', applied: 'granted', state: 'synced' },
        { userId: '6', desired: 'revoked', applied: 'granted', state: 'pending' },
      ]);
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1, 2]), nextOffset: 3 });
      await handle(bot, 1, { left: { targetId: chat.id, userId: '5', error: error('left_chat') } });
      await handle(bot, 2, { left: { targetId: chat.id, userId: '6', error: error('left_chat') } });
      expect(await row(projectId, chat, '5')).toMatchObject({ state: 'waiting_for_member', applied: 'revoked', last_error: error('left_chat') });
      expect(await row(projectId, chat, '6')).toMatchObject({ state: 'pending', applied: 'granted', last_error: null });
    });

    it('the bot losing its rights: the target unhealthy and its pending rows failed with access.failed; regaining them heals it and retries', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [
        { userId: '5', desired: 'granted', state: 'pending' },
        { userId: '6', desired: 'granted', applied: 'granted', state: 'synced' },
      ]);
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1, 2]), nextOffset: 3 });
      await handle(bot, 1, { targetFault: { targetId: chat.id, error: error('bot_not_admin') } });
      expect(await targetHealth(h, chat.id)).toStrictEqual({ health: 'unhealthy', health_error: error('bot_not_admin') });
      expect(await row(projectId, chat, '5')).toMatchObject({ state: 'failed', last_error: error('bot_not_admin'), failed_generation: 1 });
      expect(await row(projectId, chat, '6')).toMatchObject({ state: 'synced' });
      expect((await eventRows(h, projectId)).filter((e) => e.type.startsWith('access.'))).toStrictEqual([
        { type: 'access.failed', project_id: projectId, data: { user_id: '5', target_id: chat.id, platform: 'telegram', error: error('bot_not_admin') } },
      ]);

      await handle(bot, 2, { targetHealed: { targetId: chat.id } });
      expect(await targetHealth(h, chat.id)).toStrictEqual({ health: 'ok', health_error: null });
      expect(await row(projectId, chat, '5')).toMatchObject({ state: 'pending', attempts: 0, last_error: null, failed_generation: null });
    });

    it('a worker that does not hold the bot writes nothing, and the update stays unhandled for the holder', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [{ userId: '5', desired: 'granted', state: 'waiting_for_member', applied: 'revoked' }]);
      await store.receivePolled({ owner: OWNER, bot, now: clock.now(), updates: batch([1]), nextOffset: 2 });
      expect(await handle(bot, 1, { joined: { targetId: chat.id, userId: '5' } }, 'worker-b')).toStrictEqual({ held: false, handled: false, granted: 0 });
      clock.advance(LEASE);
      expect(await handle(bot, 1, { joined: { targetId: chat.id, userId: '5' } })).toStrictEqual({ held: false, handled: false, granted: 0 });
      expect(await row(projectId, chat, '5')).toMatchObject({ state: 'waiting_for_member' });
      expect((await updateRows(h, projectId))[0]!.handled).toBe(false);
    });

    it('reads what a decision needs: the chat’s target, the user’s row and ban, the link and its member’s row', async () => {
      const { projectId, bot, chat } = await project();
      await insertChatAccess(h, projectId, chat, [
        { userId: '5', desired: 'granted', applied: 'revoked', state: 'waiting_for_member' },
        { userId: '6', desired: 'revoked', applied: 'revoked', state: 'synced' },
      ]);
      await h.database.db.execute(sql`INSERT INTO bans (project_id, user_id) VALUES (${projectId}, '6')`);
      const invite = await insertInvite(h, projectId, chat, { userId: '5', botId: bot.botId });
      expect(await store.context(projectId, chat.externalId, '6', invite.inviteLink)).toStrictEqual({
        target: { id: chat.id, healthy: true },
        user: { desired: 'revoked', state: 'synced', applied: 'revoked' },
        userBanned: true,
        invite: { targetId: chat.id, userId: '5', chatId: chat.externalId },
        inviteOwner: { desired: 'granted', state: 'waiting_for_member', applied: 'revoked' },
      });
      expect(await store.context(projectId, '-1', '5', null)).toStrictEqual({ target: null, user: null, userBanned: false, invite: null, inviteOwner: null });
      // The bot's own status: the chat only.
      expect(await store.context(projectId, chat.externalId, null, null)).toStrictEqual({ target: { id: chat.id, healthy: true }, user: null, userBanned: false, invite: null, inviteOwner: null });
      // Another project's link is not this project's.
      const other = await project({ held: false });
      expect((await store.context(other.projectId, chat.externalId, '5', invite.inviteLink)).invite).toBeNull();
    });

    it('a refused token flags the integration, by the holder only', async () => {
      const { projectId, bot } = await project();
      expect(await store.flagUnauthorized('worker-b', bot, clock.now(), error('401'))).toBe(false);
      expect(await store.flagUnauthorized(OWNER, bot, clock.now(), error('401'))).toBe(true);
      expect(await integrationRow(h, projectId, 'telegram')).toMatchObject({ health: 'unhealthy', last_error: error('401') });
    });
  });
});
