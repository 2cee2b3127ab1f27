import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/store/db.js';
import { createMembership, expectSuccess, expireMembership, ISO_MS } from '../support/api.js';
import {
  addBot,
  addTelegramBot,
  connectBot,
  connectTelegramBot,
  discordPath,
  integrationRow,
  telegramPath,
  telegramTokenChecks,
} from '../support/bots.js';
import { createPlan, createTarget, grant, spreadCreation } from '../support/catalogue.js';
import type { FakeTelegram } from '../support/fake-telegram.js';
import { useHarness, userId, type Tenant } from '../support/harness.js';

const CONNECTED = 'Telegram bot connected successfully';
const RETRIEVED = 'Telegram integration retrieved successfully';
const NO_ACCESS = { synced: 0, pending: 0, waiting_for_member: 0, failed: 0 };

/** A Telegram group target on a new supergroup of the fake (or on `chatId`, which may not exist). */
async function telegramTarget(t: Tenant, telegram: FakeTelegram, name: string, chatId?: number) {
  const id = chatId ?? telegram.addChat({ type: 'supergroup', title: name }).id;
  const target = await createTarget(t, { platform: 'telegram', kind: 'group', target_name: name, external_id: String(id) });
  return { ...target, chatId: id };
}

const getChatMemberCalls = (telegram: FakeTelegram, botId: string) =>
  telegram.calls.filter((c) => c.method === 'getChatMember' && String(c.botId) === botId);

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/telegram: happy', () => {
  const h = useHarness();

  it('checks the token with getMe, stores the bot with its token sealed, and answers without the token', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram, 'acme_members_bot');
    const before = Date.now();
    const res = await t.request({ method: 'PUT', url: telegramPath(t), payload: { bot_token: bot.token } });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'PUT',
      path: telegramPath(t),
      message: CONNECTED,
      data: { platform: 'telegram', bot_id: bot.id, bot_name: 'acme_members_bot', connected_at: expect.stringMatching(ISO_MS), health: 'ok', last_error: null },
    });
    expect(Date.parse(data.connected_at)).toBeGreaterThanOrEqual(before - 1);
    expect(res.body).not.toContain(bot.token);
    // One check, with the bot's own token, answered 200: no other call.
    expect(h.telegram.calls.filter((c) => String(c.botId) === bot.id).map((c) => [c.method, c.status])).toStrictEqual([['getMe', 200]]);

    const row = (await integrationRow(h, t.projectId, 'telegram'))!;
    expect(row).toMatchObject({ platform: 'telegram', bot_id: bot.id, bot_name: 'acme_members_bot', connected_at: data.connected_at, health: 'ok', generation: 1 });
    expect(row.bot_token_sealed).toMatch(/^v1\.[\w-]{8}\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    expect(row.bot_token_sealed).not.toContain(bot.token.split(':')[1]);
    expect(h.container.secretBox!.open(row.bot_token_sealed)).toBe(bot.token);
    // The Discord connection of the project is another row: none here.
    expect(await integrationRow(h, t.projectId, 'discord')).toBeUndefined();
  });

  it('takes the token with surrounding whitespace or as it appears in a Bot API URL, and stores it bare', async () => {
    for (const dressed of [(tok: string) => `  ${tok}\n`, (tok: string) => `bot${tok}`]) {
      const t = await h.tenant();
      const bot = addTelegramBot(h.telegram);
      const res = await t.request({ method: 'PUT', url: telegramPath(t), payload: { bot_token: dressed(bot.token) } });
      expect(res.statusCode, res.body).toBe(200);
      expect(h.container.secretBox!.open((await integrationRow(h, t.projectId, 'telegram'))!.bot_token_sealed)).toBe(bot.token);
    }
  });

  it('GET answers the connection, no targets, no access rows and no chats for a fresh connection, without calling Telegram', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    const connected = await connectTelegramBot(t, bot);
    const calls = h.telegram.calls.length;
    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expectSuccess(res, { method: 'GET', path: telegramPath(t), message: RETRIEVED, data: { ...connected, targets: [], access: NO_ACCESS, chats: [] } });
    expect(res.body).not.toContain(bot.token);
    expect(h.telegram.calls.length).toBe(calls);
  });

  it("GET asks Telegram for the bot's rights in each target chat, with the stored token, and says what it found", async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(t, bot);
    const botId = Number(bot.id);
    const ready = await telegramTarget(t, h.telegram, 'Ready');
    h.telegram.setBot(ready.chatId, botId, 'admin');
    const noBan = await telegramTarget(t, h.telegram, 'No ban');
    h.telegram.setBot(noBan.chatId, botId, 'admin', { can_restrict_members: false });
    const noInvite = await telegramTarget(t, h.telegram, 'No invite');
    h.telegram.setBot(noInvite.chatId, botId, 'admin', { can_invite_users: false });
    const member = await telegramTarget(t, h.telegram, 'Member');
    h.telegram.setBot(member.chatId, botId, 'member');
    const absent = await telegramTarget(t, h.telegram, 'Absent');
    const kicked = await telegramTarget(t, h.telegram, 'Kicked');
    h.telegram.setBot(kicked.chatId, botId, 'kicked');
    const channel = h.telegram.addChat({ type: 'channel', title: 'News' });
    h.telegram.setBot(channel.id, botId, 'admin');
    const news = await createTarget(t, { platform: 'telegram', kind: 'channel', target_name: 'News', external_id: String(channel.id) });
    const gone = await telegramTarget(t, h.telegram, 'Gone', -1009999999999);
    const publicChat = await createTarget(t, { platform: 'telegram', kind: 'channel', target_name: 'Public', external_id: '@tenure_public' });
    // A Discord target of the project is not a chat of this bot.
    await createTarget(t, { target_name: 'Discord role' });
    const ordered = [ready, noBan, noInvite, member, absent, kicked, news, gone, publicChat];
    await spreadCreation(h, 'targets', ordered.map((x) => x.target_id));

    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    const rights = (is_admin: boolean, can_invite_users: boolean, can_restrict_members: boolean, error: { code: string; message: string } | null = null) => ({
      is_admin,
      can_invite_users,
      can_restrict_members,
      error,
    });
    const entry = (target: { target_id: string; target_name: string; external_id: string }) => ({
      target_id: target.target_id,
      target_name: target.target_name,
      chat_id: target.external_id,
    });
    expect(res.json().data.chats).toStrictEqual([
      { ...entry(ready), ...rights(true, true, true) },
      { ...entry(noBan), ...rights(true, true, false) },
      { ...entry(noInvite), ...rights(true, false, true) },
      { ...entry(member), ...rights(false, false, false) },
      { ...entry(absent), ...rights(false, false, false, { code: '403', message: 'Forbidden: bot is not a member of the supergroup chat' }) },
      { ...entry(kicked), ...rights(false, false, false, { code: '403', message: 'Forbidden: bot was kicked from the supergroup chat' }) },
      { ...entry(news), ...rights(true, true, true) },
      { ...entry(gone), ...rights(false, false, false, { code: '400', message: 'Bad Request: chat not found' }) },
      { ...entry(publicChat), ...rights(false, false, false, { code: '400', message: 'Bad Request: chat not found' }) },
    ]);
    // Reading the status writes nothing: no target is flagged by it.
    expect(res.json().data.targets).toStrictEqual([]);
    expect(res.body).not.toContain(bot.token);

    // One getChatMember per chat, about the bot itself, with its token (the fake knows the bot by it).
    const asked = getChatMemberCalls(h.telegram, bot.id);
    expect(asked.map((c) => String(c.params.chat_id)).sort()).toStrictEqual(ordered.map((x) => x.external_id).sort());
    expect(new Set(asked.map((c) => String(c.params.user_id)))).toStrictEqual(new Set([bot.id]));
  });

  it('a reconnection with a new token (BotFather /revoke) uses the new token for the status', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    const first = await connectTelegramBot(t, bot);
    const target = await telegramTarget(t, h.telegram, 'Chat');
    h.telegram.setBot(target.chatId, Number(bot.id), 'admin');
    const renewed = { ...bot, token: h.telegram.resetToken(Number(bot.id)) };

    // The old token no longer opens anything: the status says so for the chat, and changes nothing.
    const stale = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(stale.json().data.chats).toStrictEqual([
      {
        target_id: target.target_id,
        target_name: 'Chat',
        chat_id: String(target.chatId),
        is_admin: false,
        can_invite_users: false,
        can_restrict_members: false,
        error: { code: '401', message: 'Unauthorized' },
      },
    ]);
    expect(stale.json().data.health).toBe('ok');

    const again = await connectTelegramBot(t, renewed);
    expect(again).toMatchObject({ bot_id: bot.id, health: 'ok' });
    expect(again.connected_at >= first.connected_at).toBe(true);
    const row = (await integrationRow(h, t.projectId, 'telegram'))!;
    expect(row.generation).toBe(2);
    expect(h.container.secretBox!.open(row.bot_token_sealed)).toBe(renewed.token);
    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.json().data.chats.map((c: { is_admin: boolean; error: unknown }) => [c.is_admin, c.error])).toStrictEqual([[true, null]]);
  });

  it('a reconnection with another bot replaces the bot', async () => {
    const t = await h.tenant();
    await connectTelegramBot(t, addTelegramBot(h.telegram, 'old_bot'));
    const next = addTelegramBot(h.telegram, 'new_bot');
    expect(await connectTelegramBot(t, next)).toMatchObject({ bot_id: next.id, bot_name: 'new_bot' });
    expect(await integrationRow(h, t.projectId, 'telegram')).toMatchObject({ bot_id: next.id, bot_name: 'new_bot', generation: 2 });
  });

  it('plans the whole project once connected: each active member of a plan granting a Telegram target gets an access row', async () => {
    const t = await h.tenant();
    const chat = await telegramTarget(t, h.telegram, 'Members');
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, chat.target_id);
    const active = [userId(), userId()].sort();
    for (const user of active) await createMembership(t, { userId: user, planId: plan.plan_id });
    const ended = await createMembership(t, { userId: userId(), planId: plan.plan_id });
    await expireMembership(h, ended.membership_id);

    await connectTelegramBot(t, addTelegramBot(h.telegram));
    const rows = await h.database.db.execute(sql`
      SELECT user_id, target_id, platform, desired FROM access WHERE project_id = ${t.projectId} ORDER BY user_id`);
    expect(rowsOf(rows)).toStrictEqual(active.map((user) => ({ user_id: user, target_id: chat.target_id, platform: 'telegram', desired: 'granted' })));
  });

  it('the Discord status has no chats, and the Telegram connection does not change it', async () => {
    const t = await h.tenant();
    await connectBot(t, addBot(h.discord));
    await connectTelegramBot(t, addTelegramBot(h.telegram));
    await telegramTarget(t, h.telegram, 'Chat');
    const res = await t.request({ method: 'GET', url: discordPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json().data).sort()).toStrictEqual(['access', 'bot_id', 'bot_name', 'connected_at', 'health', 'last_error', 'platform', 'targets']);
    expect(res.json().data.platform).toBe('discord');
  });

  it('DELETE disconnects: the row and its sealed token go, Telegram is not called, and the bot is free again', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(t, bot);
    await connectBot(t, addBot(h.discord));
    await telegramTarget(t, h.telegram, 'Chat');
    const calls = h.telegram.calls.length;

    const res = await t.request({ method: 'DELETE', url: telegramPath(t) });
    expectSuccess(res, { method: 'DELETE', path: telegramPath(t), message: 'Telegram bot disconnected successfully', data: null });
    expect(await integrationRow(h, t.projectId, 'telegram')).toBeUndefined();
    // The project's Discord connection stays.
    expect(await integrationRow(h, t.projectId, 'discord')).toMatchObject({ health: 'ok' });
    const gone = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(gone.statusCode, gone.body).toBe(404);
    expect(h.telegram.calls.length).toBe(calls);

    const other = await h.tenant();
    expect(await connectTelegramBot(other, bot)).toMatchObject({ bot_id: bot.id });
  });
});

