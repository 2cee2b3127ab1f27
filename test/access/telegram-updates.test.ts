import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTelegramApi, grammy } from '../../src/access/telegram/api.js';
import { startWorkerRuntime } from '../../src/worker-runtime.js';
import { targetHealth } from '../support/access-seed.js';
import { eventRows } from '../support/api.js';
import { useHarness, type Harness } from '../support/harness.js';
import { callsFrom, eventsOf, rowOf, telegramMember, telegramProject, useTelegramWorkers, type TelegramProject } from '../support/telegram.js';
import { inviteRow, pendingOnTelegram, untilPolling, updateRows, useTelegramUpdates } from '../support/telegram-updates.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The bot hears joins, leaves and join requests (docs/access-telegram.md), by long polling,
 * through the real app: bots connected through the API, the Telegram access worker wired as the
 * worker runtime wires it (started: it makes the links), its updates' loops beside it, and grammY
 * against the harness's fake Bot API. Each update is handled once however often it arrives; the
 * webhook route and the webhook mode are in telegram-updates-webhook.test.ts.
 */

/** Whether each stored chat_member update is handled (the bot's own my_chat_member, from being made an admin, comes first). */
const joinsHandled = async (h: Harness, projectId: string) => (await updateRows(h, projectId)).filter((u) => 'chat_member' in u.payload).map((u) => u.handled);

/** The project's access events, their types in order. */
const accessEvents = async (h: Harness, projectId: string) => (await eventRows(h, projectId)).filter((e) => e.type.startsWith('access.')).map((e) => e.type);

