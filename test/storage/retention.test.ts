import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { HistoryPruner } from '../../src/domain/retention/history.pruner.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/database/db.js';
import { RetentionStore } from '../../src/store/retention.store.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * History retention (docs/operations.md, "Retention"), on both storages: events past the
 * retention go with their bodies, deliveries and attempts, in batches, unless still in use; handled
 * Telegram updates past it go too, and so do pay and portal links that ended before it.
 */

const h = useHarness();
const DAY = 86_400_000;

describe(`history retention (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('prunes old events with their deliveries and attempts, and keeps what is still in use', async () => {
    const t = await h.tenant();
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY).toISOString();
    const event = async (label: string, daysAgo: number, planned = true) => {
      const id = rowsOf<{ id: string }>(
        await h.database.db.execute(sql`
          INSERT INTO events (project_id, type, data, emitted_at)
          VALUES (${t.projectId}, 'webhook.test', ${JSON.stringify({ message: label, webhook_id: 'x' })}::jsonb, ${ago(daysAgo)}::timestamptz)
          RETURNING id`),
      )[0]!.id;
      // An event the access planner has not read yet is in its queue (this project has no platform
      // connected, so the insert queued nothing).
      if (!planned) await h.database.db.execute(sql`INSERT INTO event_plan_queue (seq) SELECT seq FROM events WHERE id = ${id}`);
      return id;
    };
    const ids = {
      delivered: await event('delivered', 40),
      pending: await event('pending', 40),
      replayedLately: await event('replayed lately', 40),
      unplanned: await event('unplanned', 40, false),
      recent: await event('recent', 1),
      bare: await event('bare', 40),
    };
    const hook = await h.services.webhooks.create(t.projectId, 'https://hooks.example.com/retention');
    if (!hook.ok) throw hook.error;
    const delivery = async (eventId: string, status: string, daysAgo: number) => {
      const id = rowsOf<{ id: string }>(
        await h.database.db.execute(sql`
          INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, status, created_at, updated_at)
          VALUES (${t.projectId}, ${hook.value.id}, ${eventId}, ${status}, ${ago(daysAgo)}::timestamptz, ${ago(daysAgo)}::timestamptz)
          RETURNING id`),
      )[0]!.id;
      await h.database.db.execute(sql`
        INSERT INTO webhook_delivery_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, outcome)
        VALUES (${id}, 1, ${ago(daysAgo)}::timestamptz, 12, 200, 'delivered')`);
      return id;
    };
    await delivery(ids.delivered, 'delivered', 40);
    await delivery(ids.pending, 'pending', 40);
    await delivery(ids.replayedLately, 'delivered', 40);
    await delivery(ids.replayedLately, 'delivered', 1);

    const store = new RetentionStore(h.database.db);
    const before = new Date(now - 30 * DAY);
    expect(await store.pruneEvents(before, 1)).toBe(1);
    expect(await store.pruneEvents(before, 5)).toBe(1);
    expect(await store.pruneEvents(before, 5)).toBe(0);

    const left = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM events WHERE project_id = ${t.projectId}`)).map((r) => r.id);
    expect(new Set(left)).toStrictEqual(new Set([ids.pending, ids.replayedLately, ids.unplanned, ids.recent]));
    const count = async (query: ReturnType<typeof sql>) => rowsOf<{ n: number }>(await h.database.db.execute(query))[0]!.n;
    expect(await count(sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ${ids.delivered}`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.project_id = ${t.projectId}`)).toBe(3);
  });

  it('prunes handled Telegram updates past the retention; the pruner drains batch after batch', async () => {
    const t = await h.tenant();
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY).toISOString();
    for (const [id, handled, received] of [
      [1, ago(40), ago(40)],
      [2, ago(35), ago(40)],
      [3, null, ago(40)],
      [4, ago(1), ago(1)],
    ] as const) {
      await h.database.db.execute(sql`
        INSERT INTO telegram_updates (project_id, bot_id, update_id, payload, received_at, handled_at)
        VALUES (${t.projectId}, '42', ${id}, '{}'::jsonb, ${received}::timestamptz, ${handled}::timestamptz)`);
    }
    const pruner = new HistoryPruner(new RetentionStore(h.database.db), { now: () => new Date(now) }, createLogger('silent'), {
      retentionMs: 30 * DAY,
      intervalMs: 60_000,
      batchSize: 1,
    });
    const pruned = await pruner.pruneOnce();
    expect(pruned.telegramUpdates).toBe(2);
    const left = rowsOf<{ update_id: number }>(
      await h.database.db.execute(sql`SELECT update_id::int FROM telegram_updates WHERE project_id = ${t.projectId} ORDER BY update_id`),
    ).map((r) => r.update_id);
    expect(left).toStrictEqual([3, 4]);
  });

  it('prunes pay links expired and portal links ended before the retention; newer ones, and a portal session still open, stay', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY).toISOString();
    for (const [hash, expired] of [
      ['pay-old', ago(40)],
      ['pay-older', ago(60)],
      ['pay-expired-lately', ago(2)],
      ['pay-open', ago(-1)],
    ] as const) {
      await h.database.db.execute(sql`
        INSERT INTO pay_links (id_hash, project_id, plan_id, user_id, created_at, expires_at, completed_at)
        VALUES (${hash}, ${t.projectId}, ${plan.plan_id}, '42', ${expired}::timestamptz - interval '1 day', ${expired}::timestamptz,
                CASE WHEN ${hash} = 'pay-old' THEN ${expired}::timestamptz - interval '1 hour' END)`);
    }
    for (const [hash, expired, session] of [
      ['portal-old', ago(40), ago(40)],
      ['portal-never-opened', ago(40), null],
      ['portal-session-lately', ago(40), ago(1)],
      ['portal-recent', ago(1), null],
    ] as const) {
      await h.database.db.execute(sql`
        INSERT INTO portal_links (token_hash, project_id, user_id, created_at, expires_at, session_expires_at)
        VALUES (${hash}, ${t.projectId}, '42', ${expired}::timestamptz, ${expired}::timestamptz, ${session}::timestamptz)`);
    }
    const pruner = new HistoryPruner(new RetentionStore(h.database.db), { now: () => new Date(now) }, createLogger('silent'), {
      retentionMs: 30 * DAY,
      intervalMs: 60_000,
      batchSize: 1,
    });
    expect(await pruner.pruneOnce()).toMatchObject({ payLinks: 2, portalLinks: 2 });
    const hashes = async (query: ReturnType<typeof sql>) => rowsOf<{ h: string }>(await h.database.db.execute(query)).map((r) => r.h);
    expect(await hashes(sql`SELECT id_hash AS h FROM pay_links WHERE project_id = ${t.projectId} ORDER BY id_hash`)).toStrictEqual(['pay-expired-lately', 'pay-open']);
    expect(await hashes(sql`SELECT token_hash AS h FROM portal_links WHERE project_id = ${t.projectId} ORDER BY token_hash`)).toStrictEqual([
      'portal-recent',
      'portal-session-lately',
    ]);
    expect(await pruner.pruneOnce()).toMatchObject({ payLinks: 0, portalLinks: 0 });
  });
});