describe('GET /v2/projects/{project_id}/integrations/telegram: how many chats, and when Telegram fails', () => {
  // Fifty chats in one status: above the fake's default 30 calls a second per bot.
  const h = useHarness({ telegram: { globalPerSecond: 1000 } });

  it('asks about the 50 oldest Telegram targets only', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(t, bot);
    const targets = [];
    for (let i = 0; i < 52; i++) targets.push(await createTarget(t, { platform: 'telegram', kind: 'group', target_name: `Chat ${i}`, external_id: String(-1_001_000_000_000 - i) }));
    await spreadCreation(h, 'targets', targets.map((x) => x.target_id));

    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    const chats = res.json().data.chats as { target_id: string; error: { code: string } }[];
    expect(chats.map((c) => c.target_id)).toStrictEqual(targets.slice(0, 50).map((x) => x.target_id));
    // A chat that does not exist is that chat's answer: every chat was still asked.
    expect(new Set(chats.map((c) => c.error.code))).toStrictEqual(new Set(['400']));
    expect(getChatMemberCalls(h.telegram, bot.id)).toHaveLength(50);
  });

  it.each([
    ['a 429', { error_code: 429, description: 'Too Many Requests: retry after 7', retry_after: 7 }],
    ['a 5xx', { error_code: 502, description: 'Bad Gateway' }],
  ])('after %s the chats not yet asked are not asked, and carry the same error', async (_what, failure) => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(t, bot);
    for (let i = 0; i < 12; i++) {
      const target = await telegramTarget(t, h.telegram, `Chat ${i}`);
      h.telegram.setBot(target.chatId, Number(bot.id), 'admin');
    }
    // Five failures, the calls that go out at once: a sixth call would be answered, and show.
    h.telegram.failNext(5, failure, 'getChatMember');
    const before = getChatMemberCalls(h.telegram, bot.id).length;

    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    const error = { code: String(failure.error_code), message: failure.description };
    expect(res.json().data.chats.map((c: { is_admin: boolean; error: unknown }) => [c.is_admin, c.error])).toStrictEqual(Array(12).fill([false, error]));
    // The first five went out together; none after them.
    expect(getChatMemberCalls(h.telegram, bot.id).length - before).toBe(5);
  });
});

