import { describe, expect, it } from 'vitest';
import { insertIntegration } from '../support/access-seed.js';
import { expectError, projectState } from '../support/api.js';
import { addTelegramBot, connectTelegramBot, integrationRow, telegramPath, telegramTokenChecks } from '../support/bots.js';
import { createTarget } from '../support/catalogue.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';

const NOT_CONNECTED = 'No Telegram bot is connected to this project';
const REFUSED = (answer: string) =>
  `Telegram refused bot_token (${answer}): copy the current token from @BotFather (send /token and choose the bot)`;
const EMPTY = 'bot_token must not be empty: @BotFather gives it: send /token and choose the bot';
const NOT_A_TOKEN =
  "bot_token must be a Telegram bot token, the bot's id, a colon and its secret (123456789:AAH…); @BotFather gives it: send /token and choose the bot";

/** Everything a refused PUT must leave as it was: the project and its Telegram connection. */
async function snapshot(h: Harness, t: Tenant) {
  return { project: await projectState(h, t.projectId), integration: await integrationRow(h, t.projectId, 'telegram') };
}

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/telegram: errors', () => {
  const h = useHarness();

  /** Sends a PUT with `payload` and expects `status` with `message`; nothing is stored. */
  async function refused(t: Tenant, payload: unknown, want: { status: number; code: string; message: string }) {
    const before = await snapshot(h, t);
    const path = telegramPath(t);
    const res = await t.request({
      method: 'PUT',
      url: path,
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload, headers: { 'content-type': 'application/json' } } : { payload: payload as object }),
    });
    expectError(res, { ...want, method: 'PUT', path });
    expect(await snapshot(h, t)).toStrictEqual(before);
    return res;
  }

  it('answers 422 when Telegram refuses the token (401), asking once and storing nothing', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    h.telegram.resetToken(Number(bot.id));
    const checks = telegramTokenChecks(h.telegram).length;
    const res = await refused(t, { bot_token: bot.token }, { status: 422, code: 'VALIDATION_ERROR', message: REFUSED('401 Unauthorized') });
    expect(res.body).not.toContain(bot.token);
    expect(telegramTokenChecks(h.telegram).slice(checks).map((c) => c.status)).toStrictEqual([401]);
  });

  it('answers 422 when Telegram cannot even read the token (404)', async () => {
    const t = await h.tenant();
    h.telegram.failNext(1, { error_code: 404, description: 'Not Found' }, 'getMe');
    await refused(t, { bot_token: addTelegramBot(h.telegram).token }, { status: 422, code: 'VALIDATION_ERROR', message: REFUSED('404 Not Found') });
  });

  it('a refused token on reconnection leaves the working connection as it was', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(t, bot);
    await refused(t, { bot_token: `${bot.id}:${'x'.repeat(35)}` }, { status: 422, code: 'VALIDATION_ERROR', message: REFUSED('401 Unauthorized') });
    expect(await integrationRow(h, t.projectId, 'telegram')).toMatchObject({ bot_id: bot.id, generation: 1, health: 'ok' });
  });

  it.each([
    ['a number', { bot_token: 12345 }, 'bot_token must be a string'],
    ['null', { bot_token: null }, 'bot_token must be a string'],
    ['an array', { bot_token: ['a'] }, 'bot_token must be a string'],
    ['missing', { token: '123:abc' }, 'bot_token is required'],
    ['the empty string', { bot_token: '' }, EMPTY],
    ['whitespace', { bot_token: '   \n' }, EMPTY],
    ['the secret alone', { bot_token: 'AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0' }, NOT_A_TOKEN],
    ['a Discord token', { bot_token: 'MTA5ODc2NTQzMjEwOTg3NjU0MzI.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789_-AB' }, NOT_A_TOKEN],
    ['a secret too short', { bot_token: `123:${'a'.repeat(29)}` }, NOT_A_TOKEN],
    ['a megabyte', { bot_token: `1:${'a'.repeat(1000 * 1000)}` }, NOT_A_TOKEN],
    ['a Bot prefix with a space', { bot_token: `Bot 123:${'a'.repeat(35)}` }, NOT_A_TOKEN],
    ['a line break inside', { bot_token: `123:${'a'.repeat(35)}\r\nX-Evil: 1` }, NOT_A_TOKEN],
    ['a path after it', { bot_token: `123:${'a'.repeat(35)}/getMe` }, NOT_A_TOKEN],
    ['non-ASCII', { bot_token: `123:${'é'.repeat(35)}` }, NOT_A_TOKEN],
  ])('answers 422 for a bot_token that is %s, without asking Telegram', async (_what, payload, message) => {
    const t = await h.tenant();
    const calls = h.telegram.calls.length;
    await refused(t, payload, { status: 422, code: 'VALIDATION_ERROR', message });
    expect(h.telegram.calls.length).toBe(calls);
  });

  it.each([
    ['no body at all', undefined],
    ['[]', '[]'],
    ['a JSON string', '"123:abc"'],
  ])('answers 422 for a body of %s', async (_what, payload) => {
    await refused(await h.tenant(), payload, { status: 422, code: 'VALIDATION_ERROR', message: 'body must be object' });
  });

  it("answers 503 with Telegram's retry_after when Telegram rate-limits the check (429), asking once and storing nothing", async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram);
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
    const bot = addTelegramBot(h.telegram);
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

  it('answers 409 when the bot is connected to another project; neither project changes', async () => {
    const owner = await h.tenant();
    const bot = addTelegramBot(h.telegram);
    await connectTelegramBot(owner, bot);
    const ownerRow = await integrationRow(h, owner.projectId, 'telegram');
    const t = await h.tenant();
    const res = await refused(t, { bot_token: bot.token }, {
      status: 409,
      code: 'CONFLICT',
      message: `This Telegram bot (id ${bot.id}) is connected to another project; a bot serves one project. Disconnect it there first, or create another bot for this project`,
    });
    expect(res.body).not.toContain(owner.projectId);
    expect(await integrationRow(h, owner.projectId, 'telegram')).toStrictEqual(ownerRow);
  });

  it('of two projects connecting one bot at the same moment, one wins and the other gets 409', async () => {
    const [a, b] = [await h.tenant(), await h.tenant()];
    const bot = addTelegramBot(h.telegram);
    const answers = await Promise.all([a, b].map((t) => t.request({ method: 'PUT', url: telegramPath(t), payload: { bot_token: bot.token } })));
    expect(answers.map((r) => r.statusCode).sort()).toStrictEqual([200, 409]);
    const rows = [await integrationRow(h, a.projectId, 'telegram'), await integrationRow(h, b.projectId, 'telegram')].filter(Boolean);
    expect(rows.map((r) => r!.bot_id)).toStrictEqual([bot.id]);
  });

  it.each([['GET'], ['DELETE']] as const)('%s answers 404 when no Telegram bot is connected, and after a disconnection', async (method) => {
    const t = await h.tenant();
    const path = telegramPath(t);
    expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: NOT_CONNECTED });
    await connectTelegramBot(t, addTelegramBot(h.telegram));
    expect((await t.request({ method: 'DELETE', url: path })).statusCode).toBe(200);
    const before = await snapshot(h, t);
    expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: NOT_CONNECTED });
    expect(await snapshot(h, t)).toStrictEqual(before);
  });

  it("answers 403 to another project's key on every method, showing nothing of the connection and asking Telegram nothing", async () => {
    const owner = await h.tenant();
    const bot = addTelegramBot(h.telegram, 'private_door_bot');
    await connectTelegramBot(owner, bot);
    await createTarget(owner, { platform: 'telegram', kind: 'group', target_name: 'Secret chat', external_id: '-1001234567890' });
    const ownerRow = await integrationRow(h, owner.projectId, 'telegram');
    const other = await h.tenant();
    const path = telegramPath(owner);
    const calls = h.telegram.calls.length;
    for (const [method, payload] of [['GET'], ['DELETE'], ['PUT', { bot_token: addTelegramBot(h.telegram).token }]] as const) {
      const res = await other.request({ method, url: path, ...(payload ? { payload } : {}) });
      expectError(res, { status: 403, code: 'FORBIDDEN', method, path });
      for (const secret of [bot.id, 'private_door_bot', 'Secret chat', '-1001234567890']) expect(res.body).not.toContain(secret);
    }
    expect(h.telegram.calls.length).toBe(calls);
    expect(await integrationRow(h, owner.projectId, 'telegram')).toStrictEqual(ownerRow);
    expect(await integrationRow(h, other.projectId, 'telegram')).toBeUndefined();
  });
});

describe('/v2/projects/{project_id}/integrations/telegram: Telegram unreachable', () => {
  // Nothing listens on port 1 of the loopback: every connection is refused.
  const h = useHarness({ env: { TENURE_TELEGRAM_API_URL: 'http://127.0.0.1:1' } });

  it('PUT answers 503 with a clear message, and stores nothing', async () => {
    const t = await h.tenant();
    const before = await snapshot(h, t);
    const path = telegramPath(t);
    const res = await t.request({ method: 'PUT', url: path, payload: { bot_token: `123:${'a'.repeat(35)}` } });
    expectError(res, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      method: 'PUT',
      path,
      message: 'Telegram could not be asked to check the token (unreachable). Nothing was stored; try again in a moment',
    });
    expect(res.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    expect(await snapshot(h, t)).toStrictEqual(before);
  });

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
    const before = await snapshot(h, t);
    const path = telegramPath(t);
    const started = Date.now();
    const res = await t.request({ method: 'PUT', url: path, payload: { bot_token: addTelegramBot(h.telegram).token } });
    expectError(res, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      method: 'PUT',
      path,
      message: 'Telegram could not be asked to check the token (timed out). Nothing was stored; try again in a moment',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(await snapshot(h, t)).toStrictEqual(before);
  });
});
