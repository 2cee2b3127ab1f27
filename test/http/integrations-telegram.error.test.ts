import { describe, expect, it } from 'vitest';
import { insertIntegration } from '../support/access-seed.js';
import { expectError } from '../support/api.js';
import { connectTelegramBot, telegramPath, telegramTokenChecks } from '../support/bots.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { connectionSnapshot, expectRefusedPut, expectRefusedUnasked, telegram, telegramRefused } from '../support/integrations.js';

/** What only Telegram's connection refuses, and how; the errors both platforms share are in integrations-shared.error.test.ts. */

const NOT_A_TOKEN =
  "bot_token must be a Telegram bot token, the bot's id, a colon and its secret (123456789:AAH…); @BotFather gives it: send /token and choose the bot";

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/telegram: errors', () => {
  const h = useHarness();
  const refused = (t: Tenant, payload: unknown, want: { status: number; code: string; message: string }) => expectRefusedPut(h, telegram, t, payload, want);

  it('answers 422 when Telegram cannot even read the token (404)', async () => {
    const t = await h.tenant();
    h.telegram.failNext(1, { error_code: 404, description: 'Not Found' }, 'getMe');
    await refused(t, { bot_token: telegram.addBot(h).token }, { status: 422, code: 'VALIDATION_ERROR', message: telegramRefused('404 Not Found') });
  });

  it.each([
    ['the secret alone', 'AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0'],
    ['a Discord token', 'MTA5ODc2NTQzMjEwOTg3NjU0MzI.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789_-AB'],
    ['a secret too short', `123:${'a'.repeat(29)}`],
    ['a megabyte', `1:${'a'.repeat(1000 * 1000)}`],
    ['a Bot prefix with a space', `Bot 123:${'a'.repeat(35)}`],
    ['a line break inside', `123:${'a'.repeat(35)}\r\nX-Evil: 1`],
    ['a path after it', `123:${'a'.repeat(35)}/getMe`],
    ['non-ASCII', `123:${'é'.repeat(35)}`],
  ])('answers 422 for a bot_token that is %s, without asking Telegram', (_what, token) => expectRefusedUnasked(h, telegram, { bot_token: token }, NOT_A_TOKEN));

  it("answers 503 with Telegram's retry_after when Telegram rate-limits the check (429), asking once and storing nothing", async () => {
    const t = await h.tenant();
    const bot = telegram.addBot(h);
    h.telegram.failNext(1, { error_code: 429, description: 'Too Many Requests: retry after 17', retry_after: 17 }, 'getMe');
    const res = await refused(t, { bot_token: bot.token }, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Telegram is rate limiting the token check; nothing was stored; try again in a moment',
    });
    expect(res.headers['retry-after']).toBe('17');
    expect(telegramTokenChecks(h.telegram).filter((c) => String(c.botId) === bot.id).map((c) => c.status)).toStrictEqual([429]);
  });

  it('answers 503 when Telegram fails the check (5xx), without retrying, and stores nothing', async () => {
    const t = await h.tenant();
    const bot = telegram.addBot(h);
    h.telegram.failNext(1, { error_code: 500, description: 'Internal Server Error' }, 'getMe');
    const res = await refused(t, { bot_token: bot.token }, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Telegram answered the token check with 500 Internal Server Error. Nothing was stored; try again in a moment',
    });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.body).not.toContain(bot.token);
    expect(telegramTokenChecks(h.telegram).filter((c) => String(c.botId) === bot.id).map((c) => c.status)).toStrictEqual([500]);
    // The next try goes through.
    expect((await connectTelegramBot(t, bot)).bot_id).toBe(bot.id);
  });
});

describe('GET /v2/projects/{project_id}/integrations/telegram: Telegram unreachable', () => {
  // Nothing listens on port 1 of the loopback: every connection is refused.
  const h = useHarness({ env: { TENURE_TELEGRAM_API_URL: 'http://127.0.0.1:1' } });

  it('GET still answers the connection, each chat saying Telegram could not be reached', async () => {
    const t = await h.tenant();
    // Connected while Telegram answered (the row as the service stores it); now it does not.
    const bot = { id: '7000000123', token: `7000000123:${'b'.repeat(35)}` };
    await insertIntegration(h, t.projectId, { platform: 'telegram', botId: bot.id, botTokenSealed: h.container.secretBox!.seal(bot.token) });
    for (const chat of ['-1001', '-1002']) await createTarget(t, { platform: 'telegram', kind: 'group', external_id: chat });
    const res = await t.request({ method: 'GET', url: telegramPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    const unreachable = { code: 'ECONNREFUSED', message: 'Telegram could not be reached (ECONNREFUSED)' };
    expect(res.json().data.chats.map((c: { chat_id: string; is_admin: boolean; error: unknown }) => [c.chat_id, c.is_admin, c.error])).toStrictEqual([
      ['-1001', false, unreachable],
      ['-1002', false, unreachable],
    ]);
    expect(res.body).not.toContain(bot.token);
  });
});

describe('PUT /v2/projects/{project_id}/integrations/telegram: Telegram too slow', () => {
  // Telegram answers after 6 s: past the check's 5 s.
  const h = useHarness({ telegram: { latencyMs: 6_000 } });

  it('answers 503 after 5 s, and stores nothing', async () => {
    const t = await h.tenant();
    const before = await connectionSnapshot(h, telegram, t);
    const path = telegramPath(t);
    const started = Date.now();
    const res = await t.request({ method: 'PUT', url: path, payload: { bot_token: telegram.addBot(h).token } });
    expectError(res, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      method: 'PUT',
      path,
      message: 'Telegram could not be asked to check the token (timed out). Nothing was stored; try again in a moment',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(await connectionSnapshot(h, telegram, t)).toStrictEqual(before);
  });
});
