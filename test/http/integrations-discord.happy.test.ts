import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/store/db.js';
import { createMembership, expectSuccess, expireMembership, ISO_MS } from '../support/api.js';
import { addBot, connectBot, discordLikeToken, discordPath, integrationRow, tokenChecks } from '../support/bots.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { userId, useHarness, type Harness } from '../support/harness.js';

const CONNECTED = 'Discord bot connected successfully';
const RETRIEVED = 'Discord integration retrieved successfully';
const NO_ACCESS = { synced: 0, pending: 0, waiting_for_member: 0, failed: 0 };
const userIds = (n: number) => Array.from({ length: n }, () => userId()).sort();

describe('PUT/GET/DELETE /v2/projects/{project_id}/integrations/discord: happy', () => {
  const h = useHarness();

  it('checks the token with Discord, stores the bot, and answers the connection without the token', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord, 'Gatekeeper');
    const before = Date.now();
    const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } });
    const data = res.json().data;
    expectSuccess(res, {
      method: 'PUT',
      path: discordPath(t),
      message: CONNECTED,
      data: { platform: 'discord', bot_id: bot.id, bot_name: 'Gatekeeper', connected_at: expect.stringMatching(ISO_MS), health: 'ok', last_error: null },
    });
    expect(Date.parse(data.connected_at)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(data.connected_at)).toBeLessThanOrEqual(Date.now());
    expect(res.body).not.toContain(bot.token);
    // One check, with the bot's own token, answered 200.
    expect(tokenChecks(h.discord).filter((c) => c.botId === bot.id).map((c) => [c.method, c.status])).toStrictEqual([['GET', 200]]);
    expect(await integrationRow(h, t.projectId)).toMatchObject({ bot_id: bot.id, bot_name: 'Gatekeeper', connected_at: data.connected_at, health: 'ok', generation: 1 });
  });

  it('keeps the token sealed at rest: the column holds no trace of it and opens with the instance key', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    await connectBot(t, bot);
    const { bot_token_sealed: sealed } = (await integrationRow(h, t.projectId))!;
    expect(sealed).toMatch(/^v1\.[\w-]{8}\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    expect(sealed).not.toContain(bot.token);
    for (const part of bot.token.split('.')) expect(sealed).not.toContain(part);
    expect(h.container.secretBox!.open(sealed)).toBe(bot.token);
    // Sealing is randomised: the same token connected again is stored differently.
    await connectBot(t, bot);
    const again = (await integrationRow(h, t.projectId))!.bot_token_sealed;
    expect(again).not.toBe(sealed);
    expect(h.container.secretBox!.open(again)).toBe(bot.token);
  });

  it('takes the token with surrounding whitespace or a "Bot " prefix, and stores it bare', async () => {
    for (const dressed of [(tok: string) => `  ${tok}\n`, (tok: string) => `Bot ${tok}`]) {
      const t = await h.tenant();
      const bot = addBot(h.discord);
      const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: dressed(bot.token) } });
      expect(res.statusCode, res.body).toBe(200);
      expect(h.container.secretBox!.open((await integrationRow(h, t.projectId))!.bot_token_sealed)).toBe(bot.token);
    }
  });

  it('ignores unknown body fields', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token, bot_id: '1', health: 'unhealthy' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ bot_id: bot.id, health: 'ok' });
  });

  it('GET answers the connection, no unhealthy target and no access rows for a fresh connection, never the token', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord, 'Doorman');
    const connected = await connectBot(t, bot);
    const res = await t.request({ method: 'GET', url: discordPath(t) });
    expectSuccess(res, { method: 'GET', path: discordPath(t), message: RETRIEVED, data: { ...connected, targets: [], access: NO_ACCESS } });
    expect(res.body).not.toContain(bot.token);
    expect(res.body).not.toContain((await integrationRow(h, t.projectId))!.bot_token_sealed);
  });

  it('GET lists the unhealthy Discord targets with their errors and counts the Discord access rows by state', async () => {
    const t = await h.tenant();
    await connectBot(t, addBot(h.discord));
    const guild = await createTarget(t, { kind: 'guild', target_name: 'Server' });
    const role = await createTarget(t, { target_name: 'VIP', parent_target_id: guild.target_id });
    const hidden = await createTarget(t, { target_name: 'Hidden', parent_target_id: guild.target_id });
    const telegram = await createTarget(t, { platform: 'telegram', kind: 'group', target_name: 'Chat', external_id: '-100123' });
    const missing = { code: '50013', message: 'Missing Permissions' };
    await markUnhealthy(h, [role.target_id, telegram.target_id], missing);
    await markUnhealthy(h, [hidden.target_id], { code: '10011', message: 'Unknown Role' });
    await setAccess(h, t.projectId, role.target_id, 'discord', userIds(6), ['synced', 'synced', 'pending', 'failed', 'waiting_for_member', 'synced']);
    await setAccess(h, t.projectId, telegram.target_id, 'telegram', userIds(2), ['failed', 'pending']);

    const res = await t.request({ method: 'GET', url: discordPath(t) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.targets).toStrictEqual([
      { target_id: role.target_id, target_name: 'VIP', health_error: missing },
      { target_id: hidden.target_id, target_name: 'Hidden', health_error: { code: '10011', message: 'Unknown Role' } },
    ]);
    expect(res.json().data.access).toStrictEqual({ synced: 3, pending: 1, waiting_for_member: 1, failed: 1 });
  });

  it('plans the whole project once connected: each active member of a plan granting a Discord target gets an access row', async () => {
    const t = await h.tenant();
    const guild = await createTarget(t, { kind: 'guild' });
    const role = await createTarget(t, { parent_target_id: guild.target_id });
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, role.target_id);
    const [active, expired] = [userIds(3), userIds(1)];
    for (const user of active) await createMembership(t, { userId: user, planId: plan.plan_id });
    const ended = await createMembership(t, { userId: expired[0]!, planId: plan.plan_id });
    await expireMembership(h, ended.membership_id);
    // Nothing is planned before a bot is connected.
    expect(await accessRows(h, t.projectId)).toStrictEqual([]);

    await connectBot(t, addBot(h.discord));
    const rows = await h.database.db.execute(sql`
      SELECT user_id, target_id, desired, state FROM access WHERE project_id = ${t.projectId} ORDER BY user_id`);
    // The active members are to be granted; the expired one was never granted anything: no row.
    expect(rowsOf(rows)).toStrictEqual(active.map((user) => ({ user_id: user, target_id: role.target_id, desired: 'granted', state: 'pending' })));
  });

  it('a reconnection bumps the generation, makes the Discord targets healthy and their failed rows pending; nothing else moves', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const guild = await createTarget(t, { kind: 'guild' });
    const role = await createTarget(t, { parent_target_id: guild.target_id });
    const telegram = await createTarget(t, { platform: 'telegram', kind: 'group', external_id: '-100777' });
    const plan = await createPlan(t);
    await grant(t, plan.plan_id, role.target_id);
    const users = Array.from({ length: 5 }, () => userId()).sort();
    for (const user of users) await createMembership(t, { userId: user, planId: plan.plan_id });
    const first = addBot(h.discord);
    const connected = await connectBot(t, first);
    await connectBot(other, addBot(h.discord));
    const otherRole = await createTarget(other, {});

    // What the worker could have left behind under the first connection.
    const missing = { code: '50013', message: 'Missing Permissions' };
    await markUnhealthy(h, [role.target_id, telegram.target_id, otherRole.target_id], missing);
    await setAccess(h, t.projectId, role.target_id, 'discord', users, ['failed', 'failed', 'synced', 'waiting_for_member', 'pending']);
    await setAccess(h, other.projectId, otherRole.target_id, 'discord', [userId()], ['failed']);
    const otherBefore = await accessRows(h, other.projectId);
    await h.database.db.execute(sql`UPDATE integrations SET reconciled_at = now() WHERE project_id = ${t.projectId}`);

    // Same bot, new token: the portal's Reset Token.
    const reset = { ...first, token: discordLikeToken(first.id) };
    h.discord.resetToken(first.id, reset.token);
    const again = await connectBot(t, reset);
    expect(again.connected_at >= connected.connected_at).toBe(true);
    const row = (await integrationRow(h, t.projectId))!;
    expect(row.generation).toBe(2);
    expect(h.container.secretBox!.open(row.bot_token_sealed)).toBe(reset.token);
    // Drift repair is due at once under the new connection.
    const reconciled = await h.database.db.execute(sql`SELECT reconciled_at FROM integrations WHERE project_id = ${t.projectId}`);
    expect(rowsOf(reconciled)).toStrictEqual([{ reconciled_at: null }]);

    expect(await targetHealth(h, t.projectId)).toStrictEqual(
      [
        { id: guild.target_id, health: 'ok', health_error: null },
        { id: role.target_id, health: 'ok', health_error: null },
        { id: telegram.target_id, health: 'unhealthy', health_error: missing },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    const rows = await accessRows(h, t.projectId);
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
    expect(await accessRows(h, other.projectId)).toStrictEqual(otherBefore);
    expect((await targetHealth(h, other.projectId)).map((r) => r.health)).toStrictEqual(['unhealthy']);
    expect((await integrationRow(h, other.projectId))!.generation).toBe(1);
  });

  it('a reconnection with another bot replaces the bot', async () => {
    const t = await h.tenant();
    await connectBot(t, addBot(h.discord, 'Old'));
    const next = addBot(h.discord, 'New');
    const connected = await connectBot(t, next);
    expect(connected).toMatchObject({ bot_id: next.id, bot_name: 'New' });
    expect(await integrationRow(h, t.projectId)).toMatchObject({ bot_id: next.id, bot_name: 'New', generation: 2 });
  });

  it('DELETE disconnects: the row and its sealed token go, access rows stay, and Discord is not called', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    await connectBot(t, bot);
    const role = await createTarget(t, {});
    await setAccess(h, t.projectId, role.target_id, 'discord', userIds(2), ['synced', 'failed']);
    const rowsBefore = await accessRows(h, t.projectId);
    const callsBefore = h.discord.calls.length;

    const res = await t.request({ method: 'DELETE', url: discordPath(t) });
    expectSuccess(res, { method: 'DELETE', path: discordPath(t), message: 'Discord bot disconnected successfully', data: null });
    expect(await integrationRow(h, t.projectId)).toBeUndefined();
    expect(await accessRows(h, t.projectId)).toStrictEqual(rowsBefore);
    expect(h.discord.calls.length).toBe(callsBefore);
    const gone = await t.request({ method: 'GET', url: discordPath(t) });
    expect(gone.statusCode, gone.body).toBe(404);

    // The bot is free again, for this project or another.
    const other = await h.tenant();
    expect(await connectBot(other, bot)).toMatchObject({ bot_id: bot.id });
  });
});

