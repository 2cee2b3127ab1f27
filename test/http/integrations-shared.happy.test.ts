import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createMembership, expectSuccess, expireMembership, ISO_MS } from '../support/api.js';
import { integrationRow } from '../support/bots.js';
import { createPlan, grant } from '../support/catalogue.js';
import { userId, useHarness } from '../support/harness.js';
import { accessStates, markUnhealthy, platformNamed, platforms, setAccess, targetsHealth } from '../support/integrations.js';

/**
 * What the Discord and the Telegram connection do alike, once for each platform: the check, the
 * sealed token, the status, reconnection and disconnection. What only one of them does is in its
 * own file.
 */

const NO_ACCESS = { synced: 0, pending: 0, waiting_for_member: 0, failed: 0 };
const MISSING = { code: '50013', message: 'Missing Permissions' };
const userIds = (n: number) => Array.from({ length: n }, () => userId()).sort();

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/{discord,telegram}: what both platforms do', () => {
  const h = useHarness();

  describe.each(platforms)('%s', (_label, p) => {
    const other = platformNamed(p.other);

    it(`checks the token with ${p.label}, stores the bot, and answers the connection without the token`, async () => {
      const t = await h.tenant();
      const bot = p.addBot(h, 'gatekeeper_bot');
      const before = Date.now();
      const res = await t.request({ method: 'PUT', url: p.path(t), payload: { bot_token: bot.token } });
      const data = res.json().data;
      expectSuccess(res, {
        method: 'PUT',
        path: p.path(t),
        message: `${p.label} bot connected successfully`,
        data: { platform: p.name, bot_id: bot.id, bot_name: 'gatekeeper_bot', connected_at: expect.stringMatching(ISO_MS), health: 'ok', last_error: null },
      });
      expect(Date.parse(data.connected_at)).toBeGreaterThanOrEqual(before - 1);
      expect(Date.parse(data.connected_at)).toBeLessThanOrEqual(Date.now());
      expect(res.body).not.toContain(bot.token);
      // One check, with the bot's own token, answered 200 (Discord: and its application): no other call.
      expect(p.callsOf(h, bot.id)).toStrictEqual(p.connectCalls);
      expect(await integrationRow(h, t.projectId, p.name)).toMatchObject({
        platform: p.name,
        bot_id: bot.id,
        bot_name: 'gatekeeper_bot',
        connected_at: data.connected_at,
        health: 'ok',
        generation: 1,
      });
      // The project's connection to the other platform is another row: none here.
      expect(await integrationRow(h, t.projectId, p.other)).toBeUndefined();
    });

    it('keeps the token sealed at rest: the column holds no trace of it and opens with the instance key', async () => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      await p.connect(t, bot);
      const { bot_token_sealed: sealed } = (await integrationRow(h, t.projectId, p.name))!;
      expect(sealed).toMatch(/^v1\.[\w-]{8}\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
      for (const part of p.secretParts(bot.token)) expect(sealed).not.toContain(part);
      expect(h.container.secretBox!.open(sealed)).toBe(bot.token);
      // Sealing is randomised: the same token connected again is stored differently.
      await p.connect(t, bot);
      const again = (await integrationRow(h, t.projectId, p.name))!.bot_token_sealed;
      expect(again).not.toBe(sealed);
      expect(h.container.secretBox!.open(again)).toBe(bot.token);
    });

    it.each([['with surrounding whitespace', (token: string) => `  ${token}\n`], p.prefixed])('takes the token %s, and stores it bare', async (_what, dress) => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      const res = await t.request({ method: 'PUT', url: p.path(t), payload: { bot_token: dress(bot.token) } });
      expect(res.statusCode, res.body).toBe(200);
      expect(h.container.secretBox!.open((await integrationRow(h, t.projectId, p.name))!.bot_token_sealed)).toBe(bot.token);
    });

    it('ignores unknown body fields', async () => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      const res = await t.request({ method: 'PUT', url: p.path(t), payload: { bot_token: bot.token, bot_id: '1', health: 'unhealthy' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ bot_id: bot.id, health: 'ok' });
    });

    it(`GET answers a fresh connection with no unhealthy target and no access rows, never the token, without calling ${p.label}`, async () => {
      const t = await h.tenant();
      const bot = p.addBot(h, 'doorman_bot');
      const connected = await p.connect(t, bot);
      const calls = p.callsOf(h, bot.id);
      const res = await t.request({ method: 'GET', url: p.path(t) });
      const data = { ...connected, targets: [], access: NO_ACCESS, ...p.freshStatus };
      expectSuccess(res, { method: 'GET', path: p.path(t), message: `${p.label} integration retrieved successfully`, data });
      expect(res.body).not.toContain(bot.token);
      expect(res.body).not.toContain((await integrationRow(h, t.projectId, p.name))!.bot_token_sealed);
      expect(p.callsOf(h, bot.id)).toStrictEqual(calls);
    });

    it(`GET lists the unhealthy ${p.label} targets with their errors and counts the ${p.label} access rows by state`, async () => {
      const t = await h.tenant();
      await p.connect(t, p.addBot(h));
      const [vip, hidden, foreign] = [await p.addTarget(h, t, 'VIP'), await p.addTarget(h, t, 'Hidden'), await other.addTarget(h, t, 'Elsewhere')];
      const unknown = { code: '10011', message: 'Unknown Role' };
      await markUnhealthy(h, [vip.target_id, foreign.target_id], MISSING);
      await markUnhealthy(h, [hidden.target_id], unknown);
      await setAccess(h, t.projectId, vip.target_id, p.name, userIds(6), ['synced', 'synced', 'pending', 'failed', 'waiting_for_member', 'synced']);
      await setAccess(h, t.projectId, foreign.target_id, p.other, userIds(2), ['failed', 'pending']);

      const res = await t.request({ method: 'GET', url: p.path(t) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.targets).toStrictEqual([
        { target_id: vip.target_id, target_name: 'VIP', health_error: MISSING },
        { target_id: hidden.target_id, target_name: 'Hidden', health_error: unknown },
      ]);
      expect(res.json().data.access).toStrictEqual({ synced: 3, pending: 1, waiting_for_member: 1, failed: 1 });
    });

    it(`plans the whole project once connected: each active member of a plan granting a ${p.label} target gets an access row`, async () => {
      const t = await h.tenant();
      const target = await p.addTarget(h, t, 'Members');
      const plan = await createPlan(t);
      await grant(t, plan.plan_id, target.target_id);
      const active = userIds(3);
      for (const user of active) await createMembership(t, { userId: user, planId: plan.plan_id });
      const ended = await createMembership(t, { userId: userId(), planId: plan.plan_id });
      await expireMembership(h, ended.membership_id);
      // Nothing is planned before a bot is connected.
      expect(await accessStates(h, t.projectId)).toStrictEqual([]);

      await p.connect(t, p.addBot(h));
      const rows = await h.database.db.execute(sql`
        SELECT user_id, target_id, platform, desired, state FROM access WHERE project_id = ${t.projectId} ORDER BY user_id`);
      // The active members are to be granted; the expired one was never granted anything: no row.
      const planned = active.map((user) => ({ user_id: user, target_id: target.target_id, platform: p.name, desired: 'granted', state: 'pending' }));
      expect(rowsOf(rows)).toStrictEqual(planned);
    });

    it(`a reconnection with a new token bumps the generation, makes the ${p.label} targets healthy and their failed rows pending; nothing else moves`, async () => {
      const [t, elsewhere] = [await h.tenant(), await h.tenant()];
      const [target, foreign] = [await p.addTarget(h, t, 'Role'), await other.addTarget(h, t, 'Other platform')];
      const plan = await createPlan(t);
      await grant(t, plan.plan_id, target.target_id);
      const users = userIds(5);
      for (const user of users) await createMembership(t, { userId: user, planId: plan.plan_id });
      const first = p.addBot(h);
      const connected = await p.connect(t, first);
      await p.connect(elsewhere, p.addBot(h));
      const elsewhereTarget = await p.addTarget(h, elsewhere, 'Role');

      // What the worker could have left behind under the first connection.
      await markUnhealthy(h, [target.target_id, foreign.target_id, elsewhereTarget.target_id], MISSING);
      await setAccess(h, t.projectId, target.target_id, p.name, users, ['failed', 'failed', 'synced', 'waiting_for_member', 'pending']);
      await setAccess(h, elsewhere.projectId, elsewhereTarget.target_id, p.name, [userId()], ['failed']);
      const elsewhereBefore = await accessStates(h, elsewhere.projectId);
      await h.database.db.execute(sql`UPDATE integrations SET reconciled_at = now() WHERE project_id = ${t.projectId}`);

      const renewed = p.renew(h, first);
      const again = await p.connect(t, renewed);
      expect(again).toMatchObject({ bot_id: first.id, health: 'ok' });
      expect(again.connected_at >= connected.connected_at).toBe(true);
      const row = (await integrationRow(h, t.projectId, p.name))!;
      expect(row.generation).toBe(2);
      expect(h.container.secretBox!.open(row.bot_token_sealed)).toBe(renewed.token);
      // Drift repair is due at once under the new connection.
      const reconciled = await h.database.db.execute(sql`SELECT reconciled_at FROM integrations WHERE project_id = ${t.projectId}`);
      expect(rowsOf(reconciled)).toStrictEqual([{ reconciled_at: null }]);

      // Every target of the platform is healthy again; the other platform's stays as it was.
      const health = await targetsHealth(h, t.projectId);
      expect(health.filter((r) => r.health !== 'ok' || r.health_error !== null)).toStrictEqual([{ id: foreign.target_id, platform: p.other, health: 'unhealthy', health_error: MISSING }]);
      expect(health.map((r) => r.id)).toContain(target.target_id);
      const rows = await accessStates(h, t.projectId);
      expect(rows.map((r) => [r.user_id, r.state, r.attempts, r.last_error, r.failed_generation])).toStrictEqual([
        [users[0], 'pending', 0, null, null],
        [users[1], 'pending', 0, null, null],
        [users[2], 'synced', 3, null, null],
        [users[3], 'waiting_for_member', 3, { code: '10007', message: 'Unknown Member' }, null],
        [users[4], 'pending', 3, null, null],
      ]);
      // The retried rows are due now, not at their old schedule; the others keep theirs.
      const now = Date.now();
      expect(rows.map((r) => Date.parse(r.next_attempt_at) <= now)).toStrictEqual([true, true, false, false, false]);
      // Another project's targets, rows and connection are not touched.
      expect(await accessStates(h, elsewhere.projectId)).toStrictEqual(elsewhereBefore);
      expect((await targetsHealth(h, elsewhere.projectId)).filter((r) => r.health !== 'ok').map((r) => r.id)).toStrictEqual([elsewhereTarget.target_id]);
      expect((await integrationRow(h, elsewhere.projectId, p.name))!.generation).toBe(1);
    });

    it('a reconnection with another bot replaces the bot', async () => {
      const t = await h.tenant();
      await p.connect(t, p.addBot(h, 'old_bot'));
      const next = p.addBot(h, 'new_bot');
      expect(await p.connect(t, next)).toMatchObject({ bot_id: next.id, bot_name: 'new_bot' });
      expect(await integrationRow(h, t.projectId, p.name)).toMatchObject({ bot_id: next.id, bot_name: 'new_bot', generation: 2 });
    });

    it(`DELETE disconnects: the row and its sealed token go, access rows and the ${other.label} connection stay, ${p.label} is not called, and the bot is free again`, async () => {
      const t = await h.tenant();
      const bot = p.addBot(h);
      await p.connect(t, bot);
      await other.connect(t, other.addBot(h));
      const target = await p.addTarget(h, t, 'Chat');
      await setAccess(h, t.projectId, target.target_id, p.name, userIds(2), ['synced', 'failed']);
      const rowsBefore = await accessStates(h, t.projectId);
      const calls = p.callsOf(h, bot.id);

      const res = await t.request({ method: 'DELETE', url: p.path(t) });
      expectSuccess(res, { method: 'DELETE', path: p.path(t), message: `${p.label} bot disconnected successfully`, data: null });
      expect(await integrationRow(h, t.projectId, p.name)).toBeUndefined();
      expect(await integrationRow(h, t.projectId, p.other)).toMatchObject({ health: 'ok' });
      expect(await accessStates(h, t.projectId)).toStrictEqual(rowsBefore);
      const gone = await t.request({ method: 'GET', url: p.path(t) });
      expect(gone.statusCode, gone.body).toBe(404);
      expect(p.callsOf(h, bot.id)).toStrictEqual(calls);

      // The bot is free again, for this project or another.
      expect(await p.connect(await h.tenant(), bot)).toMatchObject({ bot_id: bot.id });
    });
  });
});
