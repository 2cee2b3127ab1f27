import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import type { TenureEvent } from '../../src/domain/events.js';
import { rowsOf } from '../../src/store/db.js';
import { LiveEventsStore } from '../../src/store/live-events.store.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * The broadcaster's claim (src/store/live-events.store.ts): each event is claimed once, emitted
 * in seq order with the body webhooks carry; with nobody to emit to, the events are only marked.
 * Other files' events share the database on PostgreSQL: each check looks at its own project's.
 */

const h = useHarness();

async function write(t: Tenant, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const [row] = rowsOf<{ id: string }>(
      await h.database.db.execute(sql`
        INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, 'webhook.test', ${JSON.stringify({ message: `m${i}`, webhook_id: 'w' })}::jsonb)
        RETURNING id`),
    );
    ids.push(row!.id);
  }
  return ids;
}

const unbroadcast = async (t: Tenant) =>
  rowsOf<{ n: number }>(
    await h.database.db.execute(sql`
      SELECT count(*)::int AS n FROM events e JOIN event_broadcasts b ON b.seq = e.seq
      WHERE e.project_id = ${t.projectId} AND b.broadcast_at IS NULL`),
  )[0]!.n;

/** Claims until nothing is left; returns what was emitted. */
async function drain(store: LiveEventsStore, audience: boolean): Promise<TenureEvent[]> {
  const emitted: TenureEvent[] = [];
  while ((await store.claim(100, (events) => emitted.push(...events), () => audience)) > 0);
  return emitted;
}

it('emits each event once, in seq order, with its webhook body', async () => {
  const t = await h.tenant();
  const ids = await write(t, 3);
  const store = new LiveEventsStore(h.database.db);
  const ours = (await drain(store, true)).filter((e) => e.project_id === t.projectId);
  expect(ours.map((e) => e.event_id)).toStrictEqual(ids);
  expect(ours[0]).toMatchObject({ type: 'webhook.test', data: { message: 'm0', webhook_id: 'w' } });
  expect(await unbroadcast(t)).toBe(0);
  expect(await drain(store, true)).toStrictEqual([]);
});

it('with nobody to emit to, marks the events broadcast and emits nothing', async () => {
  const t = await h.tenant();
  await write(t, 3);
  const store = new LiveEventsStore(h.database.db);
  expect(await drain(store, false)).toStrictEqual([]);
  expect(await unbroadcast(t)).toBe(0);
  // Nothing is left for a socket that arrives afterwards: those events were committed before it.
  expect((await drain(store, true)).filter((e) => e.project_id === t.projectId)).toStrictEqual([]);
});
