import { describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { integrationRow } from '../support/bots.js';
import { useHarness } from '../support/harness.js';
import { connectionSnapshot, expectRefusedPut, expectRefusedUnasked, platforms } from '../support/integrations.js';

/**
 * The errors the Discord and the Telegram connection share, once for each platform; what only one
 * of them does (its token format, how it answers a failed check) is in its own file.
 */

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/{discord,telegram}: errors both platforms share', () => {
  const h = useHarness();

  describe.each(platforms)('%s', (_label, p) => {
    const notConnected = `No ${p.label} bot is connected to this project`;

    it(`answers 422 when ${p.label} refuses the token (401), asking once and storing nothing`, async () => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      p.revoke(h, bot);
      const checks = p.checkStatuses(h).length;
      const res = await expectRefusedPut(h, p, t, { bot_token: bot.token }, { status: 422, code: 'VALIDATION_ERROR', message: p.messages.refused });
      expect(res.body).not.toContain(bot.token);
      expect(await integrationRow(h, t.projectId, p.name)).toBeUndefined();
      // Asked once: a refused token is not retried.
      expect(p.checkStatuses(h).slice(checks)).toStrictEqual([401]);
    });

    it('a refused token on reconnection leaves the working connection as it was', async () => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      await p.connect(t, bot);
      await expectRefusedPut(h, p, t, { bot_token: p.strangerToken(bot) }, { status: 422, code: 'VALIDATION_ERROR', message: p.messages.refused });
      expect(await integrationRow(h, t.projectId, p.name)).toMatchObject({ bot_id: bot.id, generation: 1, health: 'ok' });
    });

    it.each([
      ['a number', { bot_token: 12345 }, 'bot_token must be a string'],
      ['null', { bot_token: null }, 'bot_token must be a string'],
      ['an array', { bot_token: ['a'] }, 'bot_token must be a string'],
      ['an object', { bot_token: { token: 'a' } }, 'bot_token must be a string'],
      ['a boolean', { bot_token: true }, 'bot_token must be a string'],
      ['missing', { token: p.wellFormed }, 'bot_token is required'],
      ['the empty string', { bot_token: '' }, p.messages.empty],
      ['whitespace', { bot_token: '   \n' }, p.messages.empty],
    ])(`answers 422 for a bot_token that is %s, without asking ${p.label}`, (_what, payload, message) => expectRefusedUnasked(h, p, payload, message));

    it.each([
      ['no body at all', undefined],
      ['[]', '[]'],
      ['null', 'null'],
      ['a JSON string', JSON.stringify(p.wellFormed)],
    ])('answers 422 for a body of %s', async (_what, payload) => {
      await expectRefusedPut(h, p, await h.tenant(), payload, { status: 422, code: 'VALIDATION_ERROR', message: 'body must be object' });
    });

    it('answers 409 when the bot is connected to another project; neither project changes', async () => {
      const owner = await h.tenant();
      const bot = p.addBot(h);
      await p.connect(owner, bot);
      const ownerRow = await integrationRow(h, owner.projectId, p.name);
      const t = await h.tenant();
      const res = await expectRefusedPut(h, p, t, { bot_token: bot.token }, {
        status: 409,
        code: 'CONFLICT',
        message: `This ${p.label} bot (id ${bot.id}) is connected to another project; a bot serves one project. Disconnect it there first, or create another bot for this project`,
      });
      expect(res.body).not.toContain(owner.projectId);
      expect(await integrationRow(h, owner.projectId, p.name)).toStrictEqual(ownerRow);
    });

    it('of two projects connecting one bot at the same moment, one wins and the other gets 409', async () => {
      const [a, b] = [await h.tenant(), await h.tenant()];
      const bot = p.addBot(h);
      const answers = await Promise.all([a, b].map((t) => t.request({ method: 'PUT', url: p.path(t), payload: { bot_token: bot.token } })));
      expect(answers.map((r) => r.statusCode).sort()).toStrictEqual([200, 409]);
      const rows = [await integrationRow(h, a.projectId, p.name), await integrationRow(h, b.projectId, p.name)].filter(Boolean);
      expect(rows.map((r) => r!.bot_id)).toStrictEqual([bot.id]);
    });

    it.each([['GET'], ['DELETE']] as const)(`%s answers 404 when no ${p.label} bot is connected, and after a disconnection`, async (method) => {
      const t = await h.tenant();
      const path = p.path(t);
      expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: notConnected });
      await p.connect(t, p.addBot(h));
      expect((await t.request({ method: 'DELETE', url: path })).statusCode).toBe(200);
      const before = await connectionSnapshot(h, p, t);
      expectError(await t.request({ method, url: path }), { status: 404, code: 'NOT_FOUND', method, path, message: notConnected });
      expect(await connectionSnapshot(h, p, t)).toStrictEqual(before);
    });

    it(`answers 403 to another project's key on every method, showing nothing of the connection and asking ${p.label} nothing`, async () => {
      const owner = await h.tenant();
      const bot = p.addBot(h, 'private_door_bot');
      await p.connect(owner, bot);
      const target = await p.addTarget(h, owner, 'Secret chat');
      const ownerRow = await integrationRow(h, owner.projectId, p.name);
      const other = await h.tenant();
      const path = p.path(owner);
      const stranger = p.addBot(h);
      const calls = p.calls(h);
      for (const [method, payload] of [['GET'], ['DELETE'], ['PUT', { bot_token: stranger.token }]] as const) {
        const res = await other.request({ method, url: path, ...(payload ? { payload } : {}) });
        expectError(res, { status: 403, code: 'FORBIDDEN', method, path });
        for (const secret of [bot.id, 'private_door_bot', 'Secret chat', target.external_id]) expect(res.body).not.toContain(secret);
      }
      expect(p.calls(h)).toBe(calls);
      expect(await integrationRow(h, owner.projectId, p.name)).toStrictEqual(ownerRow);
      expect(await integrationRow(h, other.projectId, p.name)).toBeUndefined();
    });
  });
});

describe('PUT /v2/projects/{project_id}/integrations/{discord,telegram}: the platform unreachable', () => {
  // Nothing listens on port 1 of the loopback: every connection is refused.
  const h = useHarness({ env: { TENURE_DISCORD_API_URL: 'http://127.0.0.1:1/api', TENURE_TELEGRAM_API_URL: 'http://127.0.0.1:1' } });

  it.each(platforms)('%s: answers 503 with a clear message, and stores nothing', async (_label, p) => {
    const t = await h.tenant();
    const before = await connectionSnapshot(h, p, t);
    const path = p.path(t);
    const res = await t.request({ method: 'PUT', url: path, payload: { bot_token: p.wellFormed } });
    expectError(res, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      method: 'PUT',
      path,
      message: `${p.label} could not be asked to check the token (unreachable). Nothing was stored; try again in a moment`,
    });
    expect(res.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    expect(await connectionSnapshot(h, p, t)).toStrictEqual(before);
  });
});
