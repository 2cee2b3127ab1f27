import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { expect, it } from 'vitest';
import type { TenureEvent } from '../../src/domain/events.js';
import { rowsOf } from '../../src/database/db.js';
import { LiveEventsStore } from '../../src/store/live-events.store.js';
import * as schema from '../../src/store/schema.js';
import { stillWaiting, withConnections } from '../support/connections.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * The broadcaster's claim (src/store/live-events.store.ts): each event is claimed once, emitted
 * in seq order with the body webhooks carry; with nobody to emit to, the events are only marked.
 * Only the events of a project with a live audience (src/live/audiences.ts) are marked at all.
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

/** How long a hold lasts (src/live/audiences.ts: ten minutes). */
const LAPSE_MS = 10 * 60_000;

const marks = async (t: Tenant) =>
  rowsOf<{ n: number }>(
    await h.database.db.execute(sql`
      SELECT count(*)::int AS n FROM events e JOIN event_broadcasts b ON b.seq = e.seq WHERE e.project_id = ${t.projectId}`),
  )[0]!.n;

/** A tenant whose project has a live audience, as when a node admits a connection of it. */
async function heard(): Promise<[Tenant, LiveEventsStore]> {
  const t = await h.tenant();
  const store = new LiveEventsStore(h.database.db);
  expect(await store.holdAudience(t.projectId, LAPSE_MS)).toBe(true);
  return [t, store];
}

it('emits each event once, in seq order, with its webhook body', async () => {
  const [t, store] = await heard();
  const ids = await write(t, 3);
  const ours = (await drain(store, true)).filter((e) => e.project_id === t.projectId);
  expect(ours.map((e) => e.event_id)).toStrictEqual(ids);
  expect(ours[0]).toMatchObject({ type: 'webhook.test', data: { message: 'm0', webhook_id: 'w' } });
  expect(await unbroadcast(t)).toBe(0);
  expect(await drain(store, true)).toStrictEqual([]);
});

it('with nobody to emit to, marks the events broadcast and emits nothing', async () => {
  const [t, store] = await heard();
  await write(t, 3);
  expect(await drain(store, false)).toStrictEqual([]);
  expect(await unbroadcast(t)).toBe(0);
  // Nothing is left for a socket that arrives afterwards: those events were committed before it.
  expect((await drain(store, true)).filter((e) => e.project_id === t.projectId)).toStrictEqual([]);
});

it('marks only the events of a project with a live audience, from the moment it holds one', async () => {
  const t = await h.tenant();
  const store = new LiveEventsStore(h.database.db);
  await write(t, 2);
  expect(await marks(t)).toBe(0);
  expect(await store.holdAudience(t.projectId, LAPSE_MS)).toBe(true);
  const ids = await write(t, 2);
  expect(await marks(t)).toBe(2);
  const ours = (await drain(store, true)).filter((e) => e.project_id === t.projectId);
  expect(ours.map((e) => e.event_id)).toStrictEqual(ids);
});

it('refreshes an audience that is still live, lets an idle one lapse, and holds none for a project that does not exist', async () => {
  const [kept, store] = await heard();
  const [idle] = await heard();
  await h.database.db.execute(sql`UPDATE projects SET live_until = now() - interval '1 second' WHERE id = ${idle.projectId}`);
  expect(await store.refreshAudiences([kept.projectId, idle.projectId, '00000000-0000-4000-8000-000000000000'], LAPSE_MS)).toStrictEqual([kept.projectId]);
  await write(idle, 1);
  expect(await marks(idle)).toBe(0);
  await write(kept, 1);
  expect(await marks(kept)).toBe(1);
  expect(await store.holdAudience('00000000-0000-4000-8000-000000000000', LAPSE_MS)).toBe(false);
  expect(await store.holdAudience(idle.projectId, LAPSE_MS)).toBe(true);
  await write(idle, 1);
  expect(await marks(idle)).toBe(1);
});

it('a new audience waits for the transactions writing the project; a writer after it waits for it, then marks', async () => {
  const t = await h.tenant();
  if (!h.databaseUrl) {
    // Embedded storage has one connection: a writer's transaction and the audience's hold take turns.
    const store = new LiveEventsStore(h.database.db);
    await h.database.db.transaction((tx) =>
      tx.execute(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, 'webhook.test', '{}'::jsonb)`),
    );
    expect(await marks(t)).toBe(0);
    expect(await store.holdAudience(t.projectId, LAPSE_MS)).toBe(true);
    await write(t, 1);
    expect(await marks(t)).toBe(1);
    return;
  }
  const insert = `INSERT INTO events (project_id, type, data) VALUES ('${t.projectId}', 'webhook.test', '{}'::jsonb)`;
  await withConnections(h.databaseUrl, 2, async (clients) => {
    const [writer, holder] = clients as [pg.Client, pg.Client];
    // An event written before the audience: the audience's row waits for its commit.
    await writer.query('BEGIN');
    await writer.query(insert);
    const holding = new LiveEventsStore(h.database.db).holdAudience(t.projectId, LAPSE_MS);
    expect(await stillWaiting(holding)).toBe('waiting');
    await writer.query('COMMIT');
    expect(await holding).toBe(true);
    expect(await marks(t)).toBe(0);
    await h.database.db.execute(sql`UPDATE projects SET live_until = NULL WHERE id = ${t.projectId}`);
    // The audience held, not yet committed: an event now waits for it, then reads it and is marked.
    await holder.query('BEGIN');
    expect(await new LiveEventsStore(drizzle(holder, { schema })).holdAudience(t.projectId, LAPSE_MS)).toBe(true);
    const writing = writer.query(insert);
    expect(await stillWaiting(writing)).toBe('waiting');
    await holder.query('COMMIT');
    await writing;
    expect(await marks(t)).toBe(1);
  });
});
