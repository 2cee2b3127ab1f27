import { describe, expect, it } from 'vitest';
import { discordPath } from '../support/bots.js';
import { useHarness } from '../support/harness.js';
import { capturedLog, discord } from '../support/integrations.js';

/** What only Discord's connection shows; what both platforms do alike is in integrations-shared.happy.test.ts. */

describe('logs never carry the Discord bot token', () => {
  const { lines, logger } = capturedLog();
  const h = useHarness({ logger });

  it('after a connection, a refused token, a check Discord could not answer, a GET and a DELETE', async () => {
    const t = await h.tenant();
    const bot = discord.addBot(h);
    const refused = discord.addBot(h);
    h.discord.resetToken(refused.id, `${refused.token}-reset`);
    const sends: [string, unknown, number][] = [
      ['PUT', { bot_token: bot.token }, 200],
      ['PUT', { bot_token: `Bot ${refused.token}` }, 422],
      ['GET', undefined, 200],
    ];
    for (const [method, payload, status] of sends) {
      const res = await t.request({ method: method as 'PUT', url: discordPath(t), ...(payload ? { payload: payload as object } : {}) });
      expect(res.statusCode, res.body).toBe(status);
    }
    h.discord.failNext(2, 502);
    const down = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } });
    expect(down.statusCode, down.body).toBe(503);
    expect((await t.request({ method: 'DELETE', url: discordPath(t) })).statusCode).toBe(200);

    // Every request was logged, the 503 with its error, and no line holds a token.
    expect(lines.filter((l) => l.includes(discordPath(t))).length).toBeGreaterThanOrEqual(5);
    expect(lines.filter((l) => l.includes('"msg":"request failed"') && l.includes('HTTP 502'))).toHaveLength(1);
    for (const secret of [bot.token, refused.token, ...bot.token.split('.').slice(1), ...refused.token.split('.').slice(1)]) {
      expect(lines.filter((l) => l.includes(secret))).toStrictEqual([]);
    }
  });
});