describe('Telegram updates by long polling', () => {
  const h = useHarness();
  const worker = useTelegramWorkers(h);
  const listen = useTelegramUpdates(h);

  /** A project, its worker and updates started; resolves once the bot polls for the kinds tenure handles. */
  async function running(o: Parameters<typeof telegramProject>[1] = {}) {
    const p = await telegramProject(h, o);
    const w = worker();
    const updates = listen(w);
    w.start();
    await untilPolling(h.telegram, p.bot);
    return { p, w, updates };
  }

  /** A member of `p` and the link the worker made for them. */
  async function invited(p: TelegramProject) {
    const m = await telegramMember(h, p);
    await eventually(async () => (await rowOf(h, p, m)).state === 'waiting_for_member', 'the worker made the member a link');
    const link = h.telegram.links(p.chatId).find((l) => l.name?.includes(`u:${m.userId}`) && !l.is_revoked);
    expect(link, 'the member’s link').toBeDefined();
    return { m, link: link!.invite_link };
  }

  it('takes the bot with deleteWebhook, then polls getUpdates for chat_member, chat_join_request, my_chat_member, message and callback_query, 25 s at a time', async () => {
    const { p } = await running();
    const calls = h.telegram.calls.filter((c) => c.botId === Number(p.bot.id) && ['deleteWebhook', 'getUpdates'].includes(c.method));
    expect(calls[0]).toMatchObject({ method: 'deleteWebhook', status: 200 });
    // The long poll waiting now is answered (and so recorded) once something happens.
    const { m, link } = await invited(p);
    expect(h.telegram.join(m.id, link)).toStrictEqual({ result: 'joined' });
    await eventually(() => h.telegram.calls.some((c) => c.botId === Number(p.bot.id) && c.method === 'getUpdates'), 'a poll answered');
    const poll = h.telegram.calls.find((c) => c.botId === Number(p.bot.id) && c.method === 'getUpdates')!;
    expect(poll.params).toMatchObject({ timeout: 25, allowed_updates: ['chat_member', 'chat_join_request', 'my_chat_member', 'message', 'callback_query'] });
  });

  it('a member joining with their link: the row synced with access.granted, the link marked used', async () => {
    const { p } = await running();
    const { m, link } = await invited(p);

    expect(h.telegram.join(m.id, link)).toStrictEqual({ result: 'joined' });

    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'the row synced');
    expect(await rowOf(h, p, m)).toMatchObject({ desired: 'granted', applied: 'granted', last_error: null });
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toStrictEqual([{ user_id: m.userId, target_id: p.target.target_id, platform: 'telegram' }]);
    expect(await inviteRow(h, link)).toMatchObject({ user_id: m.userId, used_by: m.userId, revoked_at: null });
    expect(await inviteRow(h, link).then((r) => r?.used_at)).toMatch(/Z$/);
    expect(await joinsHandled(h, p.t.projectId)).toStrictEqual([true]);
  });

  it('a stranger joining with a member’s link is removed (left, not banned), the link revoked, and the member gets a fresh link', async () => {
    const { p } = await running();
    const { m, link } = await invited(p);
    const stranger = h.telegram.addUser();
    const calls = callsFrom(h.telegram, p.bot);

    expect(h.telegram.join(stranger.id, link)).toStrictEqual({ result: 'joined' });

    await eventually(() => h.telegram.status(p.chatId, stranger.id) === 'left', 'the stranger removed');
    await eventually(async () => h.telegram.links(p.chatId).length === 2 && (await rowOf(h, p, m)).state === 'waiting_for_member', 'a fresh link');
    expect(calls.since().filter((c) => c.method !== 'getUpdates').map((c) => [c.method, c.status])).toStrictEqual([
      ['banChatMember', 200],
      ['unbanChatMember', 200],
      ['revokeChatInviteLink', 200],
      // The member's row pending again: the worker looks, and makes a new link.
      ['getChatMember', 200],
      ['createChatInviteLink', 200],
    ]);
    // A short ban, lifted at once: should the unban not come, the ban would lift itself.
    const ban = calls.since().find((c) => c.method === 'banChatMember')!.params as { user_id: number; until_date: number };
    expect(ban.user_id).toBe(stranger.id);
    expect(ban.until_date - Date.now() / 1000).toBeGreaterThan(60);
    expect(calls.since().find((c) => c.method === 'unbanChatMember')!.params).toMatchObject({ user_id: stranger.id, only_if_banned: true });
    const [first, fresh] = h.telegram.links(p.chatId);
    expect(first).toMatchObject({ invite_link: link, is_revoked: true });
    expect(fresh).toMatchObject({ is_revoked: false, member_limit: 1 });
    expect(await inviteRow(h, link)).toMatchObject({ used_by: String(stranger.id), revoked_at: expect.stringMatching(/Z$/) });
    expect((await eventsOf(h, p.t.projectId, 'access.invite-created')).map((e) => (e.invite as { invite_link: string }).invite_link)).toStrictEqual([link, fresh!.invite_link]);

    // The fresh link lets the member in.
    expect(h.telegram.join(m.id, fresh!.invite_link)).toStrictEqual({ result: 'joined' });
    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'the member in');
    expect(h.telegram.status(p.chatId, stranger.id)).toBe('left');
  });

  it('a member with access who leaves waits for the member again; the bot losing admin flags the chat, regaining it heals it', async () => {
    const { p } = await running();
    const { m, link } = await invited(p);
    h.telegram.join(m.id, link);
    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'in');

    h.telegram.leave(p.chatId, m.id);
    await eventually(async () => (await rowOf(h, p, m)).state === 'waiting_for_member', 'waiting again');
    expect(await rowOf(h, p, m)).toMatchObject({ applied: 'revoked', last_error: { code: 'left_chat' } });

    h.telegram.setBot(p.chatId, Number(p.bot.id), 'member');
    await eventually(async () => (await targetHealth(h, p.target.target_id)).health === 'unhealthy', 'the target flagged');
    expect((await targetHealth(h, p.target.target_id)).health_error).toMatchObject({ code: 'bot_not_admin' });
    h.telegram.setBot(p.chatId, Number(p.bot.id), 'admin');
    await eventually(async () => (await targetHealth(h, p.target.target_id)).health === 'ok', 'the target healed');
  });

  it('an update Telegram hands again (unconfirmed when the worker stopped, the offset lost) is stored once and changes nothing', async () => {
    const { p, w, updates } = await running();
    const { m, link } = await invited(p);
    // The poll after the join's batch fails: Telegram keeps the batch unconfirmed.
    h.telegram.failNext(1, { error_code: 502, description: 'Bad Gateway' }, 'getUpdates');
    h.telegram.join(m.id, link);
    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'handled');
    await eventually(() => h.telegram.calls.some((c) => c.method === 'getUpdates' && c.status === 502), 'the confirming poll failed');
    // The process stops before polling again (its pause after the failure is 1 s).
    await updates.stop();
    await w.stop(0);
    expect(await pendingOnTelegram(h.telegram, p.bot)).toBe(1);
    // As if the offset had not been kept: the next holder polls from Telegram's oldest unconfirmed update.
    await h.database.db.execute(sql`UPDATE integrations SET update_offset = NULL WHERE project_id = ${p.t.projectId}`);
    const before = { row: await rowOf(h, p, m), invite: await inviteRow(h, link), events: await accessEvents(h, p.t.projectId) };

    const next = worker();
    listen(next);
    next.start();
    await eventually(async () => (await pendingOnTelegram(h.telegram, p.bot)) === 0, 'the update handed again, and confirmed');

    expect(await rowOf(h, p, m)).toStrictEqual(before.row);
    expect(await inviteRow(h, link)).toStrictEqual(before.invite);
    expect(await accessEvents(h, p.t.projectId)).toStrictEqual(before.events);
    expect(await joinsHandled(h, p.t.projectId)).toStrictEqual([true]);
  });

  it('a worker stopped after its Telegram calls but before writing: the next holder makes them again (harmless) and writes once', async () => {
    const { p, w, updates } = await running();
    const { m, link } = await invited(p);
    const stranger = h.telegram.addUser();
    // The revoke fails for a passing reason: the kick is made, nothing written, the update retried.
    h.telegram.failNext(1, { error_code: 500, description: 'Internal Server Error' }, 'revokeChatInviteLink');
    const calls = callsFrom(h.telegram, p.bot);
    h.telegram.join(stranger.id, link);
    await eventually(() => calls.since().some((c) => c.method === 'revokeChatInviteLink' && c.status === 500), 'the revoke failed');
    await updates.stop();
    await w.stop(0);
    expect(await joinsHandled(h, p.t.projectId)).toStrictEqual([false]);

    const next = worker();
    listen(next);
    next.start();
    await eventually(async () => h.telegram.links(p.chatId).length === 2 && (await rowOf(h, p, m)).state === 'waiting_for_member', 'relinked');

    expect(calls.since().filter((c) => c.method === 'banChatMember').map((c) => c.status)).toStrictEqual([200, 200]);
    expect(h.telegram.status(p.chatId, stranger.id)).toBe('left');
    expect(h.telegram.links(p.chatId)[0]).toMatchObject({ invite_link: link, is_revoked: true });
    // The join, then the kicks' own updates (member → kicked → left, twice): each handled once.
    await eventually(async () => (await joinsHandled(h, p.t.projectId)).every(Boolean), 'all handled');
    expect(await joinsHandled(h, p.t.projectId)).toHaveLength(5);
    expect(await eventsOf(h, p.t.projectId, 'access.invite-created')).toHaveLength(2);
  });

  it('another getUpdates on the bot (409 Conflict) makes the poller back off, then go on', async () => {
    const { p } = await running();
    const { m, link } = await invited(p);
    const calls = callsFrom(h.telegram, p.bot);
    // Someone else polls the same bot: Telegram ends tenure's waiting poll with 409.
    await grammy.load();
    await createTelegramApi(p.bot.token, h.telegram.url).getUpdates({ timeout: 0 });
    await eventually(() => calls.since().some((c) => c.method === 'getUpdates' && c.status === 409), 'a 409');

    h.telegram.join(m.id, link);
    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'handled after the pause');
  });

  it('one poller per bot: of two workers only the lease holder polls; when it stops, the other takes over', async () => {
    const p = await telegramProject(h);
    const [a, b] = [worker(), worker()];
    const [ua, ub] = [listen(a), listen(b)];
    a.start();
    await untilPolling(h.telegram, p.bot);
    b.start();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([...ua.bots.keys()]).toStrictEqual([p.t.projectId]);
    expect([...ub.bots.keys()]).toStrictEqual([]);
    const first = await invited(p);
    h.telegram.join(first.m.id, first.link);
    await eventually(async () => (await rowOf(h, p, first.m)).state === 'synced', 'handled by a');

    await ua.stop();
    await a.stop(0);
    await eventually(() => ub.bots.has(p.t.projectId), 'b takes the bot');
    const second = await invited(p);
    h.telegram.join(second.m.id, second.link);
    await eventually(async () => (await rowOf(h, p, second.m)).state === 'synced', 'handled by b');
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toHaveLength(2);
  });
});