describe('logs never carry the bot token', () => {
  const lines: string[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const h = useHarness({ logger: createLogger('trace', capture) });

  it('after a connection, a refused token, a check Discord could not answer, a GET and a DELETE', async () => {
    const t = await h.tenant();
    const bot = addBot(h.discord);
    const refused = addBot(h.discord);
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

/** Flags targets unhealthy with `error`, as the worker does on 50013 or 10011. */
async function markUnhealthy(h: Harness, targetIds: string[], error: { code: string; message: string }): Promise<void> {
  await h.database.db.execute(sql`
    UPDATE targets SET health = 'unhealthy', health_error = ${JSON.stringify(error)}::jsonb WHERE id = ANY(${sql.param(targetIds)}::uuid[])`);
}

/**
 * Puts the access rows of `users` on a target in `states` (inserting them if the planner has not),
 * as the worker leaves them: failed rows with a 50013, waiting ones with a 10007, three attempts
 * each, next due in an hour.
 */
async function setAccess(h: Harness, projectId: string, targetId: string, platform: string, users: string[], states: string[]): Promise<void> {
  for (const [i, state] of states.entries()) {
    const error =
      state === 'failed' ? { code: '50013', message: 'Missing Permissions' } : state === 'waiting_for_member' ? { code: '10007', message: 'Unknown Member' } : null;
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state, last_error, attempts, next_attempt_at, failed_generation)
      VALUES (${projectId}, ${targetId}, ${users[i]!}, ${platform}, 'role', '123', 'remove_role', 'granted', NULL, ${state},
              ${error === null ? null : JSON.stringify(error)}::jsonb, 3, now() + interval '1 hour', ${state === 'failed' ? 1 : null})
      ON CONFLICT (target_id, user_id) DO UPDATE SET state = excluded.state, last_error = excluded.last_error, attempts = excluded.attempts,
        next_attempt_at = excluded.next_attempt_at, failed_generation = excluded.failed_generation`);
  }
}

interface AccessRow {
  user_id: string;
  platform: string;
  state: string;
  attempts: number;
  last_error: unknown;
  failed_generation: number | null;
  next_attempt_at: string;
}

async function accessRows(h: Harness, projectId: string): Promise<AccessRow[]> {
  return rowsOf<AccessRow>(
    await h.database.db.execute(sql`
      SELECT user_id, platform, state, attempts, last_error, failed_generation, next_attempt_at::text AS next_attempt_at
      FROM access WHERE project_id = ${projectId} ORDER BY platform, user_id`),
  ).map((r) => ({ ...r, next_attempt_at: new Date(r.next_attempt_at).toISOString() }));
}

async function targetHealth(h: Harness, projectId: string) {
  return rowsOf<{ id: string; health: string; health_error: unknown }>(
    await h.database.db.execute(sql`SELECT id, health, health_error FROM targets WHERE project_id = ${projectId} ORDER BY id`),
  );
}
