import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveUpdates } from '../../src/live/live-updates.js';
import { rowsOf } from '../../src/database/db.js';
import { createMembership } from '../support/api.js';
import { future, type Tenant } from '../support/harness.js';
import { createLiveHarness, LiveClient, type LiveHarness } from '../live/live-harness.js';
import { markWrites } from '../../src/database/wakeups.js';
import { eventually } from '../support/webhook-harness.js';

/**
 * The broadcaster's claim (one UPDATE … RETURNING over a SKIP LOCKED subquery): several
 * broadcasters on one database, as several nodes without Redis are, emit each event once
 * between them. On PostgreSQL their claims really race; on PGlite they interleave.
 */

let lh: LiveHarness;
beforeAll(async () => {
  lh = await createLiveHarness();
});
afterAll(() => lh.close());

async function extend(t: Tenant, userId: string, days: number) {
  const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${userId}/extend`, payload: { extend: future(days).iso } });
  expect(res.statusCode, res.body).toBe(200);
}

/** Writes an event the way a service's outbox insert does. */
async function insertEvent(t: Tenant, type: string, data: Record<string, unknown>): Promise<string> {
  const [row] = rowsOf<{ id: string }>(
    await lh.h.database.db.execute(markWrites(sql`INSERT INTO events (project_id, type, data) VALUES (${t.projectId}, ${type}, ${JSON.stringify(data)}::jsonb) RETURNING id`, ['events'])),
  );
  return row!.id;
}

describe('several broadcasters on one database', () => {
  it('claim each event once: without Redis, every event reaches the sockets of exactly one of them', async () => {
    const t = await lh.tenant();
    // A second gateway (another "node") on the same database, on an HTTP server of its own.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const second = await startLiveUpdates(server, lh.h.container);
    const onSecond = new LiveClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { token: t.key, project_id: t.projectId }, ['websocket']);
    try {
      const onFirst = await lh.connect(t);
      await onFirst.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed');
      await onSecond.ready();
      await onSecond.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed');
      const members = await Promise.all(Array.from({ length: 5 }, () => createMembership(t)));
      // Concurrent changes, so that both broadcasters have claims to race for.
      await Promise.all(members.flatMap((m) => [40, 41, 42, 43].map((days) => extend(t, m.user_id, days))));
      const total = members.length * 5; // a created and four extended per member
      const ids = () => [...onFirst.events(), ...onSecond.events()].map((e) => e.payload.event_id);
      // Polled, not onFirst.until: that re-checks only when onFirst receives something, so an
      // event that went to onSecond last left it sleeping until its deadline (5-15 s a run).
      await eventually(() => ids().length >= total, `${total} events across both nodes`, 10_000);
      // Two events more: all arrived, the count is total + 2 only if nothing came twice (and a
      // duplicate that did come shows in the set's size).
      await insertEvent(t, 'membership.expired', { membership: {} });
      await insertEvent(t, 'membership.expired', { membership: {} });
      await eventually(() => ids().length >= total + 2, 'the last two events');
      expect(ids()).toHaveLength(total + 2);
      expect(new Set(ids()).size).toBe(total + 2);
    } finally {
      onSecond.socket.disconnect();
      await second.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
