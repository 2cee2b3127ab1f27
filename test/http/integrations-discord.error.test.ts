import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { addBot, connectBot, discordPath, integrationRow, tokenChecks, type TestBot } from '../support/bots.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';

const NOT_CONNECTED = 'No Discord bot is connected to this project';
const REFUSED =
  'Discord refused bot_token (401 Unauthorized): copy the current token from the Discord Developer Portal (your application, Bot, Reset Token)';
const NOT_ALONE = 'bot_token must be the bot token alone: printable ASCII characters without spaces';
const EMPTY = 'bot_token must not be empty: copy it from the Discord Developer Portal (your application, Bot, Reset Token)';

/** Everything a refused PUT must leave as it was: the project, its connection, Discord's calls. */
async function snapshot(h: Harness, t: Tenant) {
  return { project: await projectState(h, t.projectId), integration: await integrationRow(h, t.projectId) };
}

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/discord: errors', () => {
  const h = useHarness();

  /** Sends a PUT with `payload` and expects `status` with `message`; nothing is stored. */
  async function refused(t: Tenant, payload: unknown, want: { status: number; code: string; message: string }) {
    const before = await snapshot(h, t);
    const path = discordPath(t);
    const res = await t.request({
      method: 'PUT',
      url: path,
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload, headers: { 'content-type': 'application/json' } } : { payload: payload as object }),
    });
    expectError(res, { ...want, method: 'PUT', path });
    expect(await snapshot(h, t)).toStrictEqual(before);
    return res;
  }

  it('answers 422 when Discord refuses the token (401), and stores nothing', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    h.discord.resetToken(bot.id, `${bot.token}x`);
    const checks = tokenChecks(h.discord).length;
    const res = await refused(t, { bot_token: bot.token }, { status: 422, code: 'VALIDATION_ERROR', message: REFUSED });
    expect(res.body).not.toContain(bot.token);
    expect(await integrationRow(h, t.projectId)).toBeUndefined();
    // Asked once: a refused token is not retried.
    expect(tokenChecks(h.discord).slice(checks).map((c) => c.status)).toStrictEqual([401]);
  });

  it('a refused token on reconnection leaves the working connection as it was', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    await connectBot(t, bot);
    const stranger: TestBot = { id: '1', token: 'MTIz.not.a-token-discord-knows', username: 'x' };
    await refused(t, { bot_token: stranger.token }, { status: 422, code: 'VALIDATION_ERROR', message: REFUSED });
    expect(await integrationRow(h, t.projectId)).toMatchObject({ bot_id: bot.id, generation: 1, health: 'ok' });
  });

  it.each([
    ['a number', { bot_token: 12345 }, 'bot_token must be a string'],
    ['null', { bot_token: null }, 'bot_token must be a string'],
    ['an array', { bot_token: ['a'] }, 'bot_token must be a string'],
    ['an object', { bot_token: { token: 'a' } }, 'bot_token must be a string'],
    ['a boolean', { bot_token: true }, 'bot_token must be a string'],
    ['missing', { token: 'abc' }, 'bot_token is required'],
    ['the empty string', { bot_token: '' }, EMPTY],
    ['whitespace', { bot_token: '   \n' }, EMPTY],
    ['the Bot prefix alone', { bot_token: 'Bot ' }, EMPTY],
    ['201 characters', { bot_token: 'a'.repeat(201) }, 'bot_token must be at most 200 characters'],
    ['a megabyte', { bot_token: 'a'.repeat(1000 * 1000) }, 'bot_token must be at most 200 characters'],
    ['a Bearer token', { bot_token: 'Bearer abc.def.ghi' }, NOT_ALONE],
    ['two tokens', { bot_token: 'abc.def.ghi jkl.mno.pqr' }, NOT_ALONE],
    ['a line break inside', { bot_token: 'abc.def\r\nX-Evil: 1' }, NOT_ALONE],
    ['non-ASCII', { bot_token: 'abc.déf.ghi' }, NOT_ALONE],
  ])('answers 422 for a bot_token that is %s, without asking Discord', async (_what, payload, message) => {
    const t = await h.tenant();
    const checks = tokenChecks(h.discord).length;
    await refused(t, payload, { status: 422, code: 'VALIDATION_ERROR', message });
    expect(tokenChecks(h.discord).length).toBe(checks);
  });

  it.each([
    ['no body at all', undefined],
    ['[]', '[]'],
    ['null', 'null'],
    ['a JSON string', '"abc.def.ghi"'],
  ])('answers 422 for a body of %s', async (_what, payload) => {
    await refused(await h.tenant(), payload, { status: 422, code: 'VALIDATION_ERROR', message: 'body must be object' });
  });

  it('answers 503 when Discord fails the check twice (5xx), and stores nothing', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    h.discord.failNext(2, 502);
    const res = await refused(t, { bot_token: bot.token }, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Discord answered the token check with HTTP 502. Nothing was stored; try again in a moment',
    });
    expect(res.body).not.toContain(bot.token);
  });

  it('retries a check Discord failed once (5xx), then connects', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    h.discord.failNext(1, 500);
    const connected = await connectBot(t, bot);
    expect(connected.bot_id).toBe(bot.id);
    expect(tokenChecks(h.discord).filter((c) => c.botId === bot.id).map((c) => c.status)).toStrictEqual([500, 200]);
  });

  it('answers 409 when the bot is connected to another project; neither project changes', async () => {
    const owner = await h.tenant();
    const bot = addBot(h.discord);
    await connectBot(owner, bot);
    const ownerRow = await integrationRow(h, owner.projectId);
    const t = await h.tenant();
    const res = await refused(t, { bot_token: bot.token }, {
      status: 409,
      code: 'CONFLICT',
      message: `This Discord bot (id ${bot.id}) is connected to another project; a bot serves one project. Disconnect it there first, or create another bot for this project`,
    });
    expect(res.body).not.toContain(owner.projectId);
    expect(await integrationRow(h, owner.projectId)).toStrictEqual(ownerRow);
  });

  it('of two projects connecting one bot at the same moment, one wins and the other gets 409', async () => {
    const [a, b] = [await h.tenant(), await h.tenant()];
    const bot = addBot(h.discord);
    const answers = await Promise.all([a, b].map((t) => t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } })));
    expect(answers.map((r) => r.statusCode).sort()).toStrictEqual([200, 409]);
    const rows = [await integrationRow(h, a.projectId), await integrationRow(h, b.projectId)].filter(Boolean);
    expect(rows.map((r) => r!.bot_id)).toStrictEqual([bot.id]);
  });

  it('answers 429 past 10 token checks a minute for one project, without asking Discord; other projects are not held', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    for (let i = 0; i < 10; i++) await connectBot(t, bot);
    const checks = tokenChecks(h.discord).length;
    const before = await snapshot(h, t);
    const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } });
    expect(res.statusCode, res.body).toBe(429);
    expect(res.json().error).toStrictEqual({
      message: 'At most 10 bot token checks a minute per project: each asks Discord, which bans an address sending too many refused tokens',
      code: 'RATE_LIMIT_EXCEEDED',
      retry_after: expect.any(Number),
    });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(tokenChecks(h.discord).length).toBe(checks);
    expect(await snapshot(h, t)).toStrictEqual(before);
    // Reads and disconnection are not token checks.
    expect((await t.request({ method: 'GET', url: discordPath(t) })).statusCode).toBe(200);
    const other = await h.tenant();
    expect((await connectBot(other, addBot(h.discord))).health).toBe('ok');
  });

  it.each([['GET'], ['DELETE']] as const)('%s answers 404 when no bot is connected, and after a disconnection', async (method) => {
    const t = await h.tenant();
    const path = discordPath(t);
    expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: NOT_CONNECTED });
    await connectBot(t, addBot(h.discord));
    expect((await t.request({ method: 'DELETE', url: path })).statusCode).toBe(200);
    const before = await snapshot(h, t);
    expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: NOT_CONNECTED });
    expect(await snapshot(h, t)).toStrictEqual(before);
  });

  it("answers 403 to another project's key on every method, showing nothing of the connection", async () => {
    const owner = await h.tenant();
    const bot = addBot(h.discord, 'Private bot');
    await connectBot(owner, bot);
    const ownerRow = await integrationRow(h, owner.projectId);
    const other = await h.tenant();
    const path = discordPath(owner);
    for (const [method, payload] of [['GET'], ['DELETE'], ['PUT', { bot_token: addBot(h.discord).token }]] as const) {
      const res = await other.request({ method, url: path, ...(payload ? { payload } : {}) });
      expectError(res, { status: 403, code: 'FORBIDDEN', method, path });
      expect(res.body).not.toContain(bot.id);
      expect(res.body).not.toContain('Private bot');
    }
    expect(await integrationRow(h, owner.projectId)).toStrictEqual(ownerRow);
    expect(await integrationRow(h, other.projectId)).toBeUndefined();
  });
});

describe('PUT /v2/projects/{project_id}/integrations/discord: Discord unreachable', () => {
  // Nothing listens on port 1 of the loopback: every connection is refused.
  const h = useHarness({ env: { TENURE_DISCORD_API_URL: 'http://127.0.0.1:1/api' } });

  it('answers 503 with a clear message, and stores nothing', async () => {
    const t = await h.tenant();
    const before = await snapshot(h, t);
    const path = discordPath(t);
    const res = await t.request({ method: 'PUT', url: path, payload: { bot_token: 'MTIz.abc.def' } });
    expectError(res, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      method: 'PUT',
      path,
      message: 'Discord could not be asked to check the token (unreachable). Nothing was stored; try again in a moment',
    });
    expect(res.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    expect(await snapshot(h, t)).toStrictEqual(before);
  });
});
