import { describe, expect, it } from 'vitest';
import { addBot, addTelegramBot, connectBot, connectTelegramBot, discordPath, telegramPath, telegramTokenChecks } from '../support/bots.js';
import { createTarget, spreadCreation } from '../support/catalogue.js';
import type { FakeTelegram } from '../support/fake-telegram.js';
import { useHarness } from '../support/harness.js';
import { capturedLog, telegramTarget } from '../support/integrations.js';

/**
 * What only Telegram's connection shows: the bot's rights in each chat, read live from Telegram;
 * what both platforms do alike is in integrations-shared.happy.test.ts.
 */

const getChatMemberCalls = (telegram: FakeTelegram, botId: string) =>
  telegram.calls.filter((c) => c.method === 'getChatMember' && String(c.botId) === botId);

describe('GET /v2/projects/{project_id}/integrations/telegram: the chats of the status', () => {
  const h = useHarness();

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
    await connectTelegramBot(t, bot);
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

    // The generation, the stored token and the connection's health: integrations-shared.happy.test.ts.
    await connectTelegramBot(t, renewed);
    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.json().data.chats.map((c: { is_admin: boolean; error: unknown }) => [c.is_admin, c.error])).toStrictEqual([[true, null]]);
  });

  it('the Discord status has no chats (its commands_error and web_login instead), and the Telegram connection does not change it', async () => {
    const t = await h.tenant();
    await connectBot(t, addBot(h.discord));
    await connectTelegramBot(t, addTelegramBot(h.telegram));
    await telegramTarget(t, h.telegram, 'Chat');
    const res = await t.request({ method: 'GET', url: discordPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json().data).sort()).toStrictEqual(['access', 'bot_id', 'bot_name', 'commands_error', 'connected_at', 'health', 'last_error', 'platform', 'targets', 'web_login']);
    expect(res.json().data.platform).toBe('discord');
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
  const { lines, logger } = capturedLog();
  const h = useHarness({ logger });

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
