import { describe, expect, it } from 'vitest';
import { connectBot, discordPath, tokenChecks } from '../support/bots.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { connectionSnapshot, discord, expectRefusedPut, expectRefusedUnasked } from '../support/integrations.js';

/** What only Discord's connection refuses, and how; the errors both platforms share are in integrations-shared.error.test.ts. */

const NOT_ALONE = 'bot_token must be the bot token alone: printable ASCII characters without spaces';

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/discord: errors', () => {
  const h = useHarness();
  const refused = (t: Tenant, payload: unknown, want: { status: number; code: string; message: string }) => expectRefusedPut(h, discord, t, payload, want);

  it.each([
    ['the Bot prefix alone', 'Bot ', discord.messages.empty],
    ['201 characters', 'a'.repeat(201), 'bot_token must be at most 200 characters'],
    ['a megabyte', 'a'.repeat(1000 * 1000), 'bot_token must be at most 200 characters'],
    ['a Bearer token', 'Bearer abc.def.ghi', NOT_ALONE],
    ['two tokens', 'abc.def.ghi jkl.mno.pqr', NOT_ALONE],
    ['a line break inside', 'abc.def\r\nX-Evil: 1', NOT_ALONE],
    ['non-ASCII', 'abc.déf.ghi', NOT_ALONE],
  ])('answers 422 for a bot_token that is %s, without asking Discord', (_what, token, message) => expectRefusedUnasked(h, discord, { bot_token: token }, message));

  it('answers 503 when Discord fails the check twice (5xx), and stores nothing', async () => {
    const t = await h.tenant();
    const bot = discord.addBot(h);
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
    const bot = discord.addBot(h);
    h.discord.failNext(1, 500);
    const connected = await connectBot(t, bot);
    expect(connected.bot_id).toBe(bot.id);
    expect(tokenChecks(h.discord).filter((c) => c.botId === bot.id).map((c) => c.status)).toStrictEqual([500, 200]);
  });

  it('answers 429 past 10 token checks a minute for one project, without asking Discord; other projects are not held', async () => {
    const t = await h.tenant();
    const bot = discord.addBot(h);
    for (let i = 0; i < 10; i++) await connectBot(t, bot);
    const checks = tokenChecks(h.discord).length;
    const before = await connectionSnapshot(h, discord, t);
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
    expect(await connectionSnapshot(h, discord, t)).toStrictEqual(before);
    // Reads and disconnection are not token checks.
    expect((await t.request({ method: 'GET', url: discordPath(t) })).statusCode).toBe(200);
    const other = await h.tenant();
    expect((await connectBot(other, discord.addBot(h))).health).toBe('ok');
  });
});
