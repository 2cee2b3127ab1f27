import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { LiveEventsStore } from '../../src/store/live-events.store.js';
import { useHarness, type Tenant } from '../support/harness.js';

/**
 * Pruning (docs/live-updates.md "Configuration"): only the webhook-deliveries channel's own
 * events (live-only, already broadcast, or never marked: nobody was listening) older than
 * TENURE_EVENT_RETENTION are deleted; every other event stays, since webhook deliveries and their
 * history hang on it.
 */

const h = useHarness();

async function insert(t: Tenant, type: string, o: { liveOnly: boolean; ageHours: number; broadcast: boolean }): Promise<string> {
  const [row] = rowsOf<{ id: string }>(
    await h.database.db.execute(sql`
      INSERT INTO events (project_id, type, data, live_only, emitted_at)
      VALUES (${t.projectId}, ${type}, '{}'::jsonb, ${o.liveOnly}, now() - make_interval(hours => ${o.ageHours}))
      RETURNING id`),
  );
  // The insert's trigger queued it for broadcast; a broadcast one is marked as a claim marks it.
  if (o.broadcast) await h.database.db.execute(sql`UPDATE event_broadcasts SET broadcast_at = now() WHERE seq = (SELECT seq FROM events WHERE id = ${row!.id})`);
  return row!.id;
}

it('deletes old, broadcast live-only events and nothing else', async () => {
  const t = await h.tenant();
  const store = new LiveEventsStore(h.database.db);
  // Written while nobody listened to the project: no mark, nothing to wait for.
  const oldUnheard = await insert(t, 'webhook.delivery-succeeded', { liveOnly: true, ageHours: 30, broadcast: false });
  expect(await store.holdAudience(t.projectId, 10 * 60_000)).toBe(true);
  const oldLive = await insert(t, 'webhook.delivery-succeeded', { liveOnly: true, ageHours: 30, broadcast: true });
  const recentLive = await insert(t, 'webhook.delivery-failed', { liveOnly: true, ageHours: 1, broadcast: true });
  const oldUnbroadcast = await insert(t, 'webhook.endpoint-disabled', { liveOnly: true, ageHours: 30, broadcast: false });
  const oldMembership = await insert(t, 'membership.extended', { liveOnly: false, ageHours: 30, broadcast: true });
  // Other test files' events may be pruned too (one database on PostgreSQL): count only ours.
  while ((await store.pruneLiveOnly(24 * 3_600_000, 1_000)) === 1_000);
  const left = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM events WHERE project_id = ${t.projectId}`)).map((r) => r.id);
  expect(left.sort()).toStrictEqual([recentLive, oldUnbroadcast, oldMembership].sort());
  expect(left).not.toContain(oldLive);
  expect(left).not.toContain(oldUnheard);
});
