import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/store/db.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * Deliveries go with their event, their webhook and their project,
 * though no foreign key ties them (migration 0017): the triggers tenure_event_cascade and
 * tenure_webhook_cascade (drizzle/functions.sql) delete them in the deleting statement.
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
});