describe('logs never carry the Telegram bot token', () => {
  const lines: string[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const h = useHarness({ logger: createLogger('trace', capture) });

  it('after a connection, a refused token, a check Telegram could not answer, a GET with chats and a DELETE', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    const refused = addTelegramBot(h.telegram);
    const refusedToken = refused.token;
    h.telegram.resetToken(Number(refused.id));
    const sends: [string, unknown, number][] = [
      ['PUT', { bot_token: bot.token }, 200],
      ['PUT', { bot_token: `bot${refusedToken}` }, 422],
    ];
    for (const [method, payload, status] of sends) {
      const res = await t.request({ method: method as 'PUT', url: telegramPath(t), payload: payload as object });
      expect(res.statusCode, res.body).toBe(status);
    }
    const chat = await telegramTarget(t, h.telegram, 'Chat');
    h.telegram.setBot(chat.chatId, Number(bot.id), 'admin');
    const status = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(status.json().data.chats[0].is_admin).toBe(true);
    h.telegram.failNext(1, { error_code: 502, description: 'Bad Gateway' }, 'getMe');
    const down = await t.request({ method: 'PUT', url: telegramPath(t), payload: { bot_token: bot.token } });
    expect(down.statusCode, down.body).toBe(503);
    expect((await t.request({ method: 'DELETE', url: telegramPath(t) })).statusCode).toBe(200);

    // Every request was logged, the 503 with its error, and no line holds a token or its secret part.
    expect(lines.filter((l) => l.includes(telegramPath(t))).length).toBeGreaterThanOrEqual(5);
    expect(lines.filter((l) => l.includes('"msg":"request failed"') && l.includes('502 Bad Gateway'))).toHaveLength(1);
    for (const secret of [bot.token, refusedToken, bot.token.split(':')[1]!, refusedToken.split(':')[1]!]) {
      expect(lines.filter((l) => l.includes(secret))).toStrictEqual([]);
    }
    expect(telegramTokenChecks(h.telegram).map((c) => c.status)).toStrictEqual([200, 401, 502]);
  });
});
