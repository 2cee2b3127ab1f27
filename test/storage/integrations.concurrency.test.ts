import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { addBot, discordPath, integrationRow } from '../support/bots.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * Bot connections under concurrent requests (on PostgreSQL these really interleave): the one
 * statement of a connection and the unique index on (platform, bot_id) keep every outcome one of
 * the serial ones, and no request fails with a 500.
 */
describe('bot connections: concurrent requests', () => {
  const h = useHarness();

  it('one bot connected to 8 projects at once in the store: one connection, the others null, never an error', async () => {
    const tenants = await Promise.all(Array.from({ length: 8 }, () => h.tenant()));
    const botId = addBot(h.discord).id;
    const now = new Date();
    const results = await Promise.all(
      tenants.map((t) =>
        h.container.stores.integrations.connect({ projectId: t.projectId, platform: 'discord', botTokenSealed: 'sealed', botId, botName: 'bot' }, now),
      ),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const winner = tenants[results.findIndex((r) => r !== null)]!;
    const rows = rowsOf<{ project_id: string }>(await h.database.db.execute(sql`SELECT project_id FROM integrations WHERE bot_id = ${botId}`));
    expect(rows).toStrictEqual([{ project_id: winner.projectId }]);
  });

  it('one bot connected by 6 projects at once through the API: one gets it, the others 409', async () => {
    const tenants = await Promise.all(Array.from({ length: 6 }, () => h.tenant()));
    const bot = addBot(h.discord);
    const replies = await Promise.all(tenants.map((t) => t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } })));
    expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toStrictEqual([200, 409, 409, 409, 409, 409]);
  });

  it('one project reconnecting 6 times at once: every request succeeds, each a generation', async () => {
    const t = await h.tenant();
    const bots = Array.from({ length: 6 }, () => addBot(h.discord));
    const replies = await Promise.all(bots.map((bot) => t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } })));
    for (const res of replies) expect(res.statusCode, res.body).toBe(200);
    const row = (await integrationRow(h, t.projectId))!;
    expect(row.generation).toBe(6);
    // The last writer's bot and token, consistently.
    const last = bots.find((b) => b.id === row.bot_id)!;
    expect(h.container.secretBox!.open(row.bot_token_sealed)).toBe(last.token);
  });

  it('a connection waits for the transactions writing the project’s events; events after it are queued for planning', async () => {
    const t = await h.tenant();
    const queued = async (tenant: Tenant) =>
      rowsOf<{ n: number }>(
        await h.database.db.execute(sql`
          SELECT count(*)::int AS n FROM event_plan_queue q JOIN events e ON e.seq = q.seq WHERE e.project_id = ${tenant.projectId}`),
      )[0]!.n;
    const connect = () =>
      h.container.stores.integrations.connect(
        { projectId: t.projectId, platform: 'discord', botTokenSealed: 'sealed', botId: addBot(h.discord).id, botName: 'bot' },
        new Date(),
      );
    const event = `INSERT INTO events (project_id, type, data) VALUES ('${t.projectId}', 'membership.extended', '{}'::jsonb)`;
    if (h.database.url) {
      // PostgreSQL: an event written in a transaction still open when the project connects. Its
      // trigger ran before the connection existed, so it is not queued; the connection waits for
      // its commit, and the re-plan the connection starts reads what it changed.
      const writer = new pg.Client({ connectionString: h.database.url });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query(event);
        const connecting = connect();
        expect(await Promise.race([connecting.then(() => 'connected'), sleep(300).then(() => 'waiting')])).toBe('waiting');
        await writer.query('COMMIT');
        expect(await connecting).not.toBeNull();
      } finally {
        await writer.end();
      }
    } else {
      // Embedded storage has one connection: writes and the connection take turns.
      await h.database.db.execute(sql.raw(event));
      expect(await connect()).not.toBeNull();
    }
    expect(await queued(t)).toBe(0);
    await h.database.db.execute(sql.raw(event));
    expect(await queued(t)).toBe(1);
  });
});
