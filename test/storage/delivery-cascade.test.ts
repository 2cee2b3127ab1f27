import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { stillWaiting, withConnections } from '../support/connections.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * Deliveries go with their event, their webhook and their project,
 * though no foreign key ties them (migration 0017): the triggers tenure_event_cascade and
 * tenure_webhook_cascade (drizzle/functions.sql) delete them in the deleting statement. The fan-out
 * holds the webhooks it writes for (FOR KEY SHARE, once per statement), so a delete never leaves a
 * delivery to a webhook that is gone.
 */

const h = useHarness();

describe(`deliveries deleted with what they hang on (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('deletes deliveries with their event, webhook or project, and nothing else', async () => {
    const db = h.database.db;
    const t = await h.tenant();
    const other = await h.tenant();
    const hook = async (projectId: string, path: string) => {
      const created = await h.services.webhooks.create(projectId, `https://hooks.example.com/${path}`);
      if (!created.ok) throw created.error;
      return created.value.id;
    };
    const [a, b, c] = [await hook(t.projectId, 'a'), await hook(t.projectId, 'b'), await hook(other.projectId, 'c')];
    const emit = async (projectId: string, n: number) =>
      rowsOf<{ id: string }>(
        await db.execute(sql`
          INSERT INTO events (project_id, type, data)
          SELECT ${projectId}, 'webhook.test', jsonb_build_object('message', 'cascade ' || g, 'webhook_id', 'x')
          FROM generate_series(1, ${n}::int) AS g RETURNING id`),
      ).map((r) => r.id);
    const events = await emit(t.projectId, 3);
    await emit(other.projectId, 2);
    const count = async (where: ReturnType<typeof sql>) =>
      rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`))[0]!.n;
    expect(await count(sql`project_id = ${t.projectId}`)).toBe(6);

    await db.execute(sql`DELETE FROM webhooks WHERE id = ${b}`);
    expect(await count(sql`webhook_id = ${b}`)).toBe(0);
    expect(await count(sql`webhook_id = ${a}`)).toBe(3);

    await db.execute(sql`DELETE FROM events WHERE id = ${events[0]!}`);
    expect(await count(sql`event_id = ${events[0]!}`)).toBe(0);
    expect(await count(sql`webhook_id = ${a}`)).toBe(2);

    await db.execute(sql`DELETE FROM projects WHERE id = ${t.projectId}`);
    expect(await count(sql`project_id = ${t.projectId}`)).toBe(0);
    // The other project's are untouched.
    expect(await count(sql`webhook_id = ${c}`)).toBe(2);
  });
  it('a webhook delete waits for a writer that fanned out to it, then deletes its deliveries; a writer after it skips the webhook', async () => {
    const t = await h.tenant();
    const created = await h.services.webhooks.create(t.projectId, 'https://hooks.example.com/gone');
    if (!created.ok) throw created.error;
    const hook = created.value.id;
    const event = `INSERT INTO events (project_id, type, data) VALUES ('${t.projectId}', 'webhook.test', '{"message":"m","webhook_id":"x"}'::jsonb)`;
    const deliveries = async () =>
      rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE project_id = ${t.projectId}`))[0]!.n;
    if (!h.databaseUrl) {
      // Embedded storage has one connection: the writer's transaction and the delete take turns.
      await h.database.db.execute(sql.raw(event));
      await h.database.db.execute(sql`DELETE FROM webhooks WHERE id = ${hook}`);
      await h.database.db.execute(sql.raw(event));
      expect(await deliveries()).toBe(0);
      return;
    }
    await withConnections(h.databaseUrl, 3, async (clients) => {
      const [writer, deleter, late] = clients as [pg.Client, pg.Client, pg.Client];
      await writer.query('BEGIN');
      await writer.query(event);
      const deleting = deleter.query('BEGIN').then(() => deleter.query('DELETE FROM webhooks WHERE id = $1', [hook]));
      expect(await stillWaiting(deleting)).toBe('waiting');
      await writer.query('COMMIT');
      await deleting;
      // Deleted, not yet committed: a writer now waits for the delete, then finds no webhook to fan out to.
      const lateWrite = late.query(event);
      expect(await stillWaiting(lateWrite)).toBe('waiting');
      await deleter.query('COMMIT');
      await lateWrite;
    });
    expect(await deliveries()).toBe(0);
    const events = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${t.projectId}`));
    expect(events[0]!.n).toBe(2);
  });
});