describe('Telegram updates in the worker runtime', () => {
  const h = useHarness();

  it('are received and handled by the runtime that holds the bot (TENURE_TELEGRAM_UPDATES=polling)', async () => {
    const p = await telegramProject(h);
    const m = await telegramMember(h, p);
    const runtime = await startWorkerRuntime(h.container, { pollMs: 200 });
    try {
      await untilPolling(h.telegram, p.bot);
      await eventually(async () => (await rowOf(h, p, m)).state === 'waiting_for_member', 'a link');
      h.telegram.join(m.id, h.telegram.links(p.chatId)[0]!.invite_link);
      await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'the join handled');
    } finally {
      await runtime.stop();
    }
    // Stopped: nobody polls the bot any more; what happens in the chat now waits at Telegram.
    const stored = (await updateRows(h, p.t.projectId)).length;
    h.telegram.leave(p.chatId, m.id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await updateRows(h, p.t.projectId)).toHaveLength(stored);
    expect(await rowOf(h, p, m)).toMatchObject({ state: 'synced' });
  });
});

describe('Telegram updates: join requests', () => {
  const h = useHarness({ env: { TENURE_TELEGRAM_INVITE_MODE: 'join_request' } });
  const worker = useTelegramWorkers(h);
  const listen = useTelegramUpdates(h);

  it('approves a request of a member with access, declines one of anybody else through the same link', async () => {
    const p = await telegramProject(h);
    const w = worker();
    listen(w);
    w.start();
    await untilPolling(h.telegram, p.bot);
    const m = await telegramMember(h, p);
    await eventually(async () => (await rowOf(h, p, m)).state === 'waiting_for_member', 'a join-request link');
    const link = h.telegram.links(p.chatId)[0]!;
    expect(link.creates_join_request).toBe(true);
    const calls = callsFrom(h.telegram, p.bot);

    expect(h.telegram.join(m.id, link.invite_link)).toStrictEqual({ result: 'requested' });
    await eventually(async () => (await rowOf(h, p, m)).state === 'synced', 'approved and synced');
    expect(h.telegram.status(p.chatId, m.id)).toBe('member');

    const stranger = h.telegram.addUser();
    expect(h.telegram.join(stranger.id, link.invite_link)).toStrictEqual({ result: 'requested' });
    await eventually(() => calls.since().some((c) => c.method === 'declineChatJoinRequest'), 'declined');
    expect(h.telegram.status(p.chatId, stranger.id)).toBe('left');
    expect(h.telegram.links(p.chatId)[0]!.pending).toStrictEqual([]);
    expect(calls.since().filter((c) => c.method.endsWith('ChatJoinRequest')).map((c) => [c.method, c.params.user_id, c.status])).toStrictEqual([
      ['approveChatJoinRequest', m.id, 200],
      ['declineChatJoinRequest', stranger.id, 200],
    ]);
    expect(await eventsOf(h, p.t.projectId, 'access.granted')).toStrictEqual([{ user_id: m.userId, target_id: p.target.target_id, platform: 'telegram' }]);
  });
});
